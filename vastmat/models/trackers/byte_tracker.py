"""ByteTrack (Zhang et al., ECCV 2022), a faithful port of the official ``BYTETracker.update`` with swappable matchers.

Follows ifzhang/ByteTrack (reference/trackers.md section 1), not mmdet's variant: two-stage association (high, then
low-score detections against the still-tracked tracks), lapjv with ``cost_limit``, score fusion in the first and
unconfirmed stages, unconfirmed tracks confirmed by a second detection, new tracks only from scores
>= ``track_thresh + 0.1``, lost tracks kept ``int(buffer_frame_rate / 30 * track_buffer)`` frames, duplicate removal
between tracked and lost tracks, and the Kalman state (not the detection) as the output box. The tracks of a video
are rows of a :class:`.TrackStore` (the official lifecycle on stacked arrays: no pass over track objects per frame;
the Kalman steps run on the store's rows in place).

``matcher`` replaces the IoU of the three association stages: the cost is ``1 - S`` (``1 - S * score`` where the
original fused scores), pairs a gate rejects cost 1. Duplicate removal keeps the original IoU, as it is
bookkeeping, not association.

Registered as ``BYTETracker`` (the official class name): mmdet's differently-behaving ``ByteTracker`` stays
reachable under its own name, so mmdet's ByteTrack configs keep working in the ``vastmat`` scope.

Checked against the official code's own output (``../shared/data``: MOT15 TUD and AnimalTrack at 10 FPS, both
lost-buffer rules) in tests/models/trackers/test_bytetrack_golden.py. Speed: the Kalman filter runs batched over all
tracks of a
stage, one similarity matrix per frame serves the three stages, an empty stage builds no matrix, and the per-frame
arithmetic on tens of boxes runs in compiled loops (IoU, box conversions, Kalman steps, the assignment's bookkeeping):
6.5-8.7x the official code and 3.6-4.2x Roboflow ``trackers``' ByteTrack on AnimalTrack-10fps-sim (docs/matchers.md).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from vastmat.registry import MATCHERS, MODELS, TASK_UTILS
from vastmat.structures.bbox import ltwh_to_xyah, ltwh_to_xyxy, xyah_to_xyxy, xyxy_to_ltwh
from vastmat.structures.tracking import TrackingFrame, TrackOutput

from ..association.search_spaces import MATCHER_AXIS
from ..association.solvers import Assignment, LapJV
from ..motion import KalmanFilterXYAH  # noqa: F401  (registered in TASK_UTILS: the default motion model)
from .base_tracker import BaseTracker
from .motion_context import matcher_context
from .track_lifecycle import TRACKED, reported_mask
from .track_store import TrackRows, TrackStore


def store_kalman_boxes(store: TrackStore, rows: np.ndarray) -> np.ndarray:
    """x1 y1 x2 y2 of the Kalman states of rows of a track store."""
    return xyah_to_xyxy(store.mean[rows, :4])


def predict_rows(motion: Any, store: TrackStore, rows: np.ndarray, freeze_lost_height: bool = True) -> None:
    """The official ``STrack.multi_predict`` of the ByteTrack / JDE family on rows of a track store: one Kalman step
    for all at once, the height velocity (``vh``, state index 7) zeroed first for rows that are not tracked (unless
    ``freeze_lost_height`` is False). ``motion`` steps the store's arrays in place (``predict_rows``)."""
    if not len(rows):
        return
    if freeze_lost_height:
        store.mean[rows[store.state[rows] != TRACKED], 7] = 0.0
    motion.predict_rows(store.mean, store.covariance, rows)  # in place on the store's rows


def buffer_size(track_buffer: int, buffer_frame_rate: float | None, frame: TrackingFrame) -> int:
    """Frames a lost track is kept, the official ``int(frame_rate / 30 * track_buffer)``; ``buffer_frame_rate``
    None takes the frame's video rate."""
    rate = buffer_frame_rate
    if rate is None:
        frame.require('frame_rate')
        rate = frame.frame_rate
    return int(rate / 30.0 * track_buffer)


REPORTED_BOXES = ('kalman', 'detection')
_NO_MATCHES = np.zeros((0, 2), np.int64)
_NO_MATCHES.flags.writeable = False


def check_reported_box(reported_box: str) -> str:
    if reported_box not in REPORTED_BOXES:
        raise ValueError(f'reported_box must be one of {REPORTED_BOXES}, got {reported_box!r}')
    return reported_box


