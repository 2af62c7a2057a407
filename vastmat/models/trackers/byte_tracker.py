"""ByteTrack (Zhang et al., ECCV 2022), a faithful port of the official ``BYTETracker.update`` with swappable matchers.

Follows ifzhang/ByteTrack (reference/trackers.md section 1), not mmdet's variant: two-stage association (high, then
low-score detections against the still-tracked tracks), lapjv with ``cost_limit``, score fusion in the first and
unconfirmed stages, unconfirmed tracks confirmed by a second detection, new tracks only from scores
>= ``track_thresh + 0.1``, lost tracks kept ``int(frame_rate / 30 * track_buffer)`` frames, duplicate removal
between tracked and lost tracks, and the Kalman state (not the detection) as the output box.

``matcher`` replaces the IoU of the three association stages: the cost is ``1 - S`` (``1 - S * score`` where the
original fused scores), pairs a gate rejects cost 1. Duplicate removal keeps the original IoU, as it is
bookkeeping, not association.

Speed: the algorithm and every list order are the official ones, so the tracks are identical to the line-by-line
port in :mod:`.byte_tracker_reference`; what differs is that the Kalman filter runs batched over all tracks of a
stage, the boxes of a list are computed in one array operation, and the removed tracks are remembered as a set of
ids (the official code subtracts its ever-growing list of removed tracks from the lost ones every frame, a cost that
grows with the video).

Faithful quirk: the official code subtracts the removed tracks from the lost ones *before* adding this frame's, so a
lost track removed in frame t is still in the lost list (and in the first association) in frame t + 1; if it matches
there it comes back with its id, and if it is lost again later it is dropped at once, its id being among the
removed. Both are reproduced.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from vastmat.datasets.formats import ltwh_to_xyxy, xyxy_to_ltwh
from vastmat.registry import MATCHERS, MODELS

from ..association.solvers import LapJV
from ..motion.kalman_filter import KalmanFilterXYAH, tlwh_to_xyah, xyah_to_xyxy
from .base_tracker import BaseTracker, TrackOutput, check_detections

TRACKED, LOST, REMOVED = 1, 2, 3


class Track:
    """One ByteTrack track: the official ``STrack`` fields the algorithm reads (its ``tracklet_len`` is never
    read, so it is not kept)."""

    __slots__ = ('track_id', 'mean', 'covariance', 'score', 'state', 'is_activated', 'frame_id', 'start_frame')

    def __init__(self, track_id: int, mean: np.ndarray, covariance: np.ndarray, score: float, frame_id: int) -> None:
        self.track_id, self.mean, self.covariance, self.score = track_id, mean, covariance, score
        self.state, self.is_activated = TRACKED, frame_id == 1
        self.frame_id = self.start_frame = frame_id


def track_boxes(tracks: list[Track]) -> np.ndarray:
    """x1 y1 x2 y2 of the tracks' current Kalman states."""
    if not tracks:
        return np.zeros((0, 4))
    return xyah_to_xyxy(np.array([t.mean[:4] for t in tracks]))


def joint_tracks(a: list[Track], b: list[Track]) -> list[Track]:
    """``a`` then the tracks of ``b`` whose id is not in ``a`` (official ``joint_stracks``)."""
    seen = {t.track_id for t in a}
    return a + [t for t in b if t.track_id not in seen]


def sub_tracks(a: list[Track], b: list[Track]) -> list[Track]:
    """The tracks of ``a`` whose id is not in ``b`` (official ``sub_stracks``)."""
    drop = {t.track_id for t in b}
    return [t for t in a if t.track_id not in drop]


