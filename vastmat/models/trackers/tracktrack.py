"""TrackTrack (Shim et al., CVPR 2025, "Focusing on Tracks for Online Multi-Object Tracking"), a faithful port of the
official ``Tracker.update`` (kamkyu94/TrackTrack, reference/trackers.md section 3) with a swappable geometric term.

Per frame: camera-motion compensation and a Kalman prediction (xywh state, NSA noise) for every track; *TPA*, the
track-perspective association of tracked and lost tracks against all detections (high, low and the high-scoring
ones the detector's NMS suppressed), with the cost ``0.50 (1 - HMIoU) + 0.50 cos + 0.10 conf + 0.05 angle``, penalties
on the low and suppressed columns, an IoU gate and iterative mutual-best matching with a tightening threshold; a
second TPA of the unconfirmed (New) tracks against the high detections left; removal of stale tracks; *TAI*, the
track-aware initialisation (an order-dependent NMS of the candidates against the alive tracks and each other). A
track is reported (Tracked) once it has ``min_len`` observations; the reported box is the Kalman state.

Faithful quirks kept (reference/trackers.md 3, "Pitfalls"): ``get_prev_box`` looks up only ``frame - delta_t``; the
'lb'/'rb' corner velocities use ``y2 - y1``; the track velocity is a sum of unit vectors; a frame without any
detection drops every New track and reports the tracked ones at their predicted boxes.

Differences, all switches: ``matcher`` gives the geometric term (default the official HMIoU with the +1 pixel IoU);
without appearance features the appearance term is dropped and the other weights are scaled so that the weights
still sum to their full total (the official code would add a constant 0.5); the NMS-0.95 detection set
(``deleted_dets``) and camera motion (``camera_motion``) come from the frame input and a ``TASK_UTILS`` component.

The tracks of a video are rows of a :class:`TPATable` (stacked arrays): each step above gathers the
columns of the rows it needs with one index, the Kalman steps run on the rows in place, no pass over track objects.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from vastmat.registry import MATCHERS, MODELS, TASK_UTILS
from vastmat.structures.bbox import cxcywh_to_xyxy, xyxy_to_cxcywh
from vastmat.structures.tracking import FrameDetections, TrackingFrame, TrackOutput

from ..association.search_spaces import MATCHER_AXIS
from ..association.solvers import MutualBest
from ..motion import KalmanFilterXYWH  # noqa: F401  (registered in TASK_UTILS: the default motion model)
from .base_tracker import BaseTracker
from .motion_context import matcher_context
from .track_lifecycle import LOST, NEW, REMOVED, TRACKED, moving_average_unit, reported_mask
from .track_store import KalmanTracks, TrackList, TrackRows, column
from .tracktrack_costs import angle_distance, confidence_distance, corner_directions, cosine_distance
from .tracktrack_nms import deleted_rows_read, track_aware_nms

DEFAULT_WEIGHTS = dict(geometric=0.50, appearance=0.50, confidence=0.10, direction=0.05)


# a history slot never written (no frame number, negative ones included, equals it)
_NEVER = np.iinfo(np.int64).min


class TPATable(KalmanTracks, TrackList):
    """TrackTrack's tracks of one video: a :class:`.TrackList` (the live rows in creation order: the official track
    list) with the xywh Kalman state (``frame_id`` is the official ``end_frame``) and these columns. The detection
    boxes of the last ``delta_t + 1`` frames form a ring indexed by ``frame % (delta_t + 1)`` (the official
    ``recent_boxes`` dict), its length given when the table is built."""

    box: np.ndarray = column((4, ))  # the last detection
    prev_score: np.ndarray = column(())
    feature: np.ndarray = column((0, ))  # the appearance (its dimension set by the first frame with features)
    has_feature: np.ndarray = column((), bool)
    velocity: np.ndarray = column((4, 2))  # of the corners
    num_observations: np.ndarray = column((), np.int64)
    history_box: np.ndarray = column((0, 4))  # the ring: (delta_t + 1, 4) boxes
    history_frame: np.ndarray = column((0, ), np.int64)  # the frame each slot of the ring holds

    def __init__(self, delta_t: int) -> None:
        self.slots = delta_t + 1
        super().__init__(dict(history_box=((self.slots, 4), np.float64), history_frame=((self.slots, ), np.int64)))

    def observed_boxes(self, rows: np.ndarray, frame: int, fallback: np.ndarray) -> np.ndarray:
        """The detection boxes of ``rows`` observed at ``frame``, ``fallback`` rows where a track has none (official
        ``recent_boxes.get(frame, fallback)``)."""
        slot = frame % self.slots
        found = self.history_frame[rows, slot] == frame
        return np.where(found[:, None], self.history_box[rows, slot], fallback)

    def record_boxes(self, rows: np.ndarray, boxes: np.ndarray, frame: int) -> None:
        """Remember ``boxes`` as observed at ``frame`` (the slot of ``frame - delta_t - 1``, which the official
        history drops now)."""
        slot = frame % self.slots
        self.history_box[rows, slot] = boxes
        self.history_frame[rows, slot] = frame


@MODELS.register_module()
class TrackTrackTracker(BaseTracker):
    """The official TrackTrack tracker; defaults are the official code's (DanceTrack test thresholds).

    Args:
        det_thr: high-score threshold (``score > det_thr``); lower detections are low ones.
        init_thr: TAI's score threshold of new tracks.
        match_thr: the first mutual-best pass takes costs below this; it drops by ``reduce_step`` per pass.
        reduce_step: see ``match_thr`` (0.05).
        penalty_p, penalty_q: added to the cost of low and of NMS-suppressed (deleted) detections (0.20, 0.40).
        tai_thr: TAI's IoU threshold (0.55).
        min_len: observations before a track is reported (3).
        max_time_lost: frames a track lives unmatched; None takes ``2 * frameRate`` of the video, as the official
            ``run.py`` overwrites it per sequence (VastMAT paper: 20).
        matcher: the geometric similarity (default TrackTrack's HMIoU with the +1 pixel IoU); its own gate, if any,
            is applied on top of ``gate``.
        gate: pairs it rejects cost 1 (default: IoU <= 0.10, the official constraint; VastMAT configs: the
            normalised DIoU gate of paper E.1).
        weights: the cost weights ``geometric``, ``appearance``, ``confidence``, ``direction`` (official 0.50,
            0.50, 0.10, 0.05). In frames without features the appearance term is dropped and the others are scaled
            by ``total / (total - appearance)``.
        delta_t: frames back for the direction term and the velocity (3).
        deleted_dets: name of the frame's extra detection set holding the NMS-0.95 detections
            (``extra_dets.nms95``); None runs without suppressed detections (no ``penalty_q`` column).
        camera_motion: a ``TASK_UTILS`` camera-motion config (``CachedCameraMotion(warp_root=...)``,
            ``ECCCameraMotion()``) giving each frame's ``(2, 3)`` affine; None: no compensation.
        freeze_wh_velocity: zero the w/h velocities of tracks not Tracked before predicting (official: DanceTrack
            only).
        motion: the Kalman filter (``TASK_UTILS``; default the xywh NSA ``KalmanFilterXYWH``).
        min_box_area, aspect_ratio_thresh: output filter (official: area > 100 always; w/h > 1.6 on MOT only).
        video_overrides: per-video thresholds, the official ``set_parameters``: a list of
            ``dict(contains=('01', '03'), det_thr=..., init_thr=...)``; the first entry with a substring of the
            video's name applies (MOT17: '01', '03', '12' -> 0.65 / 0.75, ...).
    """

    zoo_name = 'TrackTrack'
    zoo_demo_parts = {'features': 'reid/reid_tiny_zoo_vastmat-demo.py'}  # the demo ReID model's features
    # MotionAdaptiveCDA chosen for TrackTrack as the fragment's defaults for ByteTrack (same selection half, rows
    # and criterion; 128 grid points, a_fast = a_still ones, i.e. fixed CDA, excluded): its TPA scores and
    # thresholds favour the centre term on every track (CDA fixed beats IoU even at 10 FPS), so a still or crowded
    # track keeps 3/4 of it (a_still 0.25) and an isolated one (no other detection within one mean diagonal) that
    # moves at all gets the centre term alone
    matcher_overrides = dict(cda_motion_adaptive=dict(r_low=0.0, r_high=0.005, crowd_radius=1.0, crowd_full=1.0,
                                                      a_still=0.25, a_fast=0.0))
    experiment_name = 'tracktrack'
    study_config = 'tracktrack/tracktrack_cached-dets.py'
    study_own_matcher = 'hmiou'
    # the paper's 0.60 equals the official DanceTrack test setting
    study_match_thresh = ('match_thr', dict(paper=0.6, official=0.6))
    # on boxes alone: the simulated sets have no features, no NMS-0.95 set, no camera motion, no AFLink
    study_options = ('model.tracker.deleted_dets=None', 'model.tracker.camera_motion=None',
                     'model.post_processors=[]')
    study_cost = 2
    # tools/tune.py: the detection / initiation / match thresholds, the iterative step and its penalties, TAI, the
    # lost buffer, the output filter and the matcher (its own height-modulated IoU first)
    search_spaces = dict(default=dict(
        det_thr=('float', 0.3, 0.8), init_thr=('float', 0.4, 0.9), match_thr=('float', 0.3, 0.9),
        reduce_step=('float', 0.0, 0.15), penalty_p=('float', 0.0, 0.5), penalty_q=('float', 0.0, 0.8),
        tai_thr=('float', 0.3, 0.8), min_len=('int', 1, 6), max_time_lost=('int', 10, 90),
        min_box_area=('categorical', [None, 10, 100]),
        # the motion-adaptive CDA's fast weight at most its still weight, 0.25 here (matcher_overrides)
        matcher=dict(hmiou={}, **dict(MATCHER_AXIS, cda_motion_adaptive=dict(
            MATCHER_AXIS['cda_motion_adaptive'], a_fast=('float', 0.0, 0.25))))))
    speed_options = dict(deleted_dets=None, max_time_lost=20)  # no NMS-0.95 set, the VastMAT paper's buffer
    speed_features = True

    @classmethod
    def deleted_rows_setting(cls, tracker: dict) -> tuple[str, float] | None:
        """For a config of this tracker (``model.tracker``): the name of the extra detection set whose rows it reads
        as deleted detections, and the lowest ``det_thr`` of any video (:func:`.tracktrack_nms.deleted_rows_read`
        keeps the rows above it); None where it reads no such set."""
        import inspect
        defaults = {name: p.default for name, p in inspect.signature(cls).parameters.items()}
        name = tracker.get('deleted_dets', defaults['deleted_dets'])
        if name is None:
            return None
        thresholds = [tracker.get('det_thr', defaults['det_thr'])]
        thresholds += [o['det_thr'] for o in tracker.get('video_overrides') or () if 'det_thr' in o]
        return name, min(thresholds)

    def __init__(self, det_thr: float = 0.60, init_thr: float = 0.60, match_thr: float = 0.60,
                 reduce_step: float = 0.05, penalty_p: float = 0.20, penalty_q: float = 0.40, tai_thr: float = 0.55,
                 min_len: int = 3, max_time_lost: int | None = None, matcher: dict | Any | None = None,
                 gate: dict | Any | None = None, weights: dict | None = None, delta_t: int = 3,
                 deleted_dets: str | None = 'nms95', camera_motion: dict | Any | None = None,
                 freeze_wh_velocity: bool = False, motion: dict | Any | None = None,
                 min_box_area: float | None = 100, aspect_ratio_thresh: float | None = None,
                 video_overrides: list[dict] | None = None, init_cfg: dict | None = None) -> None:
        super().__init__(init_cfg)
        self.video_overrides = [dict(o) for o in video_overrides or []]
        for override in self.video_overrides:
            unknown = set(override) - {'contains', 'det_thr', 'init_thr', 'match_thr'}
            if unknown or 'contains' not in override:
                raise KeyError(f'TrackTrackTracker: a video override needs "contains" and may set det_thr, init_thr, '
                               f'match_thr; got keys {sorted(override)}')
        self.defaults = dict(det_thr=det_thr, init_thr=init_thr, match_thr=match_thr)
        self.det_thr, self.init_thr, self.match_thr, self.reduce_step = det_thr, init_thr, match_thr, reduce_step
        self.penalty_p, self.penalty_q, self.tai_thr = penalty_p, penalty_q, tai_thr
        self.min_len, self.max_time_lost, self.delta_t = min_len, max_time_lost, delta_t
        self.deleted_dets, self.freeze_wh_velocity = deleted_dets, freeze_wh_velocity
        self.min_box_area, self.aspect_ratio_thresh = min_box_area, aspect_ratio_thresh
        matcher = matcher if matcher is not None else dict(type='HMIoU', plus_one=True)
        self.matcher = MATCHERS.build(matcher) if isinstance(matcher, dict) else matcher
        gate = gate if gate is not None else dict(type='IoUGate', thr=0.10, plus_one=True)
        self.gate = MATCHERS.build(gate) if isinstance(gate, dict) else gate
        self.weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
        unknown = set(self.weights) - set(DEFAULT_WEIGHTS)
        if unknown:
            raise KeyError(f'TrackTrackTracker: unknown cost weight(s) {sorted(unknown)}; the terms are '
                           f'{list(DEFAULT_WEIGHTS)}')
        self.weights = {**{k: 0.0 for k in DEFAULT_WEIGHTS}, **self.weights}
        motion = motion if motion is not None else dict(type='KalmanFilterXYWH')
        self.motion = TASK_UTILS.build(motion) if isinstance(motion, dict) else motion
        self.camera_motion = (TASK_UTILS.build(camera_motion) if isinstance(camera_motion, dict)
                              else camera_motion)
        required = list(getattr(self.camera_motion, 'required_inputs', ()))
        if deleted_dets is not None:
            required.append(f'extra_dets.{deleted_dets}')
        if max_time_lost is None:
            required.append('frame_rate')
        self.required_inputs = tuple(required)
        self.tracks = TPATable(delta_t)
        self.reset()

    def reset(self) -> None:
        self.tracks.reset()
        self._video = None
        for name, value in self.defaults.items():
            setattr(self, name, value)
        if self.camera_motion is not None:
            self.camera_motion.reset()

    def time_lost_limit(self, frame: TrackingFrame) -> int:
        """``max_time_lost``, or ``int(2 * frameRate)`` (official ``run.py``)."""
        if self.max_time_lost is not None:
            return self.max_time_lost
        frame.require('frame_rate')
        return int(frame.frame_rate) * 2

    # ------------------------------------------------------------------------------------------ track state
    def _compensate_and_predict(self, rows: np.ndarray, warp: np.ndarray | None) -> None:
        if not len(rows):
            return
        table = self.tracks
        if warp is not None:
            table.mean[rows], table.covariance[rows] = self.motion.warp(table.mean[rows], table.covariance[rows],
                                                                        warp)
        if self.freeze_wh_velocity:
            table.mean[rows[table.state[rows] != TRACKED], 6:8] = 0.0
        self.motion.predict_rows(table.mean, table.covariance, rows)

    def _update(self, rows: np.ndarray, dets: FrameDetections, frame_id: int) -> None:
        """Official ``Track.update`` of every matched row at once: NSA Kalman update, feature EMA, history and the
        corner velocity."""
        if not len(rows):
            return
        table, boxes, scores = self.tracks, dets.bboxes, dets.scores
        self.motion.update_rows(table.mean, table.covariance, rows, xyxy_to_cxcywh(boxes), scores)
        # the corner velocity: the directions from the box delta = 1 .. delta_t frames ago (this frame's box where
        # the track has none) to this frame's, summed delta by delta as the official loop, for all tracks at once
        previous = np.stack([table.observed_boxes(rows, frame_id - delta, boxes)
                             for delta in range(1, self.delta_t + 1)])  # (delta_t, n, 4)
        # summed over the deltas in order (numpy adds along a leading axis one slice after the other: 0 + d1 + d2 ..)
        table.velocity[rows] = corner_directions(previous, boxes[None]).sum(axis=0)
        if dets.features is not None:
            beta = 0.95 + (1 - 0.95) * (1 - scores)
            table.feature[rows] = moving_average_unit(table.feature[rows], dets.features, beta)
        table.record_boxes(rows, boxes, frame_id)
        table.num_observations[rows] += 1
        table.box[rows] = boxes
        table.prev_score[rows] = table.score[rows]
        table.score[rows], table.frame_id[rows] = scores, frame_id
        table.state[rows] = np.where(table.num_observations[rows] >= self.min_len, TRACKED, NEW)

    # ------------------------------------------------------------------------------------------------- TPA
    def _weights(self, with_features: bool) -> dict:
        if with_features:
            return self.weights
        total = sum(self.weights.values())
        scale = total / (total - self.weights['appearance'])
        return {k: (0.0 if k == 'appearance' else w * scale) for k, w in self.weights.items()}

    def tpa_cost(self, rows: np.ndarray, dets: FrameDetections, num_high: int, num_low: int,
                 frame_id: int, num_high_conf: int | None = None) -> np.ndarray:
        """The TPA cost of the tracks at ``rows`` of :attr:`tracks` against ``dets`` (``num_high`` high, then
        ``num_low`` low, then deleted ones), official ``iterative_assigment``'s matrix: weighted terms, penalties,
        gate, clipped to [0, 1]. ``num_high_conf`` (the frame's high detections) is the matcher's frame context
        (adaptive CDA)."""
        n, m = len(rows), len(dets)
        if n == 0 or m == 0:
            return np.ones((n, m))
        table = self.tracks
        track_boxes = cxcywh_to_xyxy(table.mean[rows, :4])
        with_features = dets.features is not None and table.has_feature[rows].all()
        weights = self._weights(with_features)
        similarity = self.matcher(track_boxes, dets.bboxes, **matcher_context(
            self.matcher, TrackRows(table, rows), num_high if num_high_conf is None else num_high_conf))
        allowed = self.gate(track_boxes, dets.bboxes, similarity.geometry)
        if similarity.gate is not None:
            allowed = allowed & similarity.gate
        cost = weights['geometric'] * (1 - similarity.scores)
        if with_features:
            cost = cost + weights['appearance'] * cosine_distance(table.feature[rows], dets.features)
        scores, prev_scores = table.score[rows], table.prev_score[rows]
        # official get_prev_box: the box observed delta_t frames ago, else the newest one
        prev_boxes = table.observed_boxes(rows, frame_id - self.delta_t, table.box[rows])
        # the direction term only where the gate allows a pair (the rejected ones cost 1 below): the few pairs
        # that overlap, not every track with every detection
        cost += (weights['confidence'] * confidence_distance(scores, prev_scores, dets.scores)
                 + weights['direction'] * angle_distance(table.velocity[rows], prev_boxes, dets.bboxes,
                                                         dets.scores, pairs=allowed))
        cost[:, num_high:num_high + num_low] += self.penalty_p
        cost[:, num_high + num_low:] += self.penalty_q
        cost[~allowed] = 1.
        return np.clip(cost, 0, 1)

    def _associate(self, rows: np.ndarray, dets: FrameDetections, num_high: int, num_low: int,
                   frame_id: int, num_high_conf: int):
        cost = self.tpa_cost(rows, dets, num_high, num_low, frame_id, num_high_conf)
        return MutualBest(self.match_thr, self.reduce_step)(cost)

    # ---------------------------------------------------------------------------------------------- update
    def _apply_video_overrides(self, video_name: str) -> None:
        self._video = video_name
        for override in self.video_overrides:
            if any(part in video_name for part in override['contains']):
                for name in ('det_thr', 'init_thr', 'match_thr'):
                    setattr(self, name, override.get(name, self.defaults[name]))
                return

    def update(self, frame: TrackingFrame) -> TrackOutput:
        frame_id = frame.frame_id
        if self._video != frame.video_name:
            self._apply_video_overrides(frame.video_name)
        warp = self.camera_motion.warp(frame) if self.camera_motion is not None else None
        if len(frame.detections) == 0:
            return self._update_without_detections(frame, warp)
        dets = frame.detections
        if dets.features is None or self.weights['appearance'] == 0:
            dets = FrameDetections(dets.bboxes, dets.scores, dets.labels, None)
        high = dets.scores > self.det_thr
        parts = [dets.select(high), dets.select(~high)]
        if self.deleted_dets is not None:
            frame.require(f'extra_dets.{self.deleted_dets}')
            extra = frame.extra_dets[self.deleted_dets]
            deleted = extra.select(deleted_rows_read(frame.detections, extra, self.det_thr))
            if dets.features is None:
                deleted = FrameDetections(deleted.bboxes, deleted.scores, deleted.labels, None)
            parts.append(deleted)
        num_high, num_low = len(parts[0]), len(parts[1])
        candidates = _concat(parts)

        table = self.tracks
        if dets.features is not None:
            table.set_row_shape('feature', dets.features.shape[1:], f'video {frame.video_name!r} frame {frame_id}')
        state = table.state[table.live]
        is_new = state == NEW
        tracked_lost, new = table.live[~is_new], table.live[is_new]  # (live tracks are New, Tracked or Lost)
        self._compensate_and_predict(table.live, warp)

        # TPA 1: tracked and lost tracks against high, low and deleted detections
        first = self._associate(tracked_lost, candidates, num_high, num_low, frame_id, num_high)
        self._update(tracked_lost[first.matches[:, 0]], candidates.select(first.matches[:, 1]), frame_id)
        table.state[tracked_lost[first.unmatched_rows]] = LOST

        # TPA 2: new tracks against the high detections left (no penalties)
        left = candidates.select(first.unmatched_cols[first.unmatched_cols < num_high])
        second = self._associate(new, left, len(left), 0, frame_id, num_high)
        self._update(new[second.matches[:, 0]], left.select(second.matches[:, 1]), frame_id)
        table.state[new[second.unmatched_rows]] = REMOVED

        self._remove_stale(frame)
        # TAI: new tracks from the high detections nobody took
        remaining = left.select(second.unmatched_cols)
        alive = table.live[table.state[table.live] != LOST]
        start = track_aware_nms(cxcywh_to_xyxy(table.mean[alive, :4]), remaining.bboxes, remaining.scores,
                                self.tai_thr, self.init_thr)
        self._initiate(remaining.select(start), frame_id)
        return self._output()

    def _update_without_detections(self, frame: TrackingFrame, warp: np.ndarray | None) -> TrackOutput:
        """Official ``update_without_detections``: New tracks are dropped, the others compensated, predicted and
        aged; tracked ones are reported at their predicted boxes."""
        table = self.tracks
        table.keep(table.state[table.live] != NEW)
        self._compensate_and_predict(table.live, warp)
        self._remove_stale(frame)
        return self._output()

    def _remove_stale(self, frame: TrackingFrame) -> None:
        limit = self.time_lost_limit(frame)
        table = self.tracks
        live = table.live
        table.keep((table.state[live] != REMOVED) & ~(frame.frame_id - table.frame_id[live] > limit))

    def _initiate(self, dets: FrameDetections, frame_id: int) -> None:
        """New (unconfirmed) tracks from ``dets``, ids consecutive in detection order, appended to the list."""
        if len(dets) == 0:
            return
        table = self.tracks
        features = {} if dets.features is None else dict(feature=dets.features, has_feature=True)
        rows = table.add(dets.scores, frame_id, state=NEW, box=dets.bboxes, prev_score=dets.scores,
                         num_observations=1, history_frame=_NEVER, **features)
        table.record_boxes(rows, dets.bboxes, frame_id)
        self.motion.initiate_rows(table.mean, table.covariance, rows, xyxy_to_cxcywh(dets.bboxes))

    def _output(self) -> TrackOutput:
        table = self.tracks
        rows = table.live[table.state[table.live] == TRACKED]
        if not len(rows):
            return TrackOutput.empty()
        boxes = cxcywh_to_xyxy(table.mean[rows, :4])
        keep = reported_mask(boxes, self.min_box_area, self.aspect_ratio_thresh)
        kept = rows[keep]
        features = table.feature[kept] if table.has_feature[rows].all() else None
        return TrackOutput(table.ids[kept], boxes[keep], table.score[kept], features)


def _concat(parts: list[FrameDetections]) -> FrameDetections:
    """The detection sets one after the other (features kept only when every set has them)."""
    features = ([p.features for p in parts] if all(p.features is not None for p in parts) else None)
    return FrameDetections(np.concatenate([p.bboxes for p in parts]).reshape(-1, 4),
                           np.concatenate([p.scores for p in parts]),
                           np.concatenate([p.labels for p in parts]) if all(p.labels is not None for p in parts)
                           else None,
                           np.concatenate(features) if features is not None else None)
