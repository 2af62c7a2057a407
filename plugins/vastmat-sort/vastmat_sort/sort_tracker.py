"""SORT: Simple Online and Realtime Tracking (Bewley et al., ICIP 2016), ported to VastMAT's tracker interface.

A re-implementation of the reference ``sort.py`` (github.com/abewley/sort) that reproduces its outputs: a constant
velocity Kalman filter per track on ``[u, v, s, r]`` (box centre, area, aspect ratio), IoU association solved with
``lap.lapjv`` exactly as the reference calls it, the same track birth (``min_hits``) and death (``max_age``) rules
and the same output order. The Kalman filter is filterpy's ``predict`` / ``update`` (Joseph form) written out in
numpy, so filterpy is not needed; it steps every track of a frame at once, the tracks kept as rows of a
:class:`~vastmat.models.trackers.TrackList` (VastMAT's stacked per-track arrays) instead of one object each.

Differences from the reference, none of which changes a box:

* the reference numbers tracks with a class-wide counter that keeps counting across the sequences of one process
  (the second sequence's ids continue after the first's); here the counter belongs to the tracker and
  :meth:`SORT.reset` restarts it at 1, so every video's ids start at 1 (a constant offset per video);
* the reference writes a score of 1 for every box; so do we (``scores`` are all 1.0);
* detections arrive as VastMAT's :class:`~vastmat.structures.TrackingFrame`, validated once for every tracker
  (NaN / infinite values, negative sizes, scores outside [0, 1] raise ValueError; zero-size boxes are dropped);
* the ``min_hits`` warm-up reads the frame number (``frame.frame_id``, 1-based) instead of counting calls: the
  same thing when every frame is given, as the MOT model does.
"""
from __future__ import annotations

import lap
import numpy as np

from vastmat.models.association.matchers import IoU
from vastmat.models.trackers import BaseTracker, TrackList, column
from vastmat.registry import MODELS
from vastmat.structures.tracking import TrackingFrame, TrackOutput

_IOU = IoU()


def boxes_to_z(boxes: np.ndarray) -> np.ndarray:
    """``(n, 4)`` ``x1, y1, x2, y2`` -> the measurements ``u, v, s, r`` (centre, area w*h, ratio w/h)."""
    w = boxes[:, 2] - boxes[:, 0]
    h = boxes[:, 3] - boxes[:, 1]
    return np.column_stack([boxes[:, 0] + w / 2.0, boxes[:, 1] + h / 2.0, w * h, w / h])


def states_to_boxes(x: np.ndarray) -> np.ndarray:
    """``(n, 7)`` states ``u, v, s, r, ...`` -> the boxes ``x1, y1, x2, y2`` ``(n, 4)`` (NaN where ``s * r < 0``)."""
    with np.errstate(invalid='ignore'):
        w = np.sqrt(x[:, 2] * x[:, 3])
    h = x[:, 2] / w
    return np.column_stack([x[:, 0] - w / 2.0, x[:, 1] - h / 2.0, x[:, 0] + w / 2.0, x[:, 1] + h / 2.0])


def iou_matrix(boxes_a: np.ndarray, boxes_b: np.ndarray) -> np.ndarray:
    """(n, m) IoU of ``x1, y1, x2, y2`` boxes without the +1 pixel convention (the reference ``iou_batch``), from
    VastMAT's IoU matcher (same arithmetic: intersection over ``area_a + area_b - intersection``)."""
    return _IOU(boxes_a, boxes_b).scores


def linear_assignment(cost: np.ndarray) -> np.ndarray:
    """Minimum-cost ``(row, col)`` pairs from ``lap.lapjv(extend_cost=True)``, listed as the reference lists them:
    one pair per entry of the row solution, in row order (so equal-cost ties resolve as in the reference)."""
    _, x, y = lap.lapjv(cost, extend_cost=True)
    return np.array([[y[col], col] for col in x if col >= 0], dtype=np.int64).reshape(-1, 2)


def associate(dets: np.ndarray, trks: np.ndarray, iou_threshold: float) -> tuple[np.ndarray, list[int], list[int]]:
    """Match detections to predicted track boxes by IoU.

    Returns:
        ``matches`` (k, 2) of ``(det, track)`` indices, the unmatched detections and the unmatched tracks, in the
        reference's order (the order of the unmatched detections decides the ids of the tracks born from them).
    """
    if len(trks) == 0:
        return np.empty((0, 2), np.int64), list(range(len(dets))), []
    iou = iou_matrix(dets, trks)
    if min(iou.shape) > 0:
        above = (iou > iou_threshold).astype(np.int32)
        if above.sum(1).max() == 1 and above.sum(0).max() == 1:  # unambiguous: each pair is the only one
            pairs = np.stack(np.where(above), axis=1)
        else:
            pairs = linear_assignment(-iou)
    else:
        pairs = np.empty((0, 2), np.int64)
    unmatched_dets = [d for d in range(len(dets)) if d not in pairs[:, 0]]
    unmatched_trks = [t for t in range(len(trks)) if t not in pairs[:, 1]]
    matches = []
    for d, t in pairs:
        if iou[d, t] < iou_threshold:
            unmatched_dets.append(int(d))
            unmatched_trks.append(int(t))
        else:
            matches.append((d, t))
    return np.array(matches, np.int64).reshape(-1, 2), unmatched_dets, unmatched_trks


