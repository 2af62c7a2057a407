"""ByteTrack (Zhang et al., ECCV 2022), a faithful port of the official ``BYTETracker.update`` with swappable matchers.

Follows ifzhang/ByteTrack (reference/trackers.md section 1), not mmdet's variant: two-stage association (high, then
low-score detections against the still-tracked tracks), lapjv with ``cost_limit``, score fusion in the first and
unconfirmed stages, unconfirmed tracks confirmed by a second detection, new tracks only from scores
>= ``track_thresh + 0.1``, lost tracks kept ``int(buffer_frame_rate / 30 * track_buffer)`` frames, duplicate removal
between tracked and lost tracks, and the Kalman state (not the detection) as the output box. The tracks of a video
are rows of a :class:`.TrackStore` (the official lifecycle on stacked arrays: no pass over track objects per frame;
the Kalman steps run on the store's rows in place). The stages it shares with FairMOT's :class:`.JDETracker`
(prediction, the IoU-family stages, initiation, removal, output) are :mod:`.byte_stages`'.

``matcher`` replaces the IoU of the three association stages: the cost is ``1 - S`` (``1 - S * score`` where the
original fused scores), pairs a gate rejects cost 1. Duplicate removal keeps the original IoU, as it is
bookkeeping, not association.

Registered as ``BYTETracker`` (the official class name): mmdet's differently-behaving ``ByteTracker`` stays
reachable under its own name, so mmdet's ByteTrack configs keep working in the ``vastmat`` scope.

Checked against the official code's own output (``../shared/data``: MOT15 TUD and AnimalTrack at 10 FPS, both
lost-buffer rules) in tests/models/trackers/test_bytetrack_golden.py. Speed: the Kalman filter runs batched over all
tracks of a stage, one similarity matrix per frame serves the three stages, an empty stage builds no matrix, and the
per-frame arithmetic on tens of boxes runs in compiled loops (IoU, box conversions, Kalman steps, the assignment's
bookkeeping): 6.5-8.7x the official code and 3.6-4.2x Roboflow ``trackers``' ByteTrack on AnimalTrack-10fps-sim
(docs/matchers.md).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from vastmat.registry import MATCHERS, MODELS, TASK_UTILS
from vastmat.structures.bbox import ltwh_to_xyah, ltwh_to_xyxy, xyxy_to_ltwh
from vastmat.structures.tracking import TrackingFrame, TrackOutput

from ..association.search_spaces import MATCHER_AXIS
from ..association.solvers import LapJV
from ..motion import KalmanFilterXYAH  # noqa: F401  (registered in TASK_UTILS: the default motion model)
from .base_tracker import BaseTracker
from .byte_stages import (REPORTED_BOXES, buffer_size, check_reported_box, frame_similarity, initiate, match_stage,
                          predict_pool, removed_rows, reported_rows, store_kalman_boxes)
from .track_lifecycle import TRACKED
from .track_store import KalmanTrackStore


@MODELS.register_module()
class BYTETracker(BaseTracker):
    """The official BYTETracker (its defaults are the official code's).

    Args:
        track_thresh: high-score threshold (``score > track_thresh``); new tracks need ``track_thresh + 0.1``.
        low_thresh: lower bound of the second-stage detections (``score > 0.1``, hard-coded in the original).
        track_buffer: frames a lost track is kept, at 30 FPS (scaled by ``buffer_frame_rate / 30``).
        buffer_frame_rate: the frame rate of that scaling. 30 (default) reproduces the official evaluator, which
            builds every tracker with ``frame_rate=30`` whatever the video's rate (lost tracks live
            ``track_buffer`` frames); None takes each video's rate from its seqinfo.ini (at 10 FPS: a third).
        match_thresh: lapjv ``cost_limit`` of the first association.
        second_match_thresh, unconfirmed_match_thresh: the original's 0.5 and 0.7.
        fuse_score: multiply the similarity by the detection score in the first and unconfirmed stages (the
            original's ``not mot20``).
        duplicate_thresh: tracked/lost pairs with IoU distance below this are duplicates (0.15).
        matcher: similarity of the association stages (default: IoU with the +1 pixel convention).
        motion: the motion model, a ``TASK_UTILS`` config with ``initiate_rows``, ``predict_rows`` and ``update_rows``
            (stepping rows of the track store in place; default: the batched xyah ``KalmanFilterXYAH``).
        min_box_area, aspect_ratio_thresh: the official evaluator's output filter: boxes with ``w * h <=
            min_box_area`` or ``w / h > aspect_ratio_thresh`` are not reported (``None`` disables a filter; the
            vertical filter is a pedestrian prior, so the VastMAT configs disable it).
        reported_box: the box written for a track: ``'kalman'`` (the official: the Kalman state after its update)
            or ``'detection'`` (the detection it was matched to this frame, as Roboflow ``trackers``' ByteTrack
            reports; every reported track was matched or started this frame).
        new_track_margin: a new track needs ``score >= track_thresh + new_track_margin`` (the official 0.1; BoxMOT 0).
        lost_in_second_stage: the low-score stage also offers lost tracks (unmatched by the first), which it
            re-activates (Roboflow ``trackers``); the official offers tracked ones only.
        freeze_lost_height: lost tracks predict with their height velocity zeroed (the official; False: Roboflow).
    """

    zoo_name = 'ByteTrack'
    experiment_name = 'bytetrack'
    study_config = 'bytetrack/bytetrack_cached-dets.py'
    study_own_matcher = 'iou'
    # first-stage match threshold: the VastMAT paper's 0.6 (section 5.4), the official code's 0.9
    study_match_thresh = ('match_thresh', dict(paper=0.6, official=0.9))
    speed_options = {}
    # tools/tune.py: every threshold of the three stages and of initiation, the buffer, the output filter and box,
    # and the matcher; 'thresholds' keeps the official IoU matcher
    search_spaces = dict(
        default=dict(track_thresh=('float', 0.3, 0.8), low_thresh=('float', 0.05, 0.3),
                     match_thresh=('float', 0.5, 0.95), second_match_thresh=('float', 0.3, 0.9),
                     unconfirmed_match_thresh=('float', 0.5, 0.95), track_buffer=('int', 10, 150),
                     fuse_score=('categorical', [True, False]), min_box_area=('categorical', [None, 10, 100]),
                     reported_box=('categorical', list(REPORTED_BOXES)), new_track_margin=('float', 0.0, 0.2),
                     lost_in_second_stage=('categorical', [False, True]),
                     freeze_lost_height=('categorical', [True, False]), duplicate_thresh=('float', 0.0, 0.3),
                     matcher=MATCHER_AXIS),
        thresholds=dict(track_thresh=('float', 0.3, 0.8), match_thresh=('float', 0.5, 0.95),
                        track_buffer=('int', 10, 150), reported_box=('categorical', list(REPORTED_BOXES))))

    def __init__(self, track_thresh: float = 0.6, low_thresh: float = 0.1, track_buffer: int = 30,
                 buffer_frame_rate: float | None = 30, match_thresh: float = 0.9, second_match_thresh: float = 0.5,
                 unconfirmed_match_thresh: float = 0.7, fuse_score: bool = True, duplicate_thresh: float = 0.15,
                 matcher: dict | Any | None = None, motion: dict | Any | None = None,
                 min_box_area: float | None = 100, aspect_ratio_thresh: float | None = None,
                 reported_box: str = 'kalman', new_track_margin: float = 0.1, lost_in_second_stage: bool = False,
                 freeze_lost_height: bool = True, init_cfg: dict | None = None) -> None:
        super().__init__(init_cfg)
        self.reported_box = check_reported_box(reported_box)
        self.track_thresh, self.low_thresh = track_thresh, low_thresh
        self.det_thresh = track_thresh + new_track_margin
        self.lost_in_second_stage, self.freeze_lost_height = lost_in_second_stage, freeze_lost_height
        self.track_buffer, self.buffer_frame_rate = track_buffer, buffer_frame_rate
        self.fuse_score = fuse_score
        self.min_box_area, self.aspect_ratio_thresh = min_box_area, aspect_ratio_thresh
        matcher = matcher if matcher is not None else dict(type='IoU', plus_one=True)
        self.matcher = MATCHERS.build(matcher) if isinstance(matcher, dict) else matcher
        self.first_solver, self.second_solver, self.unconfirmed_solver = (
            LapJV(match_thresh), LapJV(second_match_thresh), LapJV(unconfirmed_match_thresh))
        motion = motion if motion is not None else dict(type='KalmanFilterXYAH')
        self.motion = TASK_UTILS.build(motion) if isinstance(motion, dict) else motion
        # the tracks of a video as rows of arrays: the xyah Kalman state and the detection taken last (ltwh)
        self.tracks = KalmanTrackStore(boxes=store_kalman_boxes, duplicate_thresh=duplicate_thresh)
        if buffer_frame_rate is None:
            self.required_inputs = ('frame_rate', )

    def reset(self) -> None:
        self.tracks.reset()

    def max_time_lost(self, frame: TrackingFrame) -> int:
        """Frames a lost track is kept: ``int(rate / 30 * track_buffer)`` (official ``buffer_size``)."""
        return buffer_size(self.track_buffer, self.buffer_frame_rate, frame)

    # ---------------------------------------------------------------------------------------------------- helpers
    def _apply_updates(self, rows: np.ndarray, dets: np.ndarray, ltwh: np.ndarray, scores: np.ndarray,
                       frame_id: int) -> None:
        """Kalman update of every matched row at once, in match order (the official ``update`` /
        ``re_activate``); ``dets`` are their rows of ``ltwh``."""
        if not len(rows):
            return
        store = self.tracks
        self.motion.update_rows(store.mean, store.covariance, rows, ltwh_to_xyah(ltwh[dets]))
        store.detection_box[rows] = ltwh[dets]
        store.mark_matched(rows, scores[dets], frame_id)

    # ----------------------------------------------------------------------------------------------------- update
    def update(self, frame: TrackingFrame) -> TrackOutput:
        frame_id, scores = frame.frame_id, frame.scores
        high = scores > self.track_thresh
        second = (scores > self.low_thresh) & (scores < self.track_thresh)
        # all detections used this frame, in one array: high first, then second; the original keeps detections
        # as left, top, width, height and recomputes x2 = left + width for costs
        high, second = high.nonzero()[0], second.nonzero()[0]
        used = np.concatenate([high, second])
        ltwh = xyxy_to_ltwh(frame.bboxes[used])
        boxes = ltwh_to_xyxy(ltwh)
        det_scores = scores[used]
        num_high = len(high)
        second_idx = np.arange(num_high, len(boxes))

        store = self.tracks
        pool, unconfirmed = predict_pool(self.motion, store, self.freeze_lost_height)

        # one similarity matrix for the three stages
        rows = np.concatenate([pool, unconfirmed])
        similarity = frame_similarity(self.matcher, store, rows, boxes, num_high)
        fuse_scores = det_scores if self.fuse_score else None

        # first association: high-score detections against tracked and lost tracks (lost ones are re-activated);
        # high detections are the first rows of `boxes`
        first = match_stage(self.first_solver, similarity, slice(0, len(pool)), slice(0, num_high), fuse_scores)
        first_rows = pool[first.matches[:, 0]]
        first_tracked = store.state[first_rows] == TRACKED

        # second association: low-score detections against the remaining tracks that were tracked (not lost ones,
        # unless lost_in_second_stage)
        remaining_rows = first.unmatched_rows
        if not self.lost_in_second_stage:
            remaining_rows = remaining_rows[store.state[pool[remaining_rows]] == TRACKED]
        remaining = pool[remaining_rows]
        second_stage = match_stage(self.second_solver, similarity, remaining_rows, second_idx)
        second_rows = remaining[second_stage.matches[:, 0]]
        second_tracked = store.state[second_rows] == TRACKED
        unmatched = remaining[second_stage.unmatched_rows]
        new_lost = unmatched[store.state[unmatched] == TRACKED]

        # unconfirmed tracks against the high-score detections left over
        left = first.unmatched_cols
        third = match_stage(self.unconfirmed_solver, similarity, slice(len(pool), len(rows)), left, fuse_scores)
        third_rows = unconfirmed[third.matches[:, 0]]
        self._apply_updates(np.concatenate([first_rows, second_rows, third_rows]),
                            np.concatenate([first.matches[:, 1], second_idx[second_stage.matches[:, 1]],
                                            left[third.matches[:, 1]]]), ltwh, det_scores, frame_id)
        activated = [first_rows[first_tracked], second_rows[second_tracked], third_rows]
        refound = np.concatenate([first_rows[~first_tracked], second_rows[~second_tracked]])

        # initiation: new tracks from the high-score detections nobody took (score >= track_thresh + new_track_margin)
        activated.append(initiate(self.motion, store, left[third.unmatched_cols], det_scores, self.det_thresh,
                                  frame_id, ltwh))

        # removal: unconfirmed tracks without a match, lost tracks older than the buffer
        removed = removed_rows(store, unconfirmed, third.unmatched_rows, frame_id, self.max_time_lost(frame))
        return self._output(store.finish_frame(np.concatenate(activated), refound, new_lost, removed))

    def _output(self, rows: np.ndarray) -> TrackOutput:
        if not len(rows):
            return TrackOutput.empty()
        store = self.tracks
        kept, boxes = reported_rows(store, rows, self.reported_box, self.min_box_area, self.aspect_ratio_thresh)
        return TrackOutput(store.ids[kept], boxes, store.score[kept])
