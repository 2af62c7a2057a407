"""The frame context of a matcher call, built from the trackers' own track state (one helper for every tracker).

A tracker calls ``self.matcher(boxes, dets, **matcher_context(self.matcher, tracks, num_high_conf=N))`` with the
tracks whose boxes are the rows of the call. The matcher says which per-track entries it reads (its
``context_keys``, e.g. :class:`~vastmat.models.association.motion_adaptive.MotionAdaptiveCDA`); only those are built,
so a matcher that reads none gets exactly ``num_high_conf`` as before and costs nothing more. The tracker does not know
the matcher; this module knows the track states of the toolbox (all tracks of one call are of one class):

* a Kalman state (``mean`` ``(8,)`` with the centre at 0:2 and its velocity at 4:6, ``covariance`` ``(8, 8)``; the
  xyah filter of ByteTrack / FairMOT and TrackTrack's xywh one): displacement = the norm of the centre velocity (pixels
  per frame), position std = ``sqrt((var_cx + var_cy) / 2)`` of the current (at the call: predicted) covariance;
* a DiffMOT history (``conds``, the last ``[cx, cy, w, h, dcx, dcy, dw, dh]`` conditions): displacement = the norm
  of the last centre delta (for predicted tracks the move D2MP predicted for this frame, else the last observed
  one); no position std (D2MP has no uncertainty);
* a ``displacement`` attribute (TransTrack: the track decoder's move; NaN where unknown): used as it is.

Other tracks get NaN displacements (the matcher's fallback rule).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..association.context import FrameContext
from .track_store import TrackRows


def _kalman_motion(mean: np.ndarray, variance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Displacement and position std from stacked Kalman means and ``var_cx + var_cy`` (halved in place)."""
    variance *= 0.5
    return np.hypot(mean[:, 4], mean[:, 5]), np.sqrt(variance, out=variance)


def track_motion(tracks: Sequence[Any]) -> tuple[np.ndarray, np.ndarray | None]:
    """``(displacement (n,), position_std (n,) or None)`` of ``tracks`` in pixels (module docstring)."""
    if not tracks:
        return np.zeros(0), None
    if isinstance(tracks, TrackRows):  # a track store's rows: its columns, gathered at once
        store, rows = tracks.store, tracks.rows
        return _kalman_motion(store.mean[rows], store.covariance[rows, 0, 0] + store.covariance[rows, 1, 1])
    first = tracks[0]
    if hasattr(first, 'covariance') and hasattr(first, 'mean'):
        # (few array calls: this runs once per frame on tens of tracks, where each call's fixed cost dominates)
        return _kalman_motion(np.array([t.mean for t in tracks]),
                              np.array([t.covariance.item(0, 0) + t.covariance.item(1, 1) for t in tracks]))
    if hasattr(first, 'conds'):
        delta = np.array([t.conds[-1][4:6] for t in tracks])
        return np.hypot(delta[:, 0], delta[:, 1]), None
    if hasattr(first, 'displacement'):
        return np.array([t.displacement for t in tracks], dtype=np.float64), None
    return np.full(len(tracks), np.nan), None


def matcher_context(matcher: Any, tracks: Sequence[Any], num_high_conf: int | None = None) -> dict:
    """The keyword arguments of ``matcher(boxes of tracks, dets, ...)``: ``num_high_conf`` and the per-track entries
    the matcher lists in ``context_keys``, aligned with ``tracks``."""
    keys = getattr(matcher, 'context_keys', ())
    if not keys:
        return dict(num_high_conf=num_high_conf)
    displacement, position_std = track_motion(tracks)
    return FrameContext(num_high_conf,
                        displacement if 'track_displacement' in keys else None,
                        position_std if 'track_position_std' in keys else None).as_kwargs()
