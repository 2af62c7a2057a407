"""Gates: masks of the (track, detection) pairs allowed to match, composable with any matcher (``gate=dict(...)``)."""
from __future__ import annotations

from typing import Any

from vastmat.registry import MATCHERS

from vastmat.structures.pair_geometry import PairGeometry
from .matchers import _as_boxes, diou


class BaseGate:
    """``gate.allowed(geometry)`` or ``gate(tracks, dets)``: True where a pair may match."""

    def __init__(self, thr: float, plus_one: bool = False) -> None:
        self.thr, self.plus_one = thr, plus_one

    def __call__(self, tracks: Any, dets: Any, geometry: PairGeometry | None = None) -> Any:
        """The mask of ``tracks`` x ``dets``; ``geometry``: these boxes' pair geometry if already built (a
        matcher's), used when its pixel convention is the gate's own."""
        if geometry is None or geometry.plus_one != self.plus_one:
            geometry = PairGeometry(_as_boxes(tracks), _as_boxes(dets), self.plus_one)
        return self.allowed(geometry)

    def allowed(self, g: PairGeometry) -> Any:
        raise NotImplementedError


@MATCHERS.register_module()
class NormDIoUGate(BaseGate):
    """Paper E.1: reject a pair when its normalized DIoU ``(DIoU + 1) / 2`` is <= ``thr`` (default 0.10)."""

    def __init__(self, thr: float = 0.10, plus_one: bool = False) -> None:
        super().__init__(thr, plus_one)

    def allowed(self, g: PairGeometry) -> Any:
        return (diou(g) + 1.0) / 2.0 > self.thr


@MATCHERS.register_module()
class IoUGate(BaseGate):
    """Reject a pair when its IoU is <= ``thr`` (TrackTrack sets such costs to 1 with thr 0.10)."""

    def allowed(self, g: PairGeometry) -> Any:
        return g.iou > self.thr
