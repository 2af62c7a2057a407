"""Similarity matchers (DESIGN.md section 4): ``matcher(tracks, dets, num_high_conf=None, **context) -> Similarity``
(``context``: the per-track entries of :class:`.context.FrameContext` a matcher lists in ``context_keys``).

Boxes are ``(n, 4)`` and ``(m, 4)`` ``x1, y1, x2, y2`` arrays (numpy, float64 by default, or torch tensors);
``scores`` is ``(n, m)`` in [0, 1] and ``gate`` an ``(n, m)`` bool mask of allowed pairs, or None. Trackers use
``1 - scores`` where the original code used ``1 - IoU``.

Signed scores (GIoU, DIoU, CIoU, EIoU) are mapped to [0, 1] by ``(x + 1) / 2``; CIoU and EIoU can fall below -1
(their penalties add up to more than 2), so their mapped values are also clipped at 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from vastmat.registry import MATCHERS

from vastmat.structures.pair_geometry import CDIST_MIN_PAIRS, PairGeometry
from vastmat.structures.pair_kernels import cda_similarity, mean_center_similarity


@dataclass
class Similarity:
    """A similarity matrix, the mask of pairs a gate allows (None: no gate) and the pair geometry the matcher built
    (None for empty pairs), which a tracker's own gate on the same boxes reuses."""

    scores: Any
    gate: Any | None = None
    geometry: PairGeometry | None = None

    def gated_scores(self) -> Any:
        """``scores`` with 0 where the gate rejects a pair (the single matrix ByteTrack, DiffMOT and JDE slice per
        stage)."""
        return self.scores if self.gate is None else self.scores * self.gate

    def cost(self, rejected_cost: float = 1.0) -> Any:
        """``1 - scores``, with ``rejected_cost`` where the gate rejects a pair."""
        cost = 1.0 - self.scores
        if self.gate is not None:
            cost = cost * self.gate + rejected_cost * ~self.gate
        return cost


def _as_boxes(boxes: Any) -> Any:
    """(k, 4) float64 numpy array, or the torch tensor as it is."""
    if hasattr(boxes, 'dim'):
        return boxes.reshape(-1, 4)
    return np.asarray(boxes, dtype=np.float64).reshape(-1, 4)


class BaseMatcher:
    """Builds the pair geometry, the scores of a subclass and the optional gate.

    Args:
        plus_one: the +1 pixel convention of the original trackers' IoU (``cython_bbox``).
        gate: a gate config (e.g. ``dict(type='NormDIoUGate', thr=0.10)``) or object; it applies its own
            ``plus_one``, whatever the matcher's.

    ``context_keys``: the per-track frame-context entries (``context.TRACK_CONTEXT_KEYS``) the matcher reads; trackers
    build and pass only those. Keys a matcher does not read reach ``scores`` in ``**context`` and are ignored there.
    """

    context_keys: tuple[str, ...] = ()

    def __init__(self, plus_one: bool = False, gate: dict | Any | None = None) -> None:
        self.plus_one = plus_one
        self.gate = MATCHERS.build(gate) if isinstance(gate, dict) else gate

    def __call__(self, tracks: Any, dets: Any, num_high_conf: int | None = None, **terms: Any) -> Similarity:
        tracks, dets = _as_boxes(tracks), _as_boxes(dets)
        if len(tracks) == 0 or len(dets) == 0:
            empty = np.zeros((len(tracks), len(dets))) if isinstance(tracks, np.ndarray) else tracks.new_zeros(
                (len(tracks), len(dets)))
            return Similarity(empty, empty > 0 if self.gate is not None else None)
        geometry = PairGeometry(tracks, dets, self.plus_one)
        scores = self.scores(geometry, num_high_conf=num_high_conf, **terms)
        gate = None if self.gate is None else self.gate(tracks, dets, geometry)
        return Similarity(scores, gate, geometry)

    def scores(self, g: PairGeometry, **context: Any) -> Any:
        raise NotImplementedError


