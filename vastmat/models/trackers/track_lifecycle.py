"""Track states, the output filter and the appearance average of the ByteTrack family (ByteTrack, FairMOT's JDE
tracker, DiffMOT, TrackTrack), written once. The lifecycle itself (the official ``joint_stracks`` / ``sub_stracks`` /
``remove_duplicate_stracks`` bookkeeping, reference/trackers.md section 1, steps 7-9) runs on rows of arrays in
:class:`.track_store.TrackStore`.
"""
from __future__ import annotations

import numpy as np

# track states (the official ``TrackState``; NEW: TrackTrack's not-yet-confirmed tracks)
NEW, TRACKED, LOST, REMOVED = 0, 1, 2, 3


def reported_mask(boxes: np.ndarray, min_box_area: float | None, aspect_ratio_thresh: float | None) -> np.ndarray:
    """The official evaluators' output filter (ByteTrack, FairMOT, TrackTrack): a track box ``x1 y1 x2 y2`` is
    reported unless ``w * h <= min_box_area`` or ``w / h > aspect_ratio_thresh`` (None disables a test)."""
    w, h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = w * h > min_box_area if min_box_area is not None else np.ones(len(boxes), bool)
    if aspect_ratio_thresh is not None:
        keep &= ~(w / h > aspect_ratio_thresh)
    return keep


def moving_average_unit(old: np.ndarray, new: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The official appearance update of matched tracks, all at once: ``weight * old + (1 - weight) * new`` per row
    (``weight`` one per row), divided by its norm. Each norm is ``sqrt(f . f)`` from a BLAS dot product, as the
    official per-vector ``np.linalg.norm(f)`` (``np.linalg.norm(..., axis=1)`` sums differently and differs in the
    last bit for about one row in five)."""
    weight = weight[:, None]
    average = weight * old + (1 - weight) * new
    squared = average[:, None, :] @ average[:, :, None]
    return average / np.sqrt(squared[:, 0])
