"""Motion-adaptive CDA: CDA's IoU / centre-similarity weight set per track from the track's own motion and crowding.

``S_ij = a_i IoU_ij + (1 - a_i) CenterSim_ij`` with, per track ``i`` (row of the call)::

    r_i      = max(displacement_i, position_std_i) / diag_i           motion ratio (diag: the track box's diagonal)
    fast_i   = clip((r_i - r_low) / (r_high - r_low), 0, 1)           0: still, 1: fast for its size
    crowd_i  = #{detections j: d_ij < crowd_radius m_ij} - 1, >= 0   other detections near the track
    crowded_i = clip(crowd_i / crowd_full, 0, 1)                      (max with clip(N / n_full, 0, 1) if n_full)
    m_i      = fast_i (1 - crowded_i)                                 0: still or crowded, 1: fast and isolated
    a_i      = a_still - (a_still - a_fast) m_i                      IoU weight, from a_still down to a_fast

``d_ij`` is the centre distance and ``m_ij`` the mean of the two diagonals, so that with CenterSim's default
denominator ``d_ij / m_ij`` is the ratio CenterSim is made of (``CenterSim = max(0, 1 - d / m)``), computed once for
both. Crowding counts the call's *detections* (not the other tracks' predicted boxes): they are the candidates a
track competes for in this frame and their distances to the track are already the CenterSim ratio; the ``- 1``
discounts the track's own detection.

A still track (``r <= r_low``) or a track in a crowd (``crowd >= crowd_full``) gets ``a_still`` (IoU with the
default 1); a fast (``r >= r_high``) isolated (no other detection within ``crowd_radius``) track gets ``a_fast``
(CenterSim with the default 0). Extremes: ``r_high=inf`` (every ``fast = 0``) or ``a_fast = a_still = 1`` is IoU
exactly, ``a_fast = a_still = 0`` CenterSim exactly, ``a_fast = a_still = alpha`` fixed CDA; ``a_still < 1`` keeps
a share of the centre term on every track (a tracker whose other terms and thresholds favour it even on still
tracks, as TrackTrack's on AnimalTrack).

The per-track quantities come from the frame context (:class:`.context.FrameContext`): ``track_displacement`` and
``track_position_std``; a NaN entry is unknown, ``max`` ignores it. A track with neither (a NaN displacement and no or a
NaN std) gets the ``fallback`` CDA's frame weight ``alpha(N)``; when no track of the call has motion (a tracker that
passes none) the call *is* the fallback CDA's (adaptive CDA, forward, with the paper's schedule, by default).

Cost: on top of CDA's centre term, a handful of ``(n,)`` operations and one comparison of the ``(n, m)`` ratio matrix
per call; the trackers pay for building the per-track arrays (one pass over their tracks) only with a matcher that
lists them in ``context_keys``. Measured on AnimalTrack at 10 FPS (2-core machine, BYTETracker, tens of tracks per
frame, where each numpy call's fixed cost dominates): about 11-15 % of the tracking time over IoU, CDA about 3-5 %.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from vastmat.registry import MATCHERS

from vastmat.structures.pair_geometry import PairGeometry
from .context import TRACK_CONTEXT_KEYS
from .matchers import (CENTER_DENOMINATORS, CDA, BaseMatcher, center_scale, is_small_mean,
                       small_mean_center_ratio)


def center_ratio(g: PairGeometry, denominator: str = 'mean') -> Any:
    """``d / D`` of every pair, a fresh ``(n, m)`` array: ``max(0, 1 - center_ratio)`` is CenterSim, to the bit
    (:func:`.matchers.center_similarity`'s operations with weight 1)."""
    if is_small_mean(g, denominator):
        return small_mean_center_ratio(g)
    return g.center_dist / center_scale(g, denominator)


# The per-track rule runs once per frame on tens of tracks, where each numpy call's fixed cost dominates the
# matcher's time: np.interp gives each clipped linear ramp in one call (np.clip alone costs more than that).
_RAMP_UP, _RAMP_DOWN = np.array([0.0, 1.0]), np.array([1.0, 0.0])


def motion_adaptive_iou_weight(motion_ratio: np.ndarray, crowd: np.ndarray, r_low: float, r_high: float,
                               crowd_full: float, frame_crowded: float = 0.0, a_still: float = 1.0,
                               a_fast: float = 0.0) -> np.ndarray:
    """The rule's IoU weight ``a = a_still - (a_still - a_fast) fast (1 - crowded)`` per track (module docstring),
    from ``(n,)`` arrays: the motion ratios ``r`` (NaN: unknown, counted as fast) and the numbers of other detections
    near each track (``crowd``). ``frame_crowded`` in [0, 1] is a floor of every track's crowding (the frame term).
    ``r_high`` may be inf (no track is fast), ``crowd_full`` 0 (every track crowded) or inf (none)."""
    fast = np.interp(np.asarray(motion_ratio, np.float64), np.array([r_low, r_high]), _RAMP_UP)
    fast[np.isnan(fast)] = 1.0
    return a_still - (a_still - a_fast) * fast * _freedom(np.asarray(crowd, np.float64), crowd_full, frame_crowded)


def _freedom(crowd: np.ndarray, crowd_full: float, frame_crowded: float = 0.0, offset: float = 0.0) -> np.ndarray:
    """``1 - crowded = 1 - clip(crowd / crowd_full, frame_crowded, 1)`` of ``crowd - offset`` other detections."""
    if crowd_full == 0:
        return np.zeros(len(crowd))
    free = np.interp(crowd, np.array([offset, offset + crowd_full]), _RAMP_DOWN)  # crowd_full inf: all 1
    if frame_crowded > 0.0:
        np.minimum(free, 1.0 - frame_crowded, out=free)
    return free


@MATCHERS.register_module()
class MotionAdaptiveCDA(BaseMatcher):
    """CDA with a per-track IoU weight from the track's motion ratio and its local crowding (module docstring).

    The defaults are configs/matchers/cda_motion_adaptive.py's, chosen for ByteTrack on the selection half of
    AnimalTrack train (README, "A matcher that adapts to each track"); TrackTrack's config sets its own.

    Args:
        r_low: motion ratio (displacement or position std per frame over the track box's diagonal) up to which a
            track counts as still (``fast = 0``). Default 0. A Kalman filter's position std grows with the box's
            height, so with ByteTrack's or TrackTrack's filter the ratio has a floor of about 0.03 to 0.04 (steady
            state; more for new and lost tracks): below it, thresholds separate tracks by age and loss, not motion.
        r_high: motion ratio from which a track counts as fast (``fast = 1``); must exceed ``r_low`` and may be
            ``inf`` (no track is ever fast: every track gets ``a_still``). Default 0.05.
        crowd_radius: a detection is near a track when its centre distance is below ``crowd_radius`` times the
            mean of the two boxes' diagonals (whatever ``center_denominator``). Default 1.
        crowd_full: number of other detections near a track from which it is fully crowded (``a_still`` whatever
            its motion); 0: every track is crowded, None (or ``inf``): crowding is ignored. Default 4.
        n_full: optional frame term (None: off): a frame with ``num_high_conf >= n_full`` high-confidence detections
            makes every track crowded, fewer make them crowded by ``N / n_full`` at least (adaptive CDA's signal, more
            IoU in dense frames, as a floor of the local crowding).
        a_still: IoU weight of a still or crowded track (1: IoU; below 1 every track keeps ``1 - a_still`` of the
            centre term). Default 1.
        a_fast: IoU weight of a fast isolated track (0: CenterSim); ``0 <= a_fast <= a_still <= 1``; None: the
            fallback CDA's frame weight ``alpha(num_high_conf)`` (at most ``a_still``), adaptive CDA's rule for the
            isolated moving tracks. Default 0.25.
        fallback: the CDA config (or object) whose frame weight ``alpha(num_high_conf)`` goes to tracks without
            motion, and whose scores are the call's when no track has any; default adaptive CDA (forward, the paper's
            schedule). It takes this matcher's ``center_denominator``; its ``plus_one`` and gate are this matcher's.
            None: tracks without motion count as fast (``m = 1 - crowded``: the crowding alone decides).
        center_denominator: CenterSim's denominator (``mean``, ``min``, ``max``, ``enclosing``).
        plus_one, gate: as every matcher (:class:`.matchers.BaseMatcher`).
    """

    context_keys = TRACK_CONTEXT_KEYS

    def __init__(self, r_low: float = 0.0, r_high: float = 0.05, crowd_radius: float = 1.0,
                 crowd_full: float | None = 4.0, n_full: float | None = None, a_still: float = 1.0,
                 a_fast: float | None = 0.25,
                 fallback: dict | CDA | None = dict(type='CDA', mode='forward'), center_denominator: str = 'mean',
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        name = type(self).__name__
        if not (math.isfinite(r_low) and r_low < r_high) or math.isnan(r_high):
            raise ValueError(f'{name}: need a finite r_low < r_high (r_high may be inf), got r_low={r_low}, '
                             f'r_high={r_high}')
        if not crowd_radius > 0:
            raise ValueError(f'{name}: crowd_radius must be > 0, got {crowd_radius}')
        crowd_full = math.inf if crowd_full is None else crowd_full
        if not crowd_full >= 0:
            raise ValueError(f'{name}: crowd_full must be >= 0 (0: every track crowded, None: crowding ignored), '
                             f'got {crowd_full}')
        if n_full is not None and not n_full > 0:
            raise ValueError(f'{name}: n_full must be > 0 or None (no frame term), got {n_full}')
        if a_fast is None and not isinstance(fallback, (dict, CDA)):
            raise ValueError(f'{name}: a_fast=None takes the fallback CDA\'s frame weight alpha(N); give a fallback')
        if not 0.0 <= (0.0 if a_fast is None else a_fast) <= a_still <= 1.0:
            raise ValueError(f'{name}: need 0 <= a_fast <= a_still <= 1 (IoU weights of a fast isolated and of a '
                             f'still or crowded track), got a_fast={a_fast}, a_still={a_still}')
        if center_denominator not in CENTER_DENOMINATORS:
            raise ValueError(f'{name}: center_denominator must be one of {CENTER_DENOMINATORS}, got '
                             f'{center_denominator!r}')
        self.r_low, self.r_high = float(r_low), float(r_high)
        self.crowd_radius, self.crowd_full = float(crowd_radius), float(crowd_full)
        self.n_full, self.center_denominator = n_full, center_denominator
        self.a_still, self.a_fast = float(a_still), None if a_fast is None else float(a_fast)
        self._r_knots = np.array([self.r_low, self.r_high])
        # "near" counts include the track's own detection: crowd = near - 1 -> the ramp starts at near = 1
        self._near_knots = None if self.crowd_full == 0 else np.array([1.0, 1.0 + self.crowd_full])
        if isinstance(fallback, dict):
            given = dict(fallback)
            fallback = MATCHERS.build(given)
            if isinstance(fallback, CDA) and 'center_denominator' not in given:
                fallback.center_denominator = center_denominator  # a config without one takes this matcher's
        if fallback is not None:
            if not hasattr(fallback, 'alpha_for'):
                raise TypeError(f'{name}: fallback must be a CDA config or object (it gives alpha(num_high_conf)), '
                                f'got {type(fallback).__name__}')
            if fallback.center_denominator != center_denominator:
                raise ValueError(f'{name}: the fallback CDA has center_denominator '
                                 f'{fallback.center_denominator!r}, this matcher {center_denominator!r}')
        self.fallback = fallback

    # ------------------------------------------------------------------------------------------------ per track
    @staticmethod
    def _track_values(name: str, values: Any, n: int) -> np.ndarray | None:
        if values is None:
            return None
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (n, ):
            raise ValueError(f'MotionAdaptiveCDA: the context entry {name!r} has shape {values.shape}; it needs one '
                             f'value per track row of the call, ({n},)')
        return values

    def motion_ratio(self, g: PairGeometry, track_displacement: Any = None,
                     track_position_std: Any = None) -> np.ndarray | None:
        """``max(displacement, position_std) / diagonal`` per track (a NaN one is ignored by the max; NaN where both
        are unknown), or None when the context has neither array."""
        n = g.a.shape[0]
        displacement = self._track_values('track_displacement', track_displacement, n)
        std = self._track_values('track_position_std', track_position_std, n)
        if displacement is None:
            if std is None:
                return None
            motion = std
        else:
            motion = displacement if std is None else np.fmax(displacement, std)
        diag = g.diag_a[:, 0] if g.is_numpy else g.diag_a[:, 0].detach().cpu().numpy()
        return motion / diag

    def frame_crowded(self, num_high_conf: int | None) -> float:
        """The frame term's floor of the crowding, ``clip(N / n_full, 0, 1)`` (0 without ``n_full``)."""
        if self.n_full is None:
            return 0.0
        if num_high_conf is None:
            raise ValueError(f'MotionAdaptiveCDA(n_full={self.n_full}) needs num_high_conf, the number of '
                             'high-confidence detections of the frame')
        return min(max(num_high_conf / self.n_full, 0.0), 1.0)

    def _fastness(self, g: PairGeometry, track_displacement: Any,
                  track_position_std: Any) -> tuple[np.ndarray, float]:
        """``fast`` per track (NaN: no motion) and its maximum (NaN when a track has no motion)."""
        motion_ratio = self.motion_ratio(g, track_displacement, track_position_std)
        if motion_ratio is None:
            return np.full(g.a.shape[0], np.nan), math.nan
        fast = np.interp(motion_ratio, self._r_knots, _RAMP_UP)
        return fast, fast.max()

    def _center_weights(self, g: PairGeometry, ratio: Any, fast: np.ndarray, num_high_conf: int | None,
                        unknown: np.ndarray | None = None) -> np.ndarray:
        """``1 - a`` per track, ``ratio`` the call's ``d / D`` matrix; the tracks ``unknown`` (no motion) get the
        fallback CDA's frame weight, or without a fallback count as fast."""
        if unknown is not None:
            fast = np.where(unknown, 1.0, fast)
        if self.crowd_full == 0 or self.crowd_full == math.inf:
            near = fast  # (not read)
        else:
            if self.center_denominator != 'mean':  # "near" is always in mean diagonals of the pair
                ratio = center_ratio(g, 'mean')
            near = ratio < self.crowd_radius  # detections near each track, its own included
            near = np.add.reduce(near, axis=1) if isinstance(near, np.ndarray) else near.sum(1).cpu().numpy()
        weights = _freedom(near, self.crowd_full, self.frame_crowded(num_high_conf), offset=1.0)
        weights *= fast
        weights = self._scaled(weights, num_high_conf)
        if unknown is not None and self.fallback is not None:
            weights[unknown] = 1.0 - self.fallback.alpha_for(num_high_conf)
        return weights

    def iou_weights(self, g: PairGeometry, num_high_conf: int | None = None, track_displacement: Any = None,
                    track_position_std: Any = None) -> np.ndarray:
        """The per-track IoU weights ``a`` of a call, ``(n,)`` (for analysis and tests; ``scores`` uses them)."""
        fast, top = self._fastness(g, track_displacement, track_position_std)
        unknown = np.isnan(fast) if top != top else None
        return 1.0 - self._center_weights(g, center_ratio(g, self.center_denominator), fast, num_high_conf,
                                          unknown)

    # ------------------------------------------------------------------------------------------------- scores
    def scores(self, g: PairGeometry, num_high_conf: int | None = None, track_displacement: Any = None,
               track_position_std: Any = None, **context: Any) -> Any:
        n = g.a.shape[0]
        if (g.is_numpy and self.center_denominator == 'mean' and self.n_full is None and self._near_knots is not None
                and isinstance(track_displacement, np.ndarray) and track_displacement.shape == (n, )
                and isinstance(track_position_std, np.ndarray) and track_position_std.shape == (n, )):
            # the trackers' call (numpy, both per-track arrays, the default denominator, no frame term) in few numpy
            # calls: it runs once per frame on tens of tracks, where each call's fixed cost dominates; the same
            # values as the general path below
            motion = np.fmax(track_displacement, track_position_std)
            motion /= g.diag_a[:, 0]
            fast = np.interp(motion, self._r_knots, _RAMP_UP)
            top = fast.max()
            if top == 0.0 and self.a_still == 1.0:
                return g.iou  # every track still (the common case at high frame rates), or r_high inf
            if top == top:  # (NaN: a track without motion, the general path)
                ratio = center_ratio(g, 'mean')
                if self.crowd_full == math.inf:  # crowding ignored
                    weights = fast
                else:
                    weights = np.interp(np.add.reduce(ratio < self.crowd_radius, axis=1), self._near_knots,
                                        _RAMP_DOWN)
                    weights *= fast
                return self._mix(g, ratio, self._scaled(weights, num_high_conf))
        fast, top = self._fastness(g, track_displacement, track_position_std)
        unknown = None
        if top == top:  # every track has motion
            if (top == 0.0 or self.crowd_full == 0) and self.a_still == 1.0:
                # every track still, r_high inf or crowd_full 0: IoU, no centre term to build
                return g.iou
        else:
            unknown = np.isnan(fast)
            if self.fallback is not None and unknown.all():
                return self.fallback.scores(g, num_high_conf=num_high_conf)  # no track has motion: the fallback
        ratio = center_ratio(g, self.center_denominator)
        return self._mix(g, ratio, self._center_weights(g, ratio, fast, num_high_conf, unknown))

    def _scaled(self, moving: np.ndarray, num_high_conf: int | None) -> np.ndarray:
        """The centre weights ``1 - a = (1 - a_still) + (a_still - a_fast) m`` from ``m = fast (1 - crowded)`` (in
        place; with the range 1 .. 0 ``m`` itself); ``a_fast`` None: the fallback's ``alpha(N)``, at most a_still."""
        a_fast = self.a_fast if self.a_fast is not None else min(self.fallback.alpha_for(num_high_conf), self.a_still)
        if self.a_still != 1.0 or a_fast != 0.0:
            moving *= self.a_still - a_fast
            moving += 1.0 - self.a_still
        return moving

    @staticmethod
    def _mix(g: PairGeometry, ratio: Any, weights: np.ndarray) -> Any:
        """``a IoU + (1 - a) CenterSim`` from the ``d / D`` matrix and the centre weights ``1 - a``; rows with a = 1
        (0) are IoU's (CenterSim's) to the bit, as 0 x finite = 0."""
        if g.is_numpy:  # in place on the fresh ratio matrix
            np.subtract(1.0, ratio, out=ratio)
            np.maximum(ratio, 0.0, out=ratio)
            ratio *= weights[:, None]
            ratio += (1.0 - weights)[:, None] * g.iou
            return ratio
        import torch
        center = g.xp.clip(1.0 - ratio, 0.0, None)
        weights = torch.as_tensor(weights, dtype=center.dtype, device=center.device)[:, None]
        return center * weights + (1.0 - weights) * g.iou
