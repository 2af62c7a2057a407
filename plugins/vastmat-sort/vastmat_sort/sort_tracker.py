"""SORT: Simple Online and Realtime Tracking (Bewley et al., ICIP 2016), ported to VastMAT's tracker interface.

A re-implementation of the reference ``sort.py`` (github.com/abewley/sort) that reproduces its outputs: a constant
velocity Kalman filter per track on ``[u, v, s, r]`` (box centre, area, aspect ratio), IoU association solved with
``lap.lapjv`` exactly as the reference calls it, the same track birth (``min_hits``) and death (``max_age``) rules
and the same output order. The Kalman filter is filterpy's ``predict`` / ``update`` (Joseph form) written out in
numpy, so filterpy is not needed.

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
from vastmat.models.trackers import BaseTracker
from vastmat.registry import MODELS
from vastmat.structures.tracking import TrackingFrame, TrackOutput

_IOU = IoU()


def box_to_z(box: np.ndarray) -> np.ndarray:
    """``x1, y1, x2, y2`` -> the (4, 1) measurement ``u, v, s, r`` (centre, area w*h, ratio w/h)."""
    w = box[2] - box[0]
    h = box[3] - box[1]
    return np.array([box[0] + w / 2.0, box[1] + h / 2.0, w * h, w / float(h)]).reshape(4, 1)


def x_to_box(x: np.ndarray) -> np.ndarray:
    """The state ``u, v, s, r, ...`` -> the box ``x1, y1, x2, y2`` (4,)."""
    w = np.sqrt(x[2, 0] * x[3, 0])
    h = x[2, 0] / w
    return np.array([x[0, 0] - w / 2.0, x[1, 0] - h / 2.0, x[0, 0] + w / 2.0, x[1, 0] + h / 2.0])


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


class KalmanBoxTrack:
    """One track: a Kalman filter with state ``[u, v, s, r, u', v', s']`` and constant velocity on ``u, v, s``."""

    F = np.array([[1, 0, 0, 0, 1, 0, 0],
                  [0, 1, 0, 0, 0, 1, 0],
                  [0, 0, 1, 0, 0, 0, 1],
                  [0, 0, 0, 1, 0, 0, 0],
                  [0, 0, 0, 0, 1, 0, 0],
                  [0, 0, 0, 0, 0, 1, 0],
                  [0, 0, 0, 0, 0, 0, 1]], dtype=np.float64)
    H = np.eye(4, 7)

    def __init__(self, box: np.ndarray, track_id: int) -> None:
        self.R = np.eye(4)
        self.R[2:, 2:] *= 10.0
        self.P = np.eye(7)
        self.P[4:, 4:] *= 1000.0  # the velocities are not observed: start them very uncertain
        self.P *= 10.0
        self.Q = np.eye(7)
        self.Q[-1, -1] *= 0.01
        self.Q[4:, 4:] *= 0.01
        self.x = np.zeros((7, 1))
        self.x[:4] = box_to_z(box)
        self.id = track_id
        self.time_since_update = 0
        self.hits = 0
        self.hit_streak = 0
        self.age = 0

    def predict(self) -> np.ndarray:
        """Advance the state one frame (filterpy ``predict``) and return the predicted box (4,)."""
        if self.x[6, 0] + self.x[2, 0] <= 0:  # the area would become negative: stop shrinking
            self.x[6, 0] = 0.0
        self.x = np.dot(self.F, self.x)
        self.P = np.dot(np.dot(self.F, self.P), self.F.T) + self.Q
        self.age += 1
        if self.time_since_update > 0:
            self.hit_streak = 0
        self.time_since_update += 1
        return x_to_box(self.x)

    def update(self, box: np.ndarray) -> None:
        """Correct the state with a matched detection box (filterpy ``update``, Joseph-form covariance)."""
        self.time_since_update = 0
        self.hits += 1
        self.hit_streak += 1
        y = box_to_z(box) - np.dot(self.H, self.x)
        pht = np.dot(self.P, self.H.T)
        s = np.dot(self.H, pht) + self.R
        k = np.dot(pht, np.linalg.inv(s))
        self.x = self.x + np.dot(k, y)
        i_kh = np.eye(7) - np.dot(k, self.H)
        self.P = np.dot(np.dot(i_kh, self.P), i_kh.T) + np.dot(np.dot(k, self.R), k.T)

    def box(self) -> np.ndarray:
        """The current box estimate ``x1, y1, x2, y2`` (4,)."""
        return x_to_box(self.x)


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
        self.reset()

    def reset(self) -> None:
        """Forget every track; the id counter restarts (ids start at 1 again)."""
        self.tracks: list[KalmanBoxTrack] = []
        self.next_id = 0

    def update(self, frame: TrackingFrame) -> TrackOutput:
        """Track one frame; call it for every frame in order, also for frames without detections.

        The ``min_hits`` warm-up covers frames 1 to ``min_hits`` of the video (the reference's ``frame_count``).
        Scores are not used; every reported box gets score 1.0.
        """
        dets, frame_count = frame.bboxes, frame.frame_id
        predicted = [track.predict() for track in self.tracks]
        keep = [i for i, box in enumerate(predicted) if not np.isnan(box).any()]
        self.tracks = [self.tracks[i] for i in keep]
        trks = np.array([predicted[i] for i in keep]).reshape(-1, 4)
        matches, unmatched_dets, _ = associate(dets, trks, self.iou_threshold)
        for d, t in matches:
            self.tracks[t].update(dets[d])
        for d in unmatched_dets:
            self.tracks.append(KalmanBoxTrack(dets[d], self.next_id))
            self.next_id += 1
        ids, boxes = [], []
        for track in reversed(self.tracks):  # the reference reports and prunes in reverse order of creation
            if track.time_since_update < 1 and (track.hit_streak >= self.min_hits
                                                or frame_count <= self.min_hits):
                ids.append(track.id + 1)  # MOTChallenge ids are positive
                boxes.append(track.box())
        self.tracks = [track for track in self.tracks if track.time_since_update <= self.max_age]
        if not ids:
            return TrackOutput.empty()
        return TrackOutput(np.array(ids, np.int64), np.array(boxes, np.float64), np.ones(len(ids)))
