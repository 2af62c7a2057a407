"""The interface every online tracker implements, so that one tracking model can drive any of them.

A tracker is built from its config (``MODELS.build(dict(type='ByteTracker', ...))``), told about each new video with
:meth:`BaseTracker.reset`, then given one frame at a time::

    tracker.reset(frame_rate=10)
    for frame_id, (boxes, scores) in enumerate(frames, start=1):
        out = tracker.update(boxes, scores, frame_id)   # TrackOutput(ids, bboxes, scores)

Boxes are ``(m, 4)`` float64 ``x1, y1, x2, y2`` in image pixels; frames are numbered from 1 as in gt.txt. The
tracker returns the tracks it reports for this frame (the boxes it wants written to the results file).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class TrackOutput:
    """The tracks reported for one frame: ``ids`` (k,), ``bboxes`` (k, 4) x1 y1 x2 y2, ``scores`` (k,)."""

    ids: np.ndarray
    bboxes: np.ndarray
    scores: np.ndarray

    @classmethod
    def empty(cls) -> 'TrackOutput':
        return cls(np.zeros(0, np.int64), np.zeros((0, 4)), np.zeros(0))

    def __len__(self) -> int:
        return len(self.ids)


def check_detections(bboxes: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(m, 4)`` float64 boxes and ``(m,)`` scores; NaN, infinite values or negative sizes raise ValueError."""
    bboxes = np.asarray(bboxes, dtype=np.float64).reshape(-1, 4)
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    if len(bboxes) != len(scores):
        raise ValueError(f'{len(bboxes)} boxes but {len(scores)} scores')
    if not (np.isfinite(bboxes).all() and np.isfinite(scores).all()):
        raise ValueError('detections hold NaN or infinite values')
    if (bboxes[:, 2:] < bboxes[:, :2]).any():
        raise ValueError('a detection box has x2 < x1 or y2 < y1 (negative size)')
    return bboxes, scores


class BaseTracker:
    """Online tracker: ``reset(frame_rate)`` at each video start, ``update(bboxes, scores, frame_id)`` per frame."""

    def reset(self, frame_rate: float | None = None) -> None:
        """Forget every track (a new video starts); ``frame_rate`` of the video, when the tracker uses it."""
        raise NotImplementedError

    def update(self, bboxes: np.ndarray, scores: np.ndarray, frame_id: int) -> TrackOutput:
        """Associate the frame's detections and return the tracks reported in this frame."""
        raise NotImplementedError
