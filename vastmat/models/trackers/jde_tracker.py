"""FairMOT's online tracker (Zhang et al., IJCV 2021), a faithful port of the official ``JDETracker.update``.

Follows ifzhang/FairMOT ``src/lib/tracker/multitracker.py`` and ``matching.py`` (reference/trackers.md section 8),
given one frame's decoded detections and their identity embeddings (the network's part of ``update`` is the
detector's, see :class:`~vastmat.models.mot.TrackingByDetection`):

1. detections with ``score > conf_thres`` (the official filter after decoding; a no-op on detections the network
   already thresholded); the tracked tracks split into confirmed and unconfirmed ones; the pool (confirmed tracked,
   then lost tracks) predicted by the Kalman filter, ``vh := 0`` for tracks not tracked;
2. embedding stage, pool against every detection: cosine distance between the track's smoothed embedding and the
   detection's (``max(0, cdist(..., 'cosine'))``), fused with motion (``fuse_motion``): ``inf`` where the squared
   Mahalanobis distance of the detection to the track's projected state exceeds ``motion_gate`` (chi2 0.95 at 4
   d.o.f., 9.4877), then ``lambda * cost + (1 - lambda) * maha^2`` (lambda 0.98); lapjv with cost limit 0.4;
   matched tracked tracks are updated, matched lost ones re-activated;
3. IoU stage: the remaining *tracked* pool tracks (lost ones excluded) against the remaining detections, ``1 -
   IoU`` (+1 pixel), cost limit 0.5; the tracks left are lost;
4. unconfirmed tracks against the detections left, cost limit 0.7; those left are removed;
5. new tracks from the detections left with ``score >= det_thresh = conf_thres`` (confirmed at once only in the
   video's first frame); lost tracks not matched for more than ``int(frame_rate / 30 * track_buffer)`` frames
   removed; the ByteTrack-family bookkeeping and duplicate removal (:mod:`.track_lifecycle`);
6. output: the confirmed tracked tracks, the box their Kalman state, their smoothed embeddings as features.

Appearance (``STrack.update_features``): every match (update and re-activation, in every stage) updates the
track's embedding, ``smooth = normalise(0.9 * smooth + 0.1 * feat)``; a new track starts from its detection's.
Quirks kept: a re-activated track keeps its old score (``re_activate`` does not copy it, ``update`` does);
unconfirmed tracks are not predicted before their stage; the embedding vectors are renormalised where the official
code renormalises them (on a detection twice, once more on use; a no-op up to rounding for unit vectors).

``matcher`` replaces the IoU of the IoU stages (2 and 3): the cost is ``1 - S``, pairs a gate rejects cost 1, as
in :class:`.BYTETracker`. The embedding stage and duplicate removal (bookkeeping) keep their official measures.

The lost-track buffer: the official ``track.py`` builds the tracker with each sequence's ``frameRate`` from
seqinfo.ini, so ``buffer_frame_rate=None`` (the default) takes the video's rate (10 frames at 10 FPS); a number
fixes it (``30``: ``track_buffer`` frames whatever the rate, :class:`.BYTETracker`'s default).

Checked against the official code's own output in tests/test_jde_tracker.py (tests/fixtures/jde_official).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.distance import cdist

from vastmat.registry import MATCHERS, MODELS, TASK_UTILS
from vastmat.structures.bbox import ltwh_to_xyah, ltwh_to_xyxy, xyxy_to_ltwh
from vastmat.structures.tracking import TrackingFrame, TrackOutput

from ..association.search_spaces import MATCHER_AXIS
from ..association.solvers import LapJV
from ..motion.kalman_filter import CHI2INV95  # (importing ..motion registers the default KalmanFilterXYAH)
from .base_tracker import BaseTracker
from .motion_context import matcher_context
from .byte_tracker import (REPORTED_BOXES, KalmanTrack, buffer_size, check_reported_box, kalman_boxes, multi_predict,
                           reported_boxes)
from .track_lifecycle import TRACKED, TrackLifecycle, reported_mask


def _unit(x: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm (the official ``feat /= np.linalg.norm(feat)``, applied to every row)."""
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