def _normalized(x: Any, g: PairGeometry) -> Any:
    return g.xp.clip((x + 1.0) / 2.0, 0.0, 1.0)


def diou(g: PairGeometry) -> Any:
    """Distance-IoU (Zheng et al. 2020), in (-1, 1]."""
    return g.iou - g.center_dist2 / g.enclose_diag2


@MATCHERS.register_module()
class IoU(BaseMatcher):
    """Intersection over union."""

    def scores(self, g: PairGeometry, **context: Any) -> Any:
        return g.iou


@MATCHERS.register_module()
class GIoU(BaseMatcher):
    """Generalized IoU (Rezatofighi et al. 2019), mapped to [0, 1]."""

    def scores(self, g: PairGeometry, **context: Any) -> Any:
        enclose = g.enclose_w * g.enclose_h
        return _normalized(g.iou - (enclose - g.union) / enclose, g)


@MATCHERS.register_module()
class DIoU(BaseMatcher):
    """Distance-IoU, mapped to [0, 1]."""

    def scores(self, g: PairGeometry, **context: Any) -> Any:
        return _normalized(diou(g), g)


@MATCHERS.register_module()
class CIoU(BaseMatcher):
    """Complete-IoU (Zheng et al. 2020): DIoU minus the aspect-ratio term ``alpha * v``, mapped to [0, 1]."""

    def scores(self, g: PairGeometry, **context: Any) -> Any:
        xp = g.xp
        v = (4 / math.pi ** 2) * (xp.atan(g.w_b / g.h_b) - xp.atan(g.w_a / g.h_a)) ** 2
        alpha = v / xp.clip((1 - g.iou) + v, 1e-300, None)  # identical boxes: v = 0 and alpha * v = 0
        return _normalized(diou(g) - alpha * v, g)


@MATCHERS.register_module()
class EIoU(BaseMatcher):
    """Efficient-IoU (Zhang et al. 2022): DIoU minus width and height differences over the enclosing box's,
    mapped to [0, 1]."""

    def scores(self, g: PairGeometry, **context: Any) -> Any:
        width_term = (g.w_a - g.w_b) ** 2 / g.enclose_w ** 2
        height_term = (g.h_a - g.h_b) ** 2 / g.enclose_h ** 2
        return _normalized(diou(g) - width_term - height_term, g)


CENTER_DENOMINATORS = ('mean', 'min', 'max', 'enclosing')


def small_mean_center_ratio(g: PairGeometry) -> Any:
    """``d / ((diag_a + diag_b) / 2)`` of every pair, a fresh numpy ``(n, m)`` array, in few array operations (for
    a tracker's frame: numpy and fewer than ``CDIST_MIN_PAIRS`` pairs). With centre *sums* (twice the centres),
    ``|sum_a - sum_b| / (diag_a + diag_b)`` is that ratio with no halving."""
    ratio = np.hypot((g.ax1 + g.ax2) - (g.bx1 + g.bx2), (g.ay1 + g.ay2) - (g.by1 + g.by2))
    ratio /= g.diag_a + g.diag_b
    return ratio


def is_small_mean(g: PairGeometry, denominator: str) -> bool:
    """Whether :func:`small_mean_center_ratio` serves this call."""
    return denominator == 'mean' and g.is_numpy and g.a.shape[0] * g.b.shape[0] < CDIST_MIN_PAIRS


def center_scale(g: PairGeometry, denominator: str, weight: float = 1.0) -> Any:
    """The denominator ``D`` (the mean, min or max of the two diagonals, or the enclosing box's diagonal) divided by
    ``weight``, so that ``weight * (1 - d / D) = weight - d / center_scale``."""
    xp = g.xp
    if denominator == 'mean':
        # weight * (1 - d / ((da + db) / 2)) = weight - d / ((da + db) / (2 * weight))
        return g.diag_a / (2.0 * weight) + g.diag_b / (2.0 * weight)
    if denominator == 'min':
        return xp.minimum(g.diag_a, g.diag_b) / weight
    if denominator == 'max':
        return xp.maximum(g.diag_a, g.diag_b) / weight
    if denominator == 'enclosing':
        return xp.sqrt(g.enclose_diag2) / weight
    raise ValueError(f'center similarity denominator must be one of {CENTER_DENOMINATORS}, got {denominator!r}')


