"""What a matcher may read about the current frame besides the boxes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# the per-track entries of a frame context: ``(n,)`` arrays aligned with the rows (tracks) of the matcher call. A
# matcher lists those it reads in its ``context_keys``; trackers build only those (``matcher_context`` in
# vastmat/models/trackers/motion_context.py), so matchers that read none cost nothing more.
TRACK_CONTEXT_KEYS = ('track_displacement', 'track_position_std')


@dataclass(frozen=True)
class FrameContext:
    """Frame context of one association call: ``matcher(tracks, dets, **context.as_kwargs())``.

    Attributes:
        num_high_conf: detections of the frame scoring above the tracker's high threshold (adaptive CDA's N).
        track_displacement: ``(n,)`` per track (rows of the call), its recent centre displacement per frame in pixels:
            the norm of the motion model's centre velocity (Kalman trackers), the last centre delta of the track's
            history (DiffMOT), the track decoder's move (TransTrack); NaN where the tracker knows none.
        track_position_std: ``(n,)`` per track, the motion model's centre position standard deviation in pixels,
            ``sqrt((var_x + var_y) / 2)`` of the Kalman covariance's centre block; NaN where the model has none.
    """

    num_high_conf: int | None = None
    track_displacement: np.ndarray | None = None
    track_position_std: np.ndarray | None = None

    @classmethod
    def from_scores(cls, scores: Any, high_thr: float) -> 'FrameContext':
        """Count the detections with score > ``high_thr`` (ByteTrack's ``track_thresh``, 0.6 by default)."""
        return cls(num_high_conf=int((np.asarray(scores) > high_thr).sum()))

    def as_kwargs(self) -> dict:
        """``num_high_conf`` and the per-track arrays that are set (no copies; unset ones are left out, so a
        matcher call with an empty context is the call trackers made before the per-track keys existed)."""
        kwargs = dict(num_high_conf=self.num_high_conf)
        for key in TRACK_CONTEXT_KEYS:
            value = getattr(self, key)
            if value is not None:
                kwargs[key] = value
        return kwargs