def reported_boxes(store: TrackStore, rows: np.ndarray, reported_box: str) -> np.ndarray:
    """x1 y1 x2 y2 written for rows of a track store: their Kalman states (``'kalman'``, the official) or the
    detections they took last (``'detection'``, Roboflow ``trackers``; a ``detection_box`` column, ltwh)."""
    if reported_box == 'kalman':
        return store_kalman_boxes(store, rows)
    return ltwh_to_xyxy(store.detection_box[rows])


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
        self.tracks = TrackStore(dict(mean=((8, ), np.float64), covariance=((8, 8), np.float64),
                                      detection_box=((4, ), np.float64)), store_kalman_boxes, duplicate_thresh)
        if buffer_frame_rate is None:
            self.required_inputs = ('frame_rate', )

    def reset(self) -> None:
        self.tracks.reset()

    def max_time_lost(self, frame: TrackingFrame) -> int:
        """Frames a lost track is kept: ``int(rate / 30 * track_buffer)`` (official ``buffer_size``)."""
        return buffer_size(self.track_buffer, self.buffer_frame_rate, frame)

    # ---------------------------------------------------------------------------------------------------- helpers
    @staticmethod
    def _stage_cost(similarity: np.ndarray, rows: np.ndarray | slice, cols: np.ndarray | slice,
                    scores: np.ndarray | None) -> np.ndarray:
        """``1 - S`` (``1 - S * score`` with ``scores``) of ``rows`` x ``cols`` of the frame's similarity (slices
        where a stage's rows or columns are a range: no fancy-index copy)."""
        sim = similarity[rows][:, cols]
        if scores is not None:
            sim = sim * scores[cols][None, :]
        return 1.0 - sim

    def _match(self, solver: Any, similarity: np.ndarray, rows: np.ndarray | slice, cols: np.ndarray | slice,
               scores: np.ndarray | None) -> Assignment:
        """A stage's assignment, ``solver`` on :meth:`_stage_cost`; a stage without rows or columns (often the
        second and third) builds no matrix."""
        n, m = (r.stop - r.start if isinstance(r, slice) else len(r) for r in (rows, cols))
        if not n or not m:
            return Assignment(_NO_MATCHES, np.arange(n), np.arange(m))
        return solver(self._stage_cost(similarity, rows, cols, scores))

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
        confirmed, unconfirmed = store.confirmed_and_unconfirmed()
        pool = store.pool(confirmed)
        predict_rows(self.motion, store, pool, self.freeze_lost_height)

        # one similarity matrix for the three stages (each entry depends only on its pair, so the slices equal the
        # official per-stage matrices); the matcher's fixed cost is paid once per frame
        rows = np.concatenate([pool, unconfirmed])
        similarity = self.matcher(store_kalman_boxes(store, rows), boxes,
                                  **matcher_context(self.matcher, TrackRows(store, rows), num_high))
        similarity = similarity.gated_scores()
        fuse_scores = det_scores if self.fuse_score else None

        # first association: high-score detections against tracked and lost tracks (lost ones are re-activated);
        # high detections are the first rows of `boxes`
        first = self._match(self.first_solver, similarity, slice(0, len(pool)), slice(0, num_high), fuse_scores)
        first_rows = pool[first.matches[:, 0]]
        first_tracked = store.state[first_rows] == TRACKED

        # second association: low-score detections against the remaining tracks that were tracked (not lost ones,
        # unless lost_in_second_stage)
        remaining_rows = first.unmatched_rows
        if not self.lost_in_second_stage:
            remaining_rows = remaining_rows[store.state[pool[remaining_rows]] == TRACKED]
        remaining = pool[remaining_rows]
        second_stage = self._match(self.second_solver, similarity, remaining_rows, second_idx, None)
        second_rows = remaining[second_stage.matches[:, 0]]
        second_tracked = store.state[second_rows] == TRACKED
        unmatched = remaining[second_stage.unmatched_rows]
        new_lost = unmatched[store.state[unmatched] == TRACKED]

        # unconfirmed tracks against the high-score detections left over
        left = first.unmatched_cols
        third = self._match(self.unconfirmed_solver, similarity, slice(len(pool), len(rows)), left, fuse_scores)
        third_rows = unconfirmed[third.matches[:, 0]]
        self._apply_updates(np.concatenate([first_rows, second_rows, third_rows]),
                            np.concatenate([first.matches[:, 1], second_idx[second_stage.matches[:, 1]],
                                            left[third.matches[:, 1]]]), ltwh, det_scores, frame_id)
        activated = [first_rows[first_tracked], second_rows[second_tracked], third_rows]
        refound = np.concatenate([first_rows[~first_tracked], second_rows[~second_tracked]])

        # initiation: new tracks from the high-score detections nobody took
        fresh = left[third.unmatched_cols]
        fresh = fresh[det_scores[fresh] >= self.det_thresh]
        if len(fresh):
            new_rows = store.add(det_scores[fresh], frame_id, detection_box=ltwh[fresh])
            self.motion.initiate_rows(store.mean, store.covariance, new_rows, ltwh_to_xyah(ltwh[fresh]))
            activated.append(new_rows)

        # removal: unconfirmed tracks without a match, lost tracks older than the buffer
        removed = np.concatenate([unconfirmed[third.unmatched_rows],
                                  store.stale_lost(frame_id, self.max_time_lost(frame))])
        return self._output(store.finish_frame(np.concatenate(activated), refound, new_lost, removed))

    def _output(self, rows: np.ndarray) -> TrackOutput:
        if not len(rows):
            return TrackOutput.empty()
        store = self.tracks
        boxes = reported_boxes(store, rows, self.reported_box)
        keep = reported_mask(boxes, self.min_box_area, self.aspect_ratio_thresh)
        kept = rows[keep]
        return TrackOutput(store.ids[kept], boxes[keep], store.score[kept])
