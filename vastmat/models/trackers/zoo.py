"""The tracking-by-detection trackers of the model zoo, listed from the registry (plugins included).

A tracker joins the zoo benchmark (``tools/zoo_benchmark.py``), the sweeps and the video demo by declaring
``zoo_name`` on its class: its constructor's defaults are the official settings (reference/trackers.md), and it
accepts a ``matcher``. Nothing else lists trackers by hand.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

from vastmat.registry import MODELS

from .base_tracker import BaseTracker


@dataclass(frozen=True)
class ZooTracker:
    """One tracker of the zoo: its display name and registered type."""

    name: str
    type: str

    def config(self, matcher: dict | None = None) -> dict:
        """``model.tracker`` with the official defaults and, when given, ``matcher`` instead of the original one."""
        return dict(type=self.type) if matcher is None else dict(type=self.type, matcher=matcher)


def zoo_trackers() -> list[ZooTracker]:
    """Every registered :class:`BaseTracker` with a ``zoo_name`` and a ``matcher`` argument, sorted by name."""
    MODELS.get('BYTETracker')  # the first lookup loads the plugins (vastmat.plugins entry points)
    found = {}
    for type_name, cls in MODELS.module_dict.items():
        if not (inspect.isclass(cls) and issubclass(cls, BaseTracker) and getattr(cls, 'zoo_name', None)):
            continue
        if 'matcher' not in inspect.signature(cls.__init__).parameters:
            raise TypeError(f'{cls.__module__}.{cls.__name__} declares zoo_name but takes no matcher argument')
        found[cls.zoo_name] = ZooTracker(cls.zoo_name, type_name)
    return [found[name] for name in sorted(found)]
