"""Linear interpolation of track gaps (ByteTrack's ``tools/interpolation.py``), optionally Gaussian-smoothed (GSI,
StrongSORT), on mmdet's ``InterpolateTracklets``."""
from __future__ import annotations

import numpy as np
from mmdet.models.task_modules.tracking import InterpolateTracklets

from vastmat.registry import TASK_UTILS


@TASK_UTILS.register_module()
class InterpolateTracks(InterpolateTracklets):
    """mmdet's ``InterpolateTracklets`` as a per-video post-processor: ``rows -> rows``.

    Gaps of ``1 < gap < max_num_frames`` frames inside tracks longer than ``min_num_frames`` are filled linearly
    (score 1, as mmdet and the official script); ``use_gsi`` then smooths each track (``smooth_tau``). Differences
    from mmdet's ``forward``, which silently drops every track of one or two frames and fails on a video without
    tracks: short tracks are kept as they are, and an empty input gives an empty output.

    Args: those of ``InterpolateTracklets`` (defaults 5, 20, False, 10: ByteTrack's ``n_min=5, n_dti=20``).
    """

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, np.float64).reshape(-1, 7)
        if len(rows) == 0:
            return rows
        out = []
        for track_id in np.unique(rows[:, 1]):
            track = rows[rows[:, 1] == track_id]
            track = track[np.argsort(track[:, 0], kind='stable')]
            if len(track) > self.min_num_frames:
                track = self._interpolate_track(track, track_id, self.max_num_frames)
            if self.use_gsi and len(track) > 2:
                track = self.gaussian_smoothed_interpolation(track, self.smooth_tau)
            out.append(track)
        out = np.concatenate(out)
        return out[np.lexsort((out[:, 1], out[:, 0]))]
