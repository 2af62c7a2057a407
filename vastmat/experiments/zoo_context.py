"""What every zoo run of one protocol shares (:class:`ZooContext`): its data and work dir, how its trainings run, the
trainings done so far, and where and on which grid its test thresholds are calibrated (:mod:`.zoo_calibration`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from mmengine.config import Config

from .zoo_calibration import THRESHOLD_SCALES
from .zoo_training import Training


@dataclass
class ZooContext:
    """What every run of one protocol shares."""

    data_root: str
    protocol: str
    videos: list[str]
    work_dir: str  # W/<protocol>
    preset: str = 'vastmat'
    train_iters: int | None = None  # every training's length (None: each config's)
    log: Callable[[str], None] = print
    trainings: dict[str, Training] = field(default_factory=dict)  # by config path: each part trained once
    recipe: Callable[[Config], Config] | None = None  # changes every training config (the overfit benchmark's)
    calibration_split: str | None = 'dev'  # where the thresholds are calibrated (None: the configs' own)
    threshold_scales: tuple[float, ...] = THRESHOLD_SCALES
    own_threshold_grids: bool = True  # a config's zoo_threshold_scales (False: threshold_scales for every threshold)
    adaptive_threads: bool = False  # trainings share the cores with others (zoo_config's AdaptiveThreadsHook)
    seed: int | None = None  # every training's randomness seed (None: each config's)
