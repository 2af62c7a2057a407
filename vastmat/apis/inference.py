"""Building a tracking model from its config and running it on cached detections without a runner.

The fast path of the zoo benchmark and of parameter sweeps: the videos' detections are read once, each frame goes
straight to :meth:`TrackingByDetection.track_video` (the same per-frame steps as ``tools/test.py``), and the tracks
come back as arrays; scoring is :mod:`vastmat.evaluation`'s.
"""
from __future__ import annotations

import os
import os.path as osp
from typing import Any, Iterator

import numpy as np
from mmengine.config import Config

from vastmat.datasets.detections import VideoDetections, cached_frames
from vastmat.datasets.formats import track_rows_to_results, write_results
from vastmat.datasets.sequences import load_sequence, parse_split_name, select_videos
from vastmat.structures.tracking import TrackingFrame


# the repository's configs (a source checkout: the package is installed in editable mode)
CONFIG_DIR = osp.join(osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))), 'configs')


def load_config(config: str | Config, cfg_options: dict | None = None) -> Config:
    """A config from a file (or a copy of one), with ``cfg_options`` merged (keys checked as on the command line)
    and the plugins' ``vastmat_adjust_config`` applied, as ``tools/test.py`` does."""
    from vastmat.engine.cli import check_cfg_options
    from vastmat.plugins import adjust_config
    cfg = Config.fromfile(config) if isinstance(config, str) else Config(config.to_dict(), filename=config.filename)
    if cfg_options:
        check_cfg_options(cfg, cfg_options)
        cfg.merge_from_dict(cfg_options)
    return adjust_config(cfg)


def matcher_fragment(name: str, **overrides: Any) -> dict:
    """The complete ``matcher`` dict of ``configs/matchers/<name>.py``, with ``overrides``."""
    from vastmat.utils.errors import UserInputError
    path = osp.join(CONFIG_DIR, 'matchers', f'{name}.py')
    if not osp.isfile(path):
        known = sorted(osp.splitext(f)[0] for f in os.listdir(osp.dirname(path)) if f.endswith('.py'))
        raise UserInputError(f'matcher {name!r}: no {path}; the fragments are {", ".join(known)}')
    return dict(Config.fromfile(path).matcher.to_dict(), **overrides)


def init_model(config: str | Config, checkpoint: str | None = None, device: str = 'cpu',
               cfg_options: dict | None = None, detector: bool = True) -> Any:
    """Build the config's MOT model (``cfg.model``) in eval mode, with the checkpoint's weights (weights-only).

    Args:
        detector: False drops ``model.detector`` (cached detections feed the tracker).
    """
    from mmengine.registry import init_default_scope
    from mmengine.runner import load_checkpoint

    import vastmat.engine  # noqa: F401  (weights-only checkpoint loading)
    from vastmat.registry import MODELS

    cfg = load_config(config, cfg_options)
    init_default_scope(cfg.get('default_scope', 'vastmat'))
    model_cfg = cfg.model.copy()
    if not detector and 'detector' in model_cfg:
        model_cfg.detector = None
    model = MODELS.build(model_cfg)
    if checkpoint is not None:
        load_checkpoint(model, checkpoint, map_location='cpu', logger='current')
    model.cfg = cfg
    return model.to(device).eval()


def video_list(data_root: str, split: str | None = None, videos: list[str] | None = None) -> list[str]:
    """The videos to track: ``videos`` if given, else those of ``split`` (``protocol1/test``), else all."""
    if videos:
        return list(videos)
    protocol, part = parse_split_name(split)
    return select_videos(data_root, protocol, part)


def cached_video_frames(data_root: str, det_root: str, name: str, stride: int = 1,
                        extra_det_roots: dict[str, str] | None = None) -> Iterator[TrackingFrame]:
    """The tracker inputs of video ``name`` of ``data_root`` (at ``stride``) from its cached detections in
    ``det_root`` and the named extra sets ``extra_det_roots``, each file read and checked once."""
    sequence = load_sequence(data_root, name, stride=stride, with_gt=False)
    tracked = sequence.source_frames()
    detections = VideoDetections.for_video(det_root, name, sequence.source_length, tracked)
    extra = {set_name: VideoDetections.for_video(root, name, sequence.source_length, tracked)
             for set_name, root in (extra_det_roots or {}).items()}
    return cached_frames(detections, name, tracked.tolist(), sequence.frame_rate or None, sequence.image_size,
                         extra)


def track_cached(model: Any, data_root: str, det_root: str, videos: list[str], stride: int = 1,
                 progress: Any = None, extra_det_roots: dict[str, str] | None = None) -> dict[str, np.ndarray]:
    """Track every video of ``videos`` on cached detections; ``{video: rows frame, id, x1, y1, x2, y2, score}``.

    Args:
        model: a :class:`TrackingByDetection` (its detector, if any, is not used).
        extra_det_roots: named extra detection sets (``dict(nms95=DIR)``), read like ``det_root``.
        progress: called with each finished video's name (e.g. a progress bar's advance).
    """
    out = {}
    for name in videos:
        out[name] = model.track_video(cached_video_frames(data_root, det_root, name, stride, extra_det_roots))
        if progress is not None:
            progress(name)
    return out


def track_and_score(model: Any, data_root: str, det_root: str, videos: list[str], out_dir: str,
                    preset: str = 'vastmat', progress: Any = None,
                    extra_det_roots: dict[str, str] | None = None) -> tuple[dict, float]:
    """Track ``videos`` on cached detections, write ``out_dir/results/<video>.txt`` and ``out_dir/metrics.json``
    (per video and COMBINED, TrackEval's names; written last, so its presence marks a finished run); returns the
    metrics and the tracking seconds."""
    import time

    from vastmat.evaluation.mot_eval import evaluate, sequence_specs
    from vastmat.utils.io import write_json_atomic
    start = time.perf_counter()
    tracks = track_cached(model, data_root, det_root, videos, progress=progress, extra_det_roots=extra_det_roots)
    seconds = time.perf_counter() - start
    results = osp.join(out_dir, 'results')
    write_results_folder(tracks, results)
    specs, _ = sequence_specs(data_root, results, videos)
    metrics = evaluate(specs, preset)
    write_json_atomic(metrics, osp.join(out_dir, 'metrics.json'))
    return metrics, seconds


def write_track_rows(rows: np.ndarray, path: str) -> None:
    """Write rows ``frame, id, x1, y1, x2, y2, score`` as a MOT results file (atomically)."""
    write_results(path, track_rows_to_results(rows), decimals=3)


def write_results_folder(tracks: dict[str, np.ndarray], folder: str) -> list[str]:
    """``folder/<video>.txt`` for every video; returns the paths."""
    paths = []
    for name, rows in tracks.items():
        path = osp.join(folder, f'{name}.txt')
        write_track_rows(rows, path)
        paths.append(path)
    return paths
