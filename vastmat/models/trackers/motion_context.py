"""The frame context of a matcher call, built from the trackers' own track state (one helper for every tracker).

A tracker calls ``self.matcher(boxes, dets, **matcher_context(self.matcher, tracks, num_high_conf=N))`` with the
tracks whose boxes are the rows of the call. The matcher says which per-track entries it reads (its
``context_keys``, e.g. :class:`~vastmat.models.association.motion_adaptive.MotionAdaptiveCDA`); only those are built,
so a matcher that reads none gets only ``num_high_conf`` and costs nothing more. The tracker does not know
the matcher; this module knows the track states of the toolbox:

* rows (:class:`.TrackRows`) of a table kind with a Kalman state (:class:`.KalmanTracks`: ``mean`` ``(8,)`` with
  the centre at 0:2 and its velocity at 4:6, ``covariance`` ``(8, 8)``; ByteTrack's, FairMOT's, TrackTrack's):
  displacement = the norm of the centre velocity (pixels per frame), position std = ``sqrt((var_cx + var_cy) / 2)``
  of the current (at the call: predicted) covariance;
* rows of DiffMOT's table kind (:class:`.DiffMOTTracks`: ``conds``, the last ``[cx, cy, w, h, dcx, dcy, dw, dh]``
  conditions, ``num_conds`` of them): displacement = the norm of the last centre delta (for predicted tracks the
  move D2MP predicted for this frame, else the last observed one); no position std (D2MP has no uncertainty);
* objects with a ``displacement`` attribute (TransTrack: the track decoder's move; NaN where unknown): used as it is.

Other tracks get NaN displacements (the matcher's fallback rule).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..association.context import FrameContext
from .diffmot_tracks import DiffMOTTracks
from .track_store import KalmanTracks, TrackRows


def track_motion(tracks: Sequence[Any]) -> tuple[np.ndarray, np.ndarray | None]:
    """``(displacement (n,), position_std (n,) or None)`` of ``tracks`` in pixels (module docstring)."""
    if not tracks:
        return np.zeros(0), None
    if isinstance(tracks, TrackRows):  # a track table's rows: its columns, gathered at once, by the table's kind
        table, rows = tracks.store, tracks.rows
        if isinstance(table, DiffMOTTracks):
            last = table.conds[rows, table.num_conds[rows] - 1]
            return np.hypot(last[:, 4], last[:, 5]), None
        if isinstance(table, KalmanTracks):
            velocity, covariance = table.mean[rows, 4:6], table.covariance[rows, :2, :2]
            return (np.hypot(velocity[:, 0], velocity[:, 1]),
                    np.sqrt((covariance[:, 0, 0] + covariance[:, 1, 1]) * 0.5))
        return np.full(len(rows), np.nan), None
    first = tracks[0]
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
