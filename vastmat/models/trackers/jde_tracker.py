"""FairMOT's online tracker (Zhang et al., IJCV 2021), a faithful port of the official ``JDETracker.update``.

Follows ifzhang/FairMOT ``src/lib/tracker/multitracker.py`` and ``matching.py`` (reference/trackers.md section 8),
given one frame's decoded detections and their identity embeddings (the network's part of ``update`` is the
detector's, see :class:`~vastmat.models.mot.TrackingByDetection`):

1. detections with ``score > conf_thres`` (the official filter after decoding; a no-op on detections the network
   already thresholded); the tracked tracks split into confirmed and unconfirmed ones; the pool (confirmed tracked,
   then lost tracks) predicted by the Kalman filter, ``vh := 0`` for tracks not tracked;
2. embedding stage, pool against every detection: cosine distance between the track's smoothed embedding and the
   detection's (``max(0, cdist(..., 'cosine'))``; of unit vectors, so ``1 - dot`` here), fused with motion
   (``fuse_motion``): ``inf`` where the squared Mahalanobis distance of the detection to the track's projected
   state exceeds ``motion_gate`` (chi2 0.95 at 4 d.o.f., 9.4877), then ``lambda * cost + (1 - lambda) * maha^2``
   (lambda 0.98); lapjv with cost limit 0.4; matched tracked tracks are updated, matched lost ones re-activated;
3. IoU stage: the remaining *tracked* pool tracks (lost ones excluded) against the remaining detections, ``1 -
   IoU`` (+1 pixel), cost limit 0.5; the tracks left are lost;
4. unconfirmed tracks against the detections left, cost limit 0.7; those left are removed;
5. new tracks from the detections left with ``score >= det_thresh = conf_thres`` (confirmed at once only in the
   video's first frame); lost tracks not matched for more than ``int(frame_rate / 30 * track_buffer)`` frames
   removed; the ByteTrack-family bookkeeping and duplicate removal (:class:`.TrackStore`: the tracks of a video
   are rows of stacked arrays, as :class:`.BYTETracker`'s; the stages both share are :mod:`.byte_stages`');
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

Checked against the official code's own output in tests/models/trackers/test_jde_tracker.py
(tests/fixtures/jde_official).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from vastmat.registry import MATCHERS, MODELS, TASK_UTILS
from vastmat.structures.bbox import ltwh_to_xyah, ltwh_to_xyxy, xyxy_to_ltwh
from vastmat.structures.tracking import TrackingFrame, TrackOutput

from ..association.search_spaces import MATCHER_AXIS
from ..association.solvers import LapJV
from ..motion.kalman_filter import CHI2INV95  # (importing ..motion registers the default KalmanFilterXYAH)
from .base_tracker import BaseTracker
from .byte_stages import (REPORTED_BOXES, buffer_size, check_reported_box, frame_similarity, initiate, match_stage,
                          predict_pool, removed_rows, reported_rows, store_kalman_boxes)
from .track_lifecycle import TRACKED
from .track_store import KalmanTrackStore, column


@njit(cache=True, nogil=True, inline='always')
def _normalise(row: np.ndarray) -> None:  # pragma: no cover (compiled)
    """The official ``feat /= np.linalg.norm(feat)`` on one row, in place."""
    total = 0.0
    for value in row:
        total += value * value
    row /= np.sqrt(total)


@njit(cache=True, nogil=True)
def unit_rows(x: np.ndarray, times: int = 1) -> tuple[np.ndarray, int]:  # pragma: no cover (compiled)
    """A copy of ``x`` with each row divided by its L2 norm, ``times`` times (the official code normalises a
    detection's embedding on creation and once more as its track's smoothed one), and the first all-zero row (-1:
    none). Compiled, as the smoothing below: numpy spends ~12 us per normalisation of a frame's embeddings in call
    overhead."""
    for k in range(x.shape[0]):
        if not x[k].any():
            return x, k
    out = x.copy()
    for _ in range(times):
        for k in range(out.shape[0]):
            _normalise(out[k])
    return out, -1


@njit(cache=True, nogil=True)
def fuse_motion(cosine: np.ndarray, maha: np.ndarray, gate: float, weight: float) -> np.ndarray:  # pragma: no cover
    """The official ``fuse_motion`` on the cosine distances: ``weight * max(0, cosine) + (1 - weight) *
    maha``, inf where ``maha > gate``."""
    out = np.empty(cosine.shape)
    for i in range(cosine.shape[0]):
        for j in range(cosine.shape[1]):
            cost = np.inf if maha[i, j] > gate else max(0.0, cosine[i, j])
            out[i, j] = weight * cost + (1 - weight) * maha[i, j]
    return out


@njit(cache=True, nogil=True)
def smooth_features(smooth: np.ndarray, rows: np.ndarray, features: np.ndarray, dets: np.ndarray,
                    momentum: float) -> None:  # pragma: no cover (compiled)
    """The official ``update_features`` of matched tracks, in place on rows of the store's ``smooth``:
    ``unit(momentum * smooth + (1 - momentum) * unit(feature))``, in match order."""
    feature = np.empty(features.shape[1])
    for k in range(len(rows)):
        feature[:] = features[dets[k]]
        _normalise(feature)
        row = smooth[rows[k]]
        for i in range(len(row)):
            row[i] = momentum * row[i] + (1 - momentum) * feature[i]
        _normalise(row)


class JDETracks(KalmanTrackStore):
    """FairMOT's tracks of one video: the ByteTrack family's store and the smoothed embedding."""

    smooth_feat: np.ndarray = column((0, ))  # its dimension set by the first frame's features


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
        motion: the motion model, a ``TASK_UTILS`` config with ``initiate_rows``, ``predict_rows``, ``update_rows`` and
            ``gating_distance`` (default ``KalmanFilterXYAH``).
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
        self.tracks = JDETracks(boxes=store_kalman_boxes, duplicate_thresh=duplicate_thresh)
        if buffer_frame_rate is None:
            self.required_inputs = ('features', 'frame_rate')

    def reset(self) -> None:
        self.tracks.reset()

    def max_time_lost(self, frame: TrackingFrame) -> int:
        """Frames a lost track is kept: ``int(rate / 30 * track_buffer)`` (official ``buffer_size``)."""
        return buffer_size(self.track_buffer, self.buffer_frame_rate, frame)

    # ---------------------------------------------------------------------------------------------------- helpers
    def embedding_cost(self, rows: np.ndarray, features: np.ndarray, xyah: np.ndarray) -> np.ndarray:
        """The embedding stage's cost (official ``embedding_distance`` then ``fuse_motion``) of rows of the track
        store: cosine distance of their smoothed embeddings to the detections' ``features``, ``inf`` beyond the
        Mahalanobis gate, then ``lambda * cosine + (1 - lambda) * maha^2``."""
        if not len(rows) or not len(features):
            return np.zeros((len(rows), len(features)))
        store = self.tracks
        maha = self.motion.gating_distance(store.mean, store.covariance, xyah, rows=rows)
        # both sides are unit vectors (normalised by unit_rows and smooth_features), so the official cdist(...,
        # 'cosine') is 1 - their dot product; cdist divides by the norms once more (the same to ~1e-16) and takes
        # five times as long on a frame's 100 tracks x 16 detections x 128 dimensions
        cosine = store.smooth_feat[rows] @ features.T
        np.subtract(1.0, cosine, out=cosine)
        return fuse_motion(cosine, maha, self.motion_gate, self.motion_lambda)

    def _apply_updates(self, rows: np.ndarray, dets: np.ndarray, keep_score: np.ndarray, xyah: np.ndarray,
                       ltwh: np.ndarray, scores: np.ndarray, features: np.ndarray, frame_id: int) -> None:
        """Kalman and embedding update of every matched row at once, in match order (official ``update`` /
        ``re_activate``; ``keep_score``: re-activated rows, which keep their score)."""
        if not len(rows):
            return
        store = self.tracks
        self.motion.update_rows(store.mean, store.covariance, rows, xyah[dets])
        smooth_features(store.smooth_feat, rows, features, dets, self.feature_momentum)
        store.detection_box[rows] = ltwh[dets]
        store.mark_matched(rows, scores[dets], frame_id, keep_score)

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
        # a detection's embedding is normalised on creation, and its smooth_feat (the same array) once more
        features, zero = unit_rows(np.ascontiguousarray(features, np.float64), 2)
        if zero >= 0:
            raise ValueError(f'video {frame.video_name!r} frame {frame_id}: detection {zero} has an all-zero '
                             'embedding (JDETracker compares L2-normalised embeddings)')

        store = self.tracks
        store.set_row_shape('smooth_feat', features.shape[1:], f'video {frame.video_name!r} frame {frame_id}')
        pool, unconfirmed = predict_pool(self.motion, store)
        # one similarity matrix for both IoU stages
        rows = np.concatenate([pool, unconfirmed])
        similarity = frame_similarity(self.matcher, store, rows, boxes, len(boxes))

        # embedding stage: tracked and lost tracks against every detection (lost ones are re-activated)
        first = self.embedding_solver(self.embedding_cost(pool, features, xyah))
        first_rows = pool[first.matches[:, 0]]
        first_lost = store.state[first_rows] != TRACKED

        # IoU stage: the remaining tracks that were tracked (not lost ones) against the remaining detections
        remaining_rows = first.unmatched_rows[store.state[pool[first.unmatched_rows]] == TRACKED]
        cols = first.unmatched_cols
        remaining = pool[remaining_rows]
        second = match_stage(self.iou_solver, similarity, remaining_rows, cols)
        second_rows = remaining[second.matches[:, 0]]
        new_lost = remaining[second.unmatched_rows]

        # unconfirmed tracks against the detections left over
        left = cols[second.unmatched_cols]
        third = match_stage(self.unconfirmed_solver, similarity, slice(len(pool), len(rows)), left)
        third_rows = unconfirmed[third.matches[:, 0]]
        updated = np.concatenate([first_rows, second_rows, third_rows])
        self._apply_updates(updated, np.concatenate([first.matches[:, 1], cols[second.matches[:, 1]],
                                                     left[third.matches[:, 1]]]),
                            np.concatenate([first_lost, np.zeros(len(second_rows) + len(third_rows), bool)]),
                            xyah, ltwh, scores, features, frame_id)
        activated = [first_rows[~first_lost], second_rows, third_rows]

        # initiation: new tracks from the detections nobody took (score >= conf_thres), their embedding the
        # detection's
        activated.append(initiate(self.motion, store, left[third.unmatched_cols], scores, self.det_thresh, frame_id,
                                  ltwh, xyah, smooth_feat=features))

        # removal: unconfirmed tracks without a match, lost tracks older than the buffer
        removed = removed_rows(store, unconfirmed, third.unmatched_rows, frame_id, self.max_time_lost(frame))
        return self._output(store.finish_frame(np.concatenate(activated), first_rows[first_lost], new_lost, removed),
                            features.shape[1])

    def _output(self, rows: np.ndarray, feature_dim: int) -> TrackOutput:
        if not len(rows):
            out = TrackOutput.empty()
            out.features = np.zeros((0, feature_dim))
            return out
        store = self.tracks
        kept, boxes = reported_rows(store, rows, self.reported_box, self.min_box_area, self.aspect_ratio_thresh)
        return TrackOutput(store.ids[kept], boxes, store.score[kept], store.smooth_feat[kept])
