"""The trackers of the model zoo, listed from the registry (plugins included).

A tracker joins the zoo benchmark (``tools/zoo_benchmark.py``) by declaring ``zoo_name`` on its class; its
constructor's defaults are the official settings (reference/trackers.md). What the zoo must train for it on the demo
data is declared beside it, on the class:

* ``zoo_demo_config``: the config (a path under ``configs/``, or absolute) that trains the tracker's whole model
  (a joint or end-to-end model) on the demo data and tracks with it; None: the tracker runs on the demo detector's
  cached detections;
* ``zoo_demo_parts``: for a tracker on cached detections, the learned inputs it reads and the config that trains
  each: ``{'features': REID_CONFIG}`` (appearance features appended to the detections), ``{'motion':
  D2MP_CONFIG}`` (the tracker's ``motion`` model);
* ``zoo_checkpoint_of``: the zoo name whose trained checkpoint this tracker tests (no training of its own).

Nothing else lists trackers by hand.
"""
from __future__ import annotations

import inspect
import os.path as osp
from dataclasses import dataclass, field

from vastmat.registry import MODELS
from vastmat.utils.package_configs import config_dir

# the shipped configs (the demo configs the classes name are relative to it)
CONFIG_ROOT = config_dir()


def config_path(path: str) -> str:
    """A declared config path: absolute as given, else under ``configs/``."""
    return path if osp.isabs(path) else osp.join(CONFIG_ROOT, path)


@dataclass(frozen=True)
class ZooTracker:
    """One tracker of the zoo: its display name, registered type and what the zoo trains for it."""

    name: str
    type: str
    takes_matcher: bool = True
    demo_config: str | None = None
    demo_parts: dict[str, str] = field(default_factory=dict)
    checkpoint_of: str | None = None

    @property
    def on_cached_detections(self) -> bool:
        """Tracks the demo detector's cached detections (False: its own model detects, or another's checkpoint)."""
        return self.demo_config is None

    def config(self, matcher: dict | None = None) -> dict:
        """``model.tracker`` with the official defaults and, when given, ``matcher`` instead of the original one."""
        if matcher is not None and not self.takes_matcher:
            raise ValueError(f'{self.name} ({self.type}) takes no matcher')
        return dict(type=self.type) if matcher is None else dict(type=self.type, matcher=matcher)


def zoo_trackers() -> list[ZooTracker]:
    """Every registered tracker class with a ``zoo_name``, sorted by name."""
    MODELS.get('BYTETracker')  # the first lookup loads the plugins (vastmat.plugins entry points)
    found = {}
    for type_name, cls in MODELS.module_dict.items():
        name = getattr(cls, 'zoo_name', None) if inspect.isclass(cls) else None
        if not name:
            continue
        demo_config = getattr(cls, 'zoo_demo_config', None)
        parts = dict(getattr(cls, 'zoo_demo_parts', None) or {})
        found[name] = ZooTracker(
            name, type_name, takes_matcher='matcher' in inspect.signature(cls.__init__).parameters,
            demo_config=config_path(demo_config) if demo_config else None,
            demo_parts={key: config_path(value) for key, value in parts.items()},
            checkpoint_of=getattr(cls, 'zoo_checkpoint_of', None))
    return [found[name] for name in sorted(found)]