# the constant-velocity model on [u, v, s, r, u', v', s'] (u, v, s move; the ratio r stays), as the reference's
F = np.eye(7)
F[[0, 1, 2], [4, 5, 6]] = 1.0
R = np.diag([1.0, 1.0, 10.0, 10.0])  # measurement noise
Q = np.diag([1.0, 1.0, 1.0, 1.0, 0.01, 0.01, 0.0001])  # process noise
P0 = np.diag([10.0, 10.0, 10.0, 10.0, 10000.0, 10000.0, 10000.0])  # the velocities start very uncertain


class SORTTracks(TrackList):
    """The tracks of a video as rows of arrays: the Kalman state ``x`` (7) and covariance ``P`` (7 x 7), and the
    reference's counters."""

    x: np.ndarray = column((7, ))
    P: np.ndarray = column((7, 7))
    time_since_update: np.ndarray = column((), np.int64)
    hits: np.ndarray = column((), np.int64)
    hit_streak: np.ndarray = column((), np.int64)
    age: np.ndarray = column((), np.int64)


@MODELS.register_module()
class SORT(BaseTracker):
    """SORT with the reference defaults (registered as ``SORT``: mmdet's own ``SORTTracker``, DeepSORT's tracker, keeps
    its name).

    Args:
        max_age: frames a track survives without a matched detection (1: removed after a second missed frame).
        min_hits: consecutive matched frames before a track is reported; in the first ``min_hits`` frames of a video
            every matched or new track is reported.
        iou_threshold: the least IoU of a match.
    """

    # tools/tune.py's space (declared by the plugin beside its defaults, as the built-in trackers do)
    search_spaces = dict(default=dict(max_age=('int', 1, 30), min_hits=('int', 1, 5),
                                      iou_threshold=('float', 0.1, 0.7)))

    def __init__(self, max_age: int = 1, min_hits: int = 3, iou_threshold: float = 0.3) -> None:
        super().__init__()
        self.max_age = max_age
        self.min_hits = min_hits
        self.iou_threshold = iou_threshold
        self.tracks = SORTTracks()

    def reset(self) -> None:
        """Forget every track; the id counter restarts (ids start at 1 again)."""
        self.tracks.reset()

    def _predict(self) -> np.ndarray:
        """Advance every track one frame (filterpy ``predict``: ``x = F x``, ``P = F P F^T + Q``; a track whose area
        would become negative stops shrinking) and return the predicted boxes, in list order."""
        table = self.tracks
        rows = table.live
        x, P = table.x[rows], table.P[rows]
        x[x[:, 6] + x[:, 2] <= 0, 6] = 0.0
        x = x @ F.T
        table.x[rows], table.P[rows] = x, F @ P @ F.T + Q
        table.age[rows] += 1
        table.hit_streak[rows[table.time_since_update[rows] > 0]] = 0
        table.time_since_update[rows] += 1
        return states_to_boxes(x)

    def _correct(self, rows: np.ndarray, boxes: np.ndarray) -> None:
        """Correct the states of ``rows`` with their matched detection boxes (filterpy ``update``, Joseph-form
        covariance: ``P = (I - K H) P (I - K H)^T + K R K^T``)."""
        table = self.tracks
        x, P = table.x[rows], table.P[rows]
        y = boxes_to_z(boxes) - x[:, :4]
        pht = P[:, :, :4]  # P H^T
        gain = pht @ np.linalg.inv(pht[:, :4, :] + R)  # K = P H^T (H P H^T + R)^-1
        table.x[rows] = x + (gain @ y[:, :, None])[:, :, 0]
        i_kh = np.broadcast_to(np.eye(7), P.shape).copy()
        i_kh[:, :, :4] -= gain  # I - K H
        table.P[rows] = i_kh @ P @ i_kh.transpose(0, 2, 1) + gain @ R @ gain.transpose(0, 2, 1)
        table.time_since_update[rows] = 0
        table.hits[rows] += 1
        table.hit_streak[rows] += 1

    def update(self, frame: TrackingFrame) -> TrackOutput:
        """Track one frame; call it for every frame in order, also for frames without detections.

        The ``min_hits`` warm-up covers frames 1 to ``min_hits`` of the video (the reference's ``frame_count``).
        Scores are not used; every reported box gets score 1.0.
        """
        dets, frame_count = frame.bboxes, frame.frame_id
        table = self.tracks
        predicted = self._predict()
        valid = ~np.isnan(predicted).any(axis=1)
        table.keep(valid)
        matches, unmatched_dets, _ = associate(dets, predicted[valid].reshape(-1, 4), self.iou_threshold)
        if len(matches):
            self._correct(table.live[matches[:, 1]], dets[matches[:, 0]])
        if unmatched_dets:
            z = boxes_to_z(dets[unmatched_dets])
            table.add(np.ones(len(z)), frame_count, x=np.concatenate([z, np.zeros((len(z), 3))], axis=1), P=P0)
        rows = table.live[::-1]  # the reference reports and prunes in reverse order of creation
        reported = rows[(table.time_since_update[rows] < 1)
                        & ((table.hit_streak[rows] >= self.min_hits) | (frame_count <= self.min_hits))]
        out = (TrackOutput(table.ids[reported], states_to_boxes(table.x[reported]), np.ones(len(reported)))
               if len(reported) else TrackOutput.empty())
        table.keep(table.time_since_update[table.live] <= self.max_age)  # (may renumber the rows)
        return out