@MODELS.register_module()
class ByteTracker(BaseTracker):
    """The official BYTETracker.

    Args:
        track_thresh: high-score threshold (``score > track_thresh``); new tracks need ``track_thresh + 0.1``.
        low_thresh: lower bound of the second-stage detections (``score > 0.1``, hard-coded in the original).
        track_buffer: frames a lost track is kept, at 30 FPS (scaled by ``frame_rate / 30``).
        match_thresh: lapjv ``cost_limit`` of the first association.
        second_match_thresh, unconfirmed_match_thresh: the original's 0.5 and 0.7.
        fuse_score: multiply the similarity by the detection score in the first and unconfirmed stages (the
            original's ``not mot20``).
        duplicate_thresh: tracked/lost pairs with IoU distance below this are duplicates (0.15).
        matcher: similarity of the association stages (default: IoU with the +1 pixel convention).
        min_box_area, aspect_ratio_thresh: the official evaluator's output filter: boxes with ``w * h <=
            min_box_area`` or ``w / h > aspect_ratio_thresh`` are not reported (``None`` disables a filter; the
            vertical filter is a pedestrian prior, so the VastMAT configs disable it).
        frame_rate: used until :meth:`reset` gives the video's rate.
    """

    def __init__(self, track_thresh: float = 0.6, low_thresh: float = 0.1, track_buffer: int = 30,
                 match_thresh: float = 0.9, second_match_thresh: float = 0.5, unconfirmed_match_thresh: float = 0.7,
                 fuse_score: bool = True, duplicate_thresh: float = 0.15, matcher: dict | Any | None = None,
                 min_box_area: float | None = 100, aspect_ratio_thresh: float | None = None,
                 frame_rate: float = 30) -> None:
        self.track_thresh, self.low_thresh = track_thresh, low_thresh
        self.det_thresh = track_thresh + 0.1
        self.track_buffer = track_buffer
        self.fuse_score, self.duplicate_thresh = fuse_score, duplicate_thresh
        self.min_box_area, self.aspect_ratio_thresh = min_box_area, aspect_ratio_thresh
        matcher = matcher if matcher is not None else dict(type='IoU', plus_one=True)
        self.matcher = MATCHERS.build(matcher) if isinstance(matcher, dict) else matcher
        self.duplicate_iou = MATCHERS.build(dict(type='IoU', plus_one=True))
        self.first_solver, self.second_solver, self.unconfirmed_solver = (
            LapJV(match_thresh), LapJV(second_match_thresh), LapJV(unconfirmed_match_thresh))
        self.kalman_filter = KalmanFilterXYAH()
        self.reset(frame_rate)

    def reset(self, frame_rate: float | None = None) -> None:
        if frame_rate:
            self.frame_rate = frame_rate
        self.max_time_lost = int(self.frame_rate / 30.0 * self.track_buffer)
        self.tracked: list[Track] = []
        self.lost: list[Track] = []
        self.frame_id = 0
        self.next_id = 1
        self.removed_ids: set[int] = set()

    # ---------------------------------------------------------------------------------------------------- helpers
    def _similarity(self, tracks: list[Track], boxes: np.ndarray, num_high: int) -> np.ndarray:
        """Similarity of every track (pool and unconfirmed) to every detection of the frame, gated pairs 0."""
        similarity = self.matcher(track_boxes(tracks), boxes, num_high_conf=num_high)
        return similarity.scores if similarity.gate is None else similarity.scores * similarity.gate

    @staticmethod
    def _stage_cost(similarity: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                    scores: np.ndarray | None) -> np.ndarray:
        sim = similarity[np.ix_(rows, cols)]
        if scores is not None:
            sim = sim * scores[cols][None, :]
        return 1.0 - sim

    def _predict(self, tracks: list[Track]) -> None:
        if not tracks:
            return
        mean = np.array([t.mean for t in tracks])
        covariance = np.array([t.covariance for t in tracks])
        not_tracked = np.array([t.state != TRACKED for t in tracks])
        mean[not_tracked, 7] = 0.0
        mean, covariance = self.kalman_filter.predict(mean, covariance)
        for t, m, c in zip(tracks, mean, covariance):
            t.mean, t.covariance = m, c

    def _apply_updates(self, updates: list[tuple[Track, int]], tlwh: np.ndarray, scores: np.ndarray) -> None:
        """Kalman update of every matched track at once (the official ``update`` / ``re_activate``);
        ``(track, detection index)``."""
        if not updates:
            return
        tracks = [t for t, _ in updates]
        index = np.array([j for _, j in updates])
        mean, covariance = self.kalman_filter.update(
            np.array([t.mean for t in tracks]), np.array([t.covariance for t in tracks]),
            tlwh_to_xyah(tlwh[index]))
        for (t, j), m, c in zip(updates, mean, covariance):
            t.mean, t.covariance, t.score = m, c, float(scores[j])
            t.state, t.is_activated, t.frame_id = TRACKED, True, self.frame_id

    # ----------------------------------------------------------------------------------------------------- update
    def update(self, bboxes: np.ndarray, scores: np.ndarray, frame_id: int) -> TrackOutput:
        bboxes, scores = check_detections(bboxes, scores)
        self.frame_id = frame_id
        high = scores > self.track_thresh
        second = (scores > self.low_thresh) & (scores < self.track_thresh)
        # all detections used this frame, in one array: high first, then second
        used = np.concatenate([bboxes[high], bboxes[second]])
        # the original keeps detections as left, top, width, height and recomputes x2 = left + width for costs
        tlwh = xyxy_to_ltwh(used)
        boxes = ltwh_to_xyxy(tlwh)
        det_scores = np.concatenate([scores[high], scores[second]])
        num_high = int(high.sum())
        high_idx = np.arange(num_high)
        second_idx = np.arange(num_high, len(boxes))

        unconfirmed = [t for t in self.tracked if not t.is_activated]
        tracked = [t for t in self.tracked if t.is_activated]
        pool = joint_tracks(tracked, self.lost)
        self._predict(pool)

        # one similarity matrix for the three stages (each entry depends only on its pair, so the slices equal the
        # official per-stage matrices); the matcher's fixed cost is paid once per frame
        similarity = self._similarity(pool + unconfirmed, boxes, num_high)
        fuse_scores = det_scores if self.fuse_score else None
        updates: list[tuple[Track, int]] = []  # (track, row of `boxes`)
        activated, refound, new_lost = [], [], []

        # 1. high-score detections against tracked and lost tracks (a lost one matched here is re-activated)
        first = self.first_solver(self._stage_cost(similarity, np.arange(len(pool)), high_idx, fuse_scores))
        for i, j in first.matches:
            updates.append((pool[i], int(j)))  # high detections are the first rows of `boxes`
            (activated if pool[i].state == TRACKED else refound).append(pool[i])

        # 2. low-score detections against the remaining tracks that were tracked (lost ones excluded)
        remaining_rows = np.array([i for i in first.unmatched_rows if pool[i].state == TRACKED], np.int64)
        remaining = [pool[i] for i in remaining_rows]
        second_stage = self.second_solver(self._stage_cost(similarity, remaining_rows, second_idx, None))
        for i, j in second_stage.matches:
            updates.append((remaining[i], int(second_idx[j])))
            activated.append(remaining[i])
        for i in second_stage.unmatched_rows:  # all of them were tracked until now
            remaining[i].state = LOST
            new_lost.append(remaining[i])

        # 3. unconfirmed tracks against the high-score detections left over
        left = first.unmatched_cols
        unconfirmed_rows = np.arange(len(pool), len(pool) + len(unconfirmed))
        third = self.unconfirmed_solver(self._stage_cost(similarity, unconfirmed_rows, left, fuse_scores))
        for i, j in third.matches:
            updates.append((unconfirmed[i], int(left[j])))
            activated.append(unconfirmed[i])
        removed = []
        for i in third.unmatched_rows:
            unconfirmed[i].state = REMOVED
            removed.append(unconfirmed[i])
        self._apply_updates(updates, tlwh, det_scores)

        # 4. new tracks from the high-score detections nobody took
        fresh = [int(left[j]) for j in third.unmatched_cols if det_scores[left[j]] >= self.det_thresh]
        if fresh:
            mean, covariance = self.kalman_filter.initiate(tlwh_to_xyah(tlwh[fresh]))
            for j, m, c in zip(fresh, mean, covariance):
                activated.append(Track(self.next_id, m, c, float(det_scores[j]), self.frame_id))
                self.next_id += 1

        # 5. lost tracks too old are removed
        for track in self.lost:
            if self.frame_id - track.frame_id > self.max_time_lost:
                track.state = REMOVED
                removed.append(track)

        self.tracked = [t for t in self.tracked if t.state == TRACKED]
        self.tracked = joint_tracks(joint_tracks(self.tracked, activated), refound)
        self.lost = sub_tracks(self.lost, self.tracked) + new_lost
        self.lost = [t for t in self.lost if t.track_id not in self.removed_ids]
        self.removed_ids.update(t.track_id for t in removed)
        self.tracked, self.lost = self._remove_duplicates(self.tracked, self.lost)
        return self._output([t for t in self.tracked if t.is_activated])

    def _remove_duplicates(self, a: list[Track], b: list[Track]) -> tuple[list[Track], list[Track]]:
        """Of a tracked and a lost track closer than ``duplicate_thresh`` in IoU distance, drop the younger."""
        if not a or not b:
            return a, b
        distance = 1.0 - self.duplicate_iou(track_boxes(a), track_boxes(b)).scores
        drop_a, drop_b = set(), set()
        for p, q in zip(*np.nonzero(distance < self.duplicate_thresh)):
            age_p = a[p].frame_id - a[p].start_frame
            age_q = b[q].frame_id - b[q].start_frame
            if age_p > age_q:
                drop_b.add(q)
            else:
                drop_a.add(p)
        return ([t for i, t in enumerate(a) if i not in drop_a], [t for i, t in enumerate(b) if i not in drop_b])

    def _output(self, tracks: list[Track]) -> TrackOutput:
        if not tracks:
            return TrackOutput.empty()
        boxes = track_boxes(tracks)
        keep = np.ones(len(tracks), bool)
        w, h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
        if self.min_box_area is not None:
            keep &= w * h > self.min_box_area
        if self.aspect_ratio_thresh is not None:
            keep &= ~(w / h > self.aspect_ratio_thresh)
        return TrackOutput(np.array([t.track_id for t in tracks], np.int64)[keep], boxes[keep],
                           np.array([t.score for t in tracks])[keep])
