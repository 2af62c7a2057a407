"""Pairwise box geometry for similarity matrices, vectorised over all (track, detection) pairs.

The lowest layer: the association matchers and gates, the dataset audit and the trackers' bookkeeping all read
their pair quantities (IoU, centre distances, enclosing boxes) from here.

Boxes are ``(n, 4)`` / ``(m, 4)`` arrays ``x1, y1, x2, y2``; the pairwise quantities are ``(n, m)`` arrays, computed
on first use and kept, so a matcher pays only for what it reads. The same code runs on numpy arrays and on torch
tensors (:func:`ops`). ``plus_one`` is the Fast R-CNN pixel convention of the original ByteTrack / FairMOT / DiffMOT /
TrackTrack code (``cython_bbox``): a box spans ``x2 - x1 + 1`` pixels.
"""
from __future__ import annotations

from functools import cached_property
from types import SimpleNamespace
from typing import Any

import numpy as np

from .pair_kernels import iou_matrix

_NUMPY_OPS = SimpleNamespace(maximum=np.maximum, minimum=np.minimum, clip=np.clip, sqrt=np.sqrt, atan=np.arctan,
                             relu_=lambda x: np.maximum(x, 0.0, out=x))


def ops(array: Any) -> SimpleNamespace:
    """numpy or torch versions of the few element-wise functions the matchers need."""
    if isinstance(array, np.ndarray):
        return _NUMPY_OPS
    import torch
    return SimpleNamespace(maximum=torch.maximum, minimum=torch.minimum,
                           clip=lambda x, lo, hi: torch.clamp(x, lo, hi), sqrt=torch.sqrt, atan=torch.atan,
                           relu_=lambda x: x.clamp_(min=0.0))


_COLUMNS = frozenset(('ax1', 'ay1', 'ax2', 'ay2', 'bx1', 'by1', 'bx2', 'by2', 'w_a', 'h_a', 'w_b', 'h_b'))

# below this many pairs, broadcasting beats scipy's cdist (whose call overhead dominates small matrices)
CDIST_MIN_PAIRS = 4096


class PairGeometry:
    """Quantities shared by the IoU family and the centre similarities for one (tracks, detections) pair.

    Trackers call a matcher once or a few times per frame on small matrices (tens of boxes), where numpy's per-call
    overhead dominates: for float64 numpy boxes (``compiled``) the IoU is one compiled loop (:mod:`.pair_kernels`,
    the same bits) and the box columns are split only when another quantity reads them; the array path keeps the
    number of operations low (views instead of copies for the track columns, one in-place chain per quantity).
    """

    def __init__(self, a: Any, b: Any, plus_one: bool = False) -> None:
        self.a, self.b, self.plus_one = a, b, plus_one
        self.is_numpy = isinstance(a, np.ndarray)
        self.xp = ops(a)
        self.one = 1.0 if plus_one else 0.0
        # whether the compiled kernels (:mod:`.pair_kernels`) serve these boxes: float64 numpy arrays
        self.compiled = self.is_numpy and a.dtype == np.float64 and b.dtype == np.float64

    def __getattr__(self, name: str) -> Any:
        """The box columns, split on first use (``ax1`` ... ``h_b``): a matcher served by the compiled kernels
        (:mod:`.pair_kernels`) never reads them, and splitting costs ~10 numpy calls."""
        if name not in _COLUMNS:
            raise AttributeError(f'{type(self).__name__!r} object has no attribute {name!r}')
        a, b = self.a, self.b
        # detections as contiguous rows (the inner loop of every (n, m) operation runs over them); tracks as (n, 1)
        # column views
        bt = b.T.copy() if self.is_numpy else b.T.contiguous()
        self.ax1, self.ay1, self.ax2, self.ay2 = a[:, 0:1], a[:, 1:2], a[:, 2:3], a[:, 3:4]  # (n, 1)
        self.bx1, self.by1, self.bx2, self.by2 = bt[0][None], bt[1][None], bt[2][None], bt[3][None]  # (1, m)
        self.w_a, self.h_a = self.ax2 - self.ax1 + self.one, self.ay2 - self.ay1 + self.one  # (n, 1)
        self.w_b, self.h_b = self.bx2 - self.bx1 + self.one, self.by2 - self.by1 + self.one  # (1, m)
        return self.__dict__[name]

    @cached_property
    def inter(self) -> Any:
        """Intersection area; with ``plus_one`` as cython_bbox: ``min(x2) - max(x1) + 1``."""
        xp = self.xp
        iw = xp.minimum(self.ax2, self.bx2) - xp.maximum(self.ax1, self.bx1)
        ih = xp.minimum(self.ay2, self.by2) - xp.maximum(self.ay1, self.by1)
        if self.plus_one:
            iw += 1.0
            ih += 1.0
        xp.relu_(iw)
        xp.relu_(ih)
        iw *= ih
        return iw

    @cached_property
    def union(self) -> Any:
        return self.w_a * self.h_a + self.w_b * self.h_b - self.inter

    @cached_property
    def iou(self) -> Any:
        if self.compiled:
            return iou_matrix(self.a, self.b, self.one)
        return self.inter / self.union

    @cached_property
    def center_dist(self) -> Any:
        """Distance of the box centres (numpy: scipy's cdist for large matrices, broadcasting for small ones)."""
        if not self.is_numpy:
            return self.xp.sqrt(self.center_dist2)
        a, b = self.a, self.b
        if len(a) * len(b) >= CDIST_MIN_PAIRS:
            from scipy.spatial.distance import cdist
            return cdist((a[:, :2] + a[:, 2:]) / 2, (b[:, :2] + b[:, 2:]) / 2)
        dx = (self.ax1 + self.ax2) / 2 - (self.bx1 + self.bx2) / 2
        return np.hypot(dx, (self.ay1 + self.ay2) / 2 - (self.by1 + self.by2) / 2, out=dx)

    @cached_property
    def center_dist2(self) -> Any:
        """Squared distance of the box centres."""
        dx = (self.ax1 + self.ax2) / 2 - (self.bx1 + self.bx2) / 2
        dy = (self.ay1 + self.ay2) / 2 - (self.by1 + self.by2) / 2
        dx *= dx
        dy *= dy
        dx += dy
        return dx

    @cached_property
    def enclose_w(self) -> Any:
        return self.xp.maximum(self.ax2, self.bx2) - self.xp.minimum(self.ax1, self.bx1) + self.one

    @cached_property
    def enclose_h(self) -> Any:
        return self.xp.maximum(self.ay2, self.by2) - self.xp.minimum(self.ay1, self.by1) + self.one

    @cached_property
    def enclose_diag2(self) -> Any:
        return self.enclose_w ** 2 + self.enclose_h ** 2

    @cached_property
    def diag_a(self) -> Any:
        return np.hypot(self.w_a, self.h_a) if self.is_numpy else self.xp.sqrt(self.w_a ** 2 + self.h_a ** 2)

    @cached_property
    def diag_b(self) -> Any:
        return np.hypot(self.w_b, self.h_b) if self.is_numpy else self.xp.sqrt(self.w_b ** 2 + self.h_b ** 2)