class JDETrack(KalmanTrack):
    """A FairMOT track: Kalman state plus the smoothed (``smooth_feat``) and last (``curr_feat``) embeddings."""

    __slots__ = ('smooth_feat', 'curr_feat')

    def __init__(self, track_id: int, mean: np.ndarray, covariance: np.ndarray, score: float, frame_id: int,
                 feature: np.ndarray, detection_box: np.ndarray | None = None) -> None:
        super().__init__(track_id, mean, covariance, score, frame_id, detection_box)
        self.smooth_feat = self.curr_feat = feature


@MODELS.register_module()
class JDETracker(BaseTracker):
    """The official FairMOT ``JDETracker`` association (its defaults are the official code's).

    Args:
        conf_thres: detections with ``score > conf_thres`` are tracked; new tracks need ``score >= conf_thres``
            (the official ``det_thresh``).
        track_buffer: frames a lost track is kept, at 30 FPS (scaled by ``buffer_frame_rate / 30``).
        buffer_frame_rate: the frame rate of that scaling; None (default, as the official ``track.py``) takes each
            video's rate (the frame's ``frame_rate``, from seqinfo.ini).
        embedding_match_thresh: lapjv cost limit of the embedding stage (0.4).
        iou_match_thresh, unconfirmed_match_thresh: of the IoU stage (0.5) and the unconfirmed stage (0.7).
        motion_lambda: weight of the appearance cost in ``fuse_motion`` (0.98; the Mahalanobis term gets
            ``1 - motion_lambda``).
        motion_gate: squared Mahalanobis distance beyond which a pair is impossible (chi2inv95 at 4 d.o.f.).
        feature_momentum: weight of the old smoothed embedding in its update (the official ``alpha`` 0.9).
        duplicate_thresh: tracked/lost pairs with IoU distance below this are duplicates (0.15).
        matcher: similarity of the IoU stages (default: IoU with the +1 pixel convention).
        motion: the motion model, a ``TASK_UTILS`` config with ``gating_distance`` (default ``KalmanFilterXYAH``).
        min_box_area, aspect_ratio_thresh: the official ``track.py`` output filter: boxes with ``w * h <=
            min_box_area`` or ``w / h > aspect_ratio_thresh`` are not reported (None disables one). The official
            vertical filter (1.6) is a pedestrian prior; it is off by default, as in :class:`.BYTETracker`.
        reported_box: the box written for a track: ``'kalman'`` (the official: the Kalman state after its update)
            or ``'detection'`` (the detection it matched last, as :class:`.BYTETracker` can).
    """

    zoo_name = 'FairMOT'
    zoo_demo_config = 'fairmot/fairmot_tiny_zoo_vastmat-demo.py'  # the joint model trained and tested whole
    experiment_name = 'fairmot'
    speed_options = {}
    speed_features = True
    # tools/tune.py: the detection threshold, the buffer, the embedding / IoU / unconfirmed stages, the motion
    # weight of the fused cost, the embedding momentum, the output filter and the matcher of the IoU stages
    search_spaces = dict(default=dict(
        conf_thres=('float', 0.2, 0.7), track_buffer=('int', 10, 90), embedding_match_thresh=('float', 0.2, 0.8),
        iou_match_thresh=('float', 0.3, 0.9), unconfirmed_match_thresh=('float', 0.5, 0.95),
        motion_lambda=('float', 0.8, 1.0), feature_momentum=('float', 0.5, 0.99),
        min_box_area=('categorical', [None, 10, 100]), reported_box=('categorical', list(REPORTED_BOXES)),
        matcher=MATCHER_AXIS))
    required_inputs = ('features', )

    def __init__(self, conf_thres: float = 0.4, track_buffer: int = 30, buffer_frame_rate: float | None = None,
                 embedding_match_thresh: float = 0.4, iou_match_thresh: float = 0.5,
                 unconfirmed_match_thresh: float = 0.7, motion_lambda: float = 0.98,
                 motion_gate: float = CHI2INV95[4], feature_momentum: float = 0.9, duplicate_thresh: float = 0.15,
                 matcher: dict | Any | None = None, motion: dict | Any | None = None,
                 min_box_area: float | None = 100, aspect_ratio_thresh: float | None = None,
                 reported_box: str = 'kalman', init_cfg: dict | None = None) -> None:
        super().__init__(init_cfg)
        self.reported_box = check_reported_box(reported_box)
        self.conf_thres = self.det_thresh = conf_thres
        self.track_buffer, self.buffer_frame_rate = track_buffer, buffer_frame_rate
        self.motion_lambda, self.motion_gate = motion_lambda, motion_gate
        self.feature_momentum = feature_momentum
        self.min_box_area, self.aspect_ratio_thresh = min_box_area, aspect_ratio_thresh
        matcher = matcher if matcher is not None else dict(type='IoU', plus_one=True)
        self.matcher = MATCHERS.build(matcher) if isinstance(matcher, dict) else matcher
        self.embedding_solver, self.iou_solver, self.unconfirmed_solver = (
            LapJV(embedding_match_thresh), LapJV(iou_match_thresh), LapJV(unconfirmed_match_thresh))
        motion = motion if motion is not None else dict(type='KalmanFilterXYAH')
        self.motion = TASK_UTILS.build(motion) if isinstance(motion, dict) else motion
        if not hasattr(self.motion, 'gating_distance'):
            raise TypeError(f'JDETracker: the motion model {type(self.motion).__name__} has no gating_distance '
                            '(fuse_motion needs the squared Mahalanobis distance)')
        self.tracks = TrackLifecycle(kalman_boxes, duplicate_thresh)
        if buffer_frame_rate is None:
            self.required_inputs = ('features', 'frame_rate')

    def reset(self) -> None:
        self.tracks.reset()

    def max_time_lost(self, frame: TrackingFrame) -> int:
        """Frames a lost track is kept: ``int(rate / 30 * track_buffer)`` (official ``buffer_size``)."""
        return buffer_size(self.track_buffer, self.buffer_frame_rate, frame)

    # ---------------------------------------------------------------------------------------------------- helpers
    def embedding_cost(self, tracks: list[JDETrack], features: np.ndarray, xyah: np.ndarray) -> np.ndarray:
        """The embedding stage's cost (official ``embedding_distance`` then ``fuse_motion``): cosine distance of
        the tracks' smoothed embeddings to the detections' ``features``, ``inf`` beyond the Mahalanobis gate, then
        ``lambda * cosine + (1 - lambda) * maha^2``."""
        if not tracks or not len(features):
            return np.zeros((len(tracks), len(features)))
        cost = np.maximum(0.0, cdist(np.array([t.smooth_feat for t in tracks]), features, 'cosine'))
        maha = self.motion.gating_distance(np.array([t.mean for t in tracks]),
                                           np.array([t.covariance for t in tracks]), xyah)
        cost[maha > self.motion_gate] = np.inf
        return self.motion_lambda * cost + (1 - self.motion_lambda) * maha

    def _apply_updates(self, updates: list[tuple[JDETrack, int, bool]], ltwh: np.ndarray, scores: np.ndarray,
                       features: np.ndarray, frame_id: int) -> None:
        """Kalman and embedding update of every matched track at once (official ``update`` / ``re_activate``)."""
        if not updates:
            return
        tracks = [t for t, _, _ in updates]
        index = np.array([j for _, j, _ in updates])
        mean, covariance = self.motion.update(
            np.array([t.mean for t in tracks]), np.array([t.covariance for t in tracks]), ltwh_to_xyah(ltwh[index]))
        feats = _unit(features[index])  # update_features renormalises the detection's vector once more
        alpha = self.feature_momentum
        smooth = _unit(alpha * np.array([t.smooth_feat for t in tracks]) + (1 - alpha) * feats)
        for (t, j, refound), m, c, f, s in zip(updates, mean, covariance, feats, smooth):
            t.mean, t.covariance, t.curr_feat, t.smooth_feat, t.detection_box = m, c, f, s, ltwh[j]
            t.mark_matched(t.score if refound else float(scores[j]), frame_id)  # re_activate keeps the score

    # ----------------------------------------------------------------------------------------------------- update
    def update(self, frame: TrackingFrame) -> TrackOutput:
        frame.require(*self.required_inputs)
        frame_id = frame.frame_id
        keep = frame.scores > self.conf_thres
        ltwh = xyxy_to_ltwh(frame.bboxes[keep])  # the official detections keep left, top, width, height
        boxes, xyah, scores = ltwh_to_xyxy(ltwh), ltwh_to_xyah(ltwh), frame.scores[keep]
        features = frame.features[keep]
        if features.ndim != 2:
            raise ValueError(f'video {frame.video_name!r} frame {frame_id}: features must be (detections, dim), got '
                             f'shape {frame.features.shape}')
        norms = np.linalg.norm(features, axis=1)
        if (norms == 0).any():
            raise ValueError(f'video {frame.video_name!r} frame {frame_id}: detection {int(np.argmin(norms))} has an '
                             'all-zero embedding (JDETracker compares L2-normalised embeddings)')
        # a detection's embedding is normalised on creation, and its smooth_feat (the same array) once more
        features = _unit(_unit(features))

        confirmed, unconfirmed = self.tracks.confirmed_and_unconfirmed()
        pool = self.tracks.pool(confirmed)
        multi_predict(self.motion, pool)
        # one similarity matrix for both IoU stages (each entry depends only on its pair; the tracks it covers are
        # not updated before their stage)
        rows = pool + unconfirmed
        similarity = self.matcher(kalman_boxes(rows), boxes, **matcher_context(self.matcher, rows, len(boxes)))
        similarity = similarity.gated_scores()
        updates: list[tuple[JDETrack, int, bool]] = []  # (track, detection, re-activated)
        activated, refound = [], []

        # embedding stage: tracked and lost tracks against every detection
        first = self.embedding_solver(self.embedding_cost(pool, features, xyah))
        for i, j in first.matches:
            is_lost = pool[i].state != TRACKED
            updates.append((pool[i], int(j), is_lost))
            (refound if is_lost else activated).append(pool[i])

        # IoU stage: the remaining tracks that were tracked (not lost ones) against the remaining detections
        rows = np.array([i for i in first.unmatched_rows if pool[i].state == TRACKED], np.int64)
        cols = first.unmatched_cols
        remaining = [pool[i] for i in rows]
        second = self.iou_solver(1.0 - similarity[np.ix_(rows, cols)])
        for i, j in second.matches:
            updates.append((remaining[i], int(cols[j]), False))
            activated.append(remaining[i])
        new_lost = [remaining[i] for i in second.unmatched_rows]

        # unconfirmed tracks against the detections left over
        left = cols[second.unmatched_cols]
        unconfirmed_rows = np.arange(len(pool), len(pool) + len(unconfirmed))
        third = self.unconfirmed_solver(1.0 - similarity[np.ix_(unconfirmed_rows, left)])
        for i, j in third.matches:
            updates.append((unconfirmed[i], int(left[j]), False))
            activated.append(unconfirmed[i])
        removed = [unconfirmed[i] for i in third.unmatched_rows]
        self._apply_updates(updates, ltwh, scores, features, frame_id)

        # initiation: new tracks from the detections nobody took
        fresh = [int(j) for j in left[third.unmatched_cols] if scores[j] >= self.det_thresh]
        if fresh:
            mean, covariance = self.motion.initiate(xyah[fresh])
            for j, m, c in zip(fresh, mean, covariance):
                activated.append(JDETrack(self.tracks.new_id(), m, c, float(scores[j]), frame_id, features[j],
                                          ltwh[j]))

        # removal: lost tracks older than the buffer
        removed += self.tracks.stale_lost(frame_id, self.max_time_lost(frame))
        return self._output(self.tracks.finish_frame(activated, refound, new_lost, removed), features.shape[1])

    def _output(self, tracks: list[JDETrack], feature_dim: int) -> TrackOutput:
        if not tracks:
            out = TrackOutput.empty()
            out.features = np.zeros((0, feature_dim))
            return out
        boxes = reported_boxes(tracks, self.reported_box)
        keep = reported_mask(boxes, self.min_box_area, self.aspect_ratio_thresh)
        return TrackOutput(np.array([t.track_id for t in tracks], np.int64)[keep], boxes[keep],
                           np.array([t.score for t in tracks])[keep],
                           np.array([t.smooth_feat for t in tracks])[keep])
