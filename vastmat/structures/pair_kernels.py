"""Compiled (numba) loops for the pair quantities of a tracker's frame: IoU, the mean-diagonal centre similarity and
CDA's blend of the two, over ``(n, 4)`` x ``(m, 4)`` float64 boxes ``x1, y1, x2, y2``.

Why compiled: a tracker's frame holds tens of boxes, where each numpy operation costs its ~1-3 us call overhead, not
its arithmetic; :class:`.PairGeometry` builds an IoU matrix from ~15 of them (~25 us) where one loop takes ~2 us
(the per-frame time of the trackers is that overhead). No well-kept library offers these small pairwise
kernels (scipy's cdist has no IoU and the same call overhead; torchvision's box_iou runs on tensors and has no +1
pixel convention). Each loop performs the numpy formula's operations in the same order, so the results equal the
numpy path's bit for bit (tests/models/association/test_association.py checks them on random boxes).

``one`` is 1.0 for the +1 pixel convention of the original trackers (``cython_bbox``: a box spans ``x2 - x1 + 1``
pixels), else 0.0. ``cache=True`` keeps the compiled code in ``__pycache__`` beside this file: the first process
compiles it (~1 s per kernel), later ones load it.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline='always')
def _area(box: np.ndarray, one: float) -> float:  # pragma: no cover (compiled)
    return (box[2] - box[0] + one) * (box[3] - box[1] + one)


@njit(cache=True, nogil=True, inline='always')
def _iou(a: np.ndarray, area_a: float, b: np.ndarray, area_b: float, one: float) -> float:  # pragma: no cover
    """The intersection ``relu(min(x2) - max(x1) + one) * relu(min(y2) - max(y1) + one)`` over
    ``area_a + area_b - intersection`` (:class:`.PairGeometry`'s ``inter / union``)."""
    iw = min(a[2], b[2]) - max(a[0], b[0]) + one
    ih = min(a[3], b[3]) - max(a[1], b[1]) + one
    inter = max(iw, 0.0) * max(ih, 0.0)
    return inter / (area_a + area_b - inter)


@njit(cache=True, nogil=True, inline='always')
def _diagonal(box: np.ndarray, one: float) -> float:  # pragma: no cover (compiled)
    return math.hypot(box[2] - box[0] + one, box[3] - box[1] + one)


@njit(cache=True, nogil=True, inline='always')
def _center_similarity(a: np.ndarray, diag_a: float, b: np.ndarray, diag_b: float) -> float:  # pragma: no cover
    """``max(0, 1 - d / ((diag_a + diag_b) / 2))``, d the distance of the box centres, from centre sums over
    diagonal sums (``|sum_a - sum_b| / (diag_a + diag_b)``, no halving), as the numpy path."""
    ratio = math.hypot((a[0] + a[2]) - (b[0] + b[2]), (a[1] + a[3]) - (b[1] + b[3])) / (diag_a + diag_b)
    return max(1.0 - ratio, 0.0)


@njit(cache=True, nogil=True)
def iou_matrix(a: np.ndarray, b: np.ndarray, one: float) -> np.ndarray:  # pragma: no cover (compiled)
    """``(n, m)`` IoU."""
    n, m = a.shape[0], b.shape[0]
    out = np.empty((n, m))
    area_b = np.empty(m)
    for j in range(m):
        area_b[j] = _area(b[j], one)
    for i in range(n):
        area_a = _area(a[i], one)
        for j in range(m):
            out[i, j] = _iou(a[i], area_a, b[j], area_b[j], one)
    return out


@njit(cache=True, nogil=True)
def mean_center_similarity(a: np.ndarray, b: np.ndarray, one: float,
                           weight: float) -> np.ndarray:  # pragma: no cover (compiled)
    """``(n, m)`` ``weight * max(0, 1 - d / ((diag_a + diag_b) / 2))`` (CenterSim with the mean denominator)."""
    n, m = a.shape[0], b.shape[0]
    out = np.empty((n, m))
    diag_b = np.empty(m)
    for j in range(m):
        diag_b[j] = _diagonal(b[j], one)
    for i in range(n):
        diag_a = _diagonal(a[i], one)
        for j in range(m):
            similarity = _center_similarity(a[i], diag_a, b[j], diag_b[j])
            out[i, j] = similarity * weight if weight != 1.0 else similarity
    return out


@njit(cache=True, nogil=True)
def cda_similarity(a: np.ndarray, b: np.ndarray, one: float, alpha: float) -> np.ndarray:  # pragma: no cover
    """``(n, m)`` CDA ``(1 - alpha) * CenterSim + alpha * IoU`` (mean denominator), added in that order as
    :class:`~vastmat.models.association.matchers.CDA`'s numpy path."""
    n, m = a.shape[0], b.shape[0]
    out = np.empty((n, m))
    area_b, diag_b = np.empty(m), np.empty(m)
    center_weight = 1.0 - alpha
    for j in range(m):
        area_b[j], diag_b[j] = _area(b[j], one), _diagonal(b[j], one)
    for i in range(n):
        area_a, diag_a = _area(a[i], one), _diagonal(a[i], one)
        for j in range(m):
            center = _center_similarity(a[i], diag_a, b[j], diag_b[j])
            if center_weight != 1.0:
                center = center * center_weight
            out[i, j] = center + alpha * _iou(a[i], area_a, b[j], area_b[j], one)
    return out


@njit(cache=True, nogil=True)
def iou_distance_pairs(a: np.ndarray, b: np.ndarray, one: float,
                       thr: float) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover (compiled)
    """The pairs ``(i, j)`` with ``1 - IoU < thr``, in row-major order: the duplicate check of the ByteTrack family,
    in one compiled call."""
    return np.nonzero(1.0 - iou_matrix(a, b, one) < thr)