def center_similarity(g: PairGeometry, denominator: str = 'mean', weight: float = 1.0) -> Any:
    """``weight * max(0, 1 - d / D)``: d the centre distance, D the mean (default), min or max of the two diagonals
    or the diagonal of the enclosing box.

    float64 numpy boxes with the mean denominator (the trackers' case) take one compiled loop
    (:func:`.pair_kernels.mean_center_similarity`, the same operations), so that CDA costs about what IoU does;
    otherwise the numpy path works in place on a fresh distance matrix (a handful of passes over the (n, m) array).
    """
    if denominator == 'mean' and g.compiled:
        return mean_center_similarity(g.a, g.b, g.one, weight)
    if is_small_mean(g, denominator):
        ratio = small_mean_center_ratio(g)
        np.subtract(1.0, ratio, out=ratio)
        np.maximum(ratio, 0.0, out=ratio)
        if weight != 1.0:
            ratio *= weight
        return ratio
    scale = center_scale(g, denominator, weight)
    distance = g.center_dist
    if isinstance(distance, np.ndarray):
        out = np.divide(distance, scale)
        np.subtract(weight, out, out=out)
        return np.maximum(out, 0.0, out=out)
    return g.xp.clip(weight - distance / scale, 0.0, None)


@MATCHERS.register_module()
class CenterSim(BaseMatcher):
    """Centre similarity: positive for disjoint boxes whose centres are closer than the mean diagonal."""

    def __init__(self, denominator: str = 'mean', **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if denominator not in CENTER_DENOMINATORS:
            raise ValueError(f'CenterSim: denominator must be one of {CENTER_DENOMINATORS}, got {denominator!r}')
        self.denominator = denominator

    def scores(self, g: PairGeometry, **context: Any) -> Any:
        return center_similarity(g, self.denominator)


CDA_MODES = ('fixed', 'forward', 'reverse')


@MATCHERS.register_module()
class CDA(BaseMatcher):
    """Centre-distance-aware association: ``S = alpha * IoU + (1 - alpha) * CenterSim`` (paper section 4).

    Args:
        mode: ``fixed`` (alpha constant), ``forward`` (``alpha(N) = clip(alpha_ref + k (N - N_ref))``: more IoU in
            dense frames) or ``reverse`` (the sign of k flipped); N = high-confidence detections of the frame.
        alpha: the fixed alpha (paper default 0.25).
        k, n_ref, alpha_ref, alpha_min, alpha_max: the adaptive schedule (paper: 0.05, 10, 0.5, 0, 1).
        center_denominator: CenterSim's denominator.
    """

    def __init__(self, mode: str = 'fixed', alpha: float = 0.25, k: float = 0.05, n_ref: float = 10,
                 alpha_ref: float = 0.5, alpha_min: float = 0.0, alpha_max: float = 1.0,
                 center_denominator: str = 'mean', **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if mode not in CDA_MODES:
            raise ValueError(f'CDA: mode must be one of {CDA_MODES}, got {mode!r}')
        if not 0.0 <= alpha_min <= alpha_max <= 1.0 or not 0.0 <= alpha <= 1.0:
            raise ValueError('CDA: need 0 <= alpha <= 1 and 0 <= alpha_min <= alpha_max <= 1')
        if center_denominator not in CENTER_DENOMINATORS:
            raise ValueError(f'CDA: center_denominator must be one of {CENTER_DENOMINATORS}')
        self.mode, self.alpha, self.k, self.n_ref = mode, alpha, k, n_ref
        self.alpha_ref, self.alpha_min, self.alpha_max = alpha_ref, alpha_min, alpha_max
        self.center_denominator = center_denominator

    def alpha_for(self, num_high_conf: int | None) -> float:
        """The IoU weight for a frame with ``num_high_conf`` high-confidence detections."""
        if self.mode == 'fixed':
            return self.alpha
        if num_high_conf is None:
            raise ValueError(f'CDA(mode={self.mode!r}) needs num_high_conf, the number of high-confidence '
                             'detections of the frame')
        sign = 1.0 if self.mode == 'forward' else -1.0
        return float(min(max(self.alpha_ref + sign * self.k * (num_high_conf - self.n_ref), self.alpha_min),
                         self.alpha_max))

    def scores(self, g: PairGeometry, num_high_conf: int | None = None, **context: Any) -> Any:
        alpha = self.alpha_for(num_high_conf)
        if alpha == 1.0:
            return g.iou
        if self.center_denominator == 'mean' and g.compiled and alpha != 0.0:
            return cda_similarity(g.a, g.b, g.one, alpha)  # one compiled loop, the operations below
        weighted_center = center_similarity(g, self.center_denominator, weight=1.0 - alpha)
        if alpha == 0.0:
            return weighted_center
        if isinstance(weighted_center, np.ndarray):
            weighted_center += alpha * g.iou
            return weighted_center
        return weighted_center + alpha * g.iou


@MATCHERS.register_module()
class HMIoU(BaseMatcher):
    """TrackTrack's height-modulated IoU: ``HIoU * IoU``, HIoU = vertical overlap / vertical union (HIoU without
    the +1 convention, IoU with it when ``plus_one``, as the original)."""

    def scores(self, g: PairGeometry, **context: Any) -> Any:
        xp = g.xp
        overlap = xp.clip(xp.minimum(g.ay2, g.by2) - xp.maximum(g.ay1, g.by1), 0.0, None)
        union = xp.maximum(g.ay2, g.by2) - xp.minimum(g.ay1, g.by1)
        return overlap / union * g.iou


@MATCHERS.register_module()
class Fused(BaseMatcher):
    """A geometric matcher fused with other distance terms: ``S = clip(1 - sum_k w_k d_k, 0, 1)``, with
    ``d_geometric = 1 - S_geometric`` and the other ``(n, m)`` distances passed to the call by name.

    TrackTrack's cost, for example::

        dict(type='Fused', geometric=dict(type='HMIoU', plus_one=True),
             weights=dict(geometric=0.5, appearance=0.5, confidence=0.1, direction=0.05))
        matcher(tracks, dets, appearance=cos_dist, confidence=conf_dist, direction=angle_dist)
    """

    def __init__(self, geometric: dict | None = None, weights: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.geometric = MATCHERS.build(geometric or dict(type='IoU'))
        # the per-track context the geometric matcher reads is asked of the tracker and passed on to it
        self.context_keys = tuple(getattr(self.geometric, 'context_keys', ()))
        self.weights = dict(weights if weights is not None else dict(geometric=1.0))
        if 'geometric' not in self.weights:
            raise KeyError("Fused: weights need a 'geometric' entry")

    def scores(self, g: PairGeometry, num_high_conf: int | None = None, **terms: Any) -> Any:
        if self.geometric.plus_one != g.plus_one:  # the geometric term keeps its own pixel convention
            g = PairGeometry(g.a, g.b, self.geometric.plus_one)
        geometric = self.geometric.scores(g, num_high_conf=num_high_conf,
                                          **{key: terms[key] for key in self.context_keys if key in terms})
        cost = self.weights['geometric'] * (1.0 - geometric)
        for name, weight in self.weights.items():
            if name == 'geometric' or weight == 0:
                continue
            if name not in terms:
                raise KeyError(f"Fused: the term {name!r} has weight {weight} but was not passed to the call")
            cost = cost + weight * terms[name]
        return g.xp.clip(1.0 - cost, 0.0, 1.0)
