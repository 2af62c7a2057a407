"""DiffMOT (Lv et al., CVPR 2024): a faithful port of the official ``diffmottracker.update`` (Kroery/DiffMOT
``tracker/DiffMOTtracker.py``, reference/trackers.md section 2) with swappable matchers.

No Kalman filter: every tracked and lost track's next box comes from the D2MP motion model
(:class:`vastmat.models.motion.D2MP`), one batched call per frame on each track's last 5 ``[cx, cy, w, h, dcx, dcy,
dw, dh]`` conditions (padded by repeating the last one). Association, per frame:

1. high detections ``score > high_thres``, second ones ``low_thres < score < high_thres``;
2. first stage (Deep-OC-SORT style), tracked + lost tracks (predicted boxes) against the high detections: when every
   row and column has at most one similarity > 0.1 those pairs are taken directly; otherwise the assignment (lapjv
   without a cost limit) minimises ``-(S + emb * w)`` where the frame has appearance features (``emb`` the cosine
   similarity of track and detection embeddings, ``w`` Deep-OC-SORT's dynamic weight ``compute_aw_new_metric``) and
   ``-S`` where it has none; pairs with ``S < 0.1`` are dropped. Matched tracks move their embedding towards the
   detection's with the confidence-dependent ``alpha``;
3. second stage (ByteTrack-like): the still-unmatched tracked tracks against the second detections, ``1 - S`` with
   lapjv ``cost_limit`` 0.5; the rest are lost;
4. unconfirmed tracks (not predicted) against the high detections left, ``cost_limit`` 0.7; the unmatched ones are
   removed; new tracks from the high detections left; lost tracks older than ``max_time_lost`` removed; duplicate
   removal between tracked and lost tracks (:meth:`.TrackStore.finish_frame`). The tracks of a video are rows of a
   :class:`.DiffMOTTracks` store (its columns declared there; stacked arrays: the D2MP conditions, memories and
   embeddings of a frame's tracks are gathered with one index each, and every stage's outcome is written back at
   once).

Faithful quirks kept: the unconfirmed stage's embedding update takes ``alpha`` by the detection's position in the
*remaining* list (the official ``dets_alpha[idet]``); an unconfirmed track's first condition is overwritten by its
second detection; re-activation keeps the track's old score; the reported box is the detection's (``_tlwh``).

``matcher`` replaces IoU in the three association stages (``S``; pairs a gate rejects get ``S = 0``, cost 1);
duplicate removal keeps the original IoU, as BYTETracker does. The diffusion noise comes from a ``torch.Generator``
seeded with ``seed`` at every video start, so a run is reproducible (the official code draws from torch's global
generator).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from vastmat.registry import MATCHERS, MODELS
from vastmat.structures.bbox import ltwh_to_xyxy, xyxy_to_ltwh
from vastmat.structures.tracking import MissingTrackerInput, TrackingFrame, TrackOutput

from ..association.search_spaces import MATCHER_AXIS
from ..association.solvers import LapJV
from ..motion.d2mp import D2MP
from .base_tracker import BaseTracker
from .motion_context import matcher_context
from .track_lifecycle import TRACKED, moving_average_unit
from .diffmot_tracks import HISTORY, DiffMOTTracks, store_boxes
from .track_store import TrackRows


def ltwh_to_xywh(ltwh: np.ndarray) -> np.ndarray:
    """Centre x, centre y, width, height of ``(n, 4)`` ltwh boxes (official ``STrack.xywh``)."""
    return np.concatenate([ltwh[:, :2] + ltwh[:, 2:] / 2, ltwh[:, 2:]], axis=1)


def compute_aw_new_metric(emb_cost: np.ndarray, w_association_emb: float, max_diff: float) -> np.ndarray:
    """Deep-OC-SORT's dynamic appearance weight: ``w + min(top1 - top2 of the row, max_diff) / 2 + min(top1 - top2
    of the column, max_diff) / 2`` (a row or column term only with at least two entries), vectorised."""
    n, m = emb_cost.shape
    row = np.zeros(n)
    col = np.zeros(m)
    if m >= 2:
        top = np.sort(emb_cost, axis=1)
        row = np.minimum(top[:, -1] - top[:, -2], max_diff) / 2
    if n >= 2:
        top = np.sort(emb_cost, axis=0)
        col = np.minimum(top[-1] - top[-2], max_diff) / 2
    # the official adds the row bonus to zeros, then the column bonus, then the base weight
    return w_association_emb + ((0.0 + row[:, None]) + col[None, :])


@MODELS.register_module()
class DiffMOTTracker(BaseTracker):
    """The official DiffMOT tracker (defaults: the official DanceTrack test config).

    Args:
        high_thres: high-score threshold (``score > high_thres``), also the new-track threshold (0.6).
        low_thres: lower bound of the second-stage detections (0.4; MOT17/MOT20 configs 0.1).
        w_assoc_emb: base weight of the appearance similarity in the first stage (2.2).
        aw_param: cap of the dynamic weight's top1 - top2 bonus (official ``max_diff``, 1.7).
        max_time_lost: frames a lost track is kept (30: the official tracker is built with frame_rate=30).
        first_iou_thresh: the first stage's similarity threshold (0.1, hard-coded in the original).
        second_match_thresh, unconfirmed_match_thresh: lapjv cost limits (0.5, 0.7).
        duplicate_thresh: tracked/lost pairs with IoU distance below this are duplicates (0.15).
        alpha_fixed_emb: the embedding EMA's base ``alpha`` (0.95).
        matcher: similarity of the association stages (default: IoU with the +1 pixel convention).
        motion: the motion model (``MODELS`` config; ``checkpoint`` names its trained weights).
        seed: seed of the diffusion noise generator, reset at every video start.
        image_size: ``(height, width)`` for frames that carry no ``image_size`` (D2MP works on coordinates
            normalised by the image size; the official code reads it from seqinfo.ini, as the cached-detection
            pipeline does); None: such frames are an error.
        allow_untrained_motion: run with a D2MP that has no trained weights (tests, speed checks). Otherwise
            tracking without weights raises :class:`MissingTrackerInput` naming the setting to give.
    """

    zoo_name = 'DiffMOT'
    zoo_demo_parts = {'motion': 'd2mp/d2mp_tiny_zoo_vastmat-demo.py'}  # the demo D2MP
    # MotionAdaptiveCDA chosen for DiffMOT as the fragment's defaults for ByteTrack (same selection half, rows and
    # criterion, with the D2MP of the README's matcher table; 20 grid points over a_fast, r_low, r_high, crowd_full,
    # crowd_radius): a track counts as fast only from 0.6 of its diagonal a frame (D2MP gives no position std) and
    # then gets the centre term alone unless crowded
    matcher_overrides = dict(cda_motion_adaptive=dict(r_low=0.02, r_high=0.6, crowd_radius=2.0, crowd_full=8.0,
                                                      a_still=1.0, a_fast=0.0))
    experiment_name = 'diffmot'
    study_config = 'diffmot/diffmot_cached-dets.py'
    study_own_matcher = 'iou'
    study_cost = 3
    motion_checkpoint_key = 'motion.checkpoint'  # a trained D2MP (configs/d2mp/ trains one)
    speed_options = dict(motion=dict(type='D2MP'))
    speed_features = True
    # tools/tune.py: the score thresholds, the three stages' thresholds, the lost buffer and the matcher (D2MP, the
    # motion, is given: --cfg-options model.tracker.motion.checkpoint=PATH)
    search_spaces = dict(default=dict(
        high_thres=('float', 0.3, 0.8), low_thres=('float', 0.05, 0.4), first_iou_thresh=('float', 0.0, 0.5),
        second_match_thresh=('float', 0.3, 0.9), unconfirmed_match_thresh=('float', 0.5, 0.95),
        max_time_lost=('int', 10, 90),
        # the motion-adaptive CDA's fast ratio above its still ratio, 0.02 here (matcher_overrides)
        matcher=dict(MATCHER_AXIS, cda_motion_adaptive=dict(MATCHER_AXIS['cda_motion_adaptive'],
                                                            r_high=('float', 0.025, 0.6, 'log')))))
    required_inputs = ('image_size', )

    def __init__(self, high_thres: float = 0.6, low_thres: float = 0.4, w_assoc_emb: float = 2.2,
                 aw_param: float = 1.7, max_time_lost: int = 30, first_iou_thresh: float = 0.1,
                 second_match_thresh: float = 0.5, unconfirmed_match_thresh: float = 0.7,
                 duplicate_thresh: float = 0.15, alpha_fixed_emb: float = 0.95,
                 matcher: dict | Any | None = None, motion: dict | Any | None = None, seed: int = 0,
                 image_size: tuple[int, int] | None = None, allow_untrained_motion: bool = False,
                 init_cfg: dict | None = None) -> None:
        super().__init__(init_cfg)
        self.high_thres, self.low_thres = high_thres, low_thres
        self.w_assoc_emb, self.aw_param = w_assoc_emb, aw_param
        self.max_time_lost, self.first_iou_thresh = max_time_lost, first_iou_thresh
        self.alpha_fixed_emb = alpha_fixed_emb
        matcher = matcher if matcher is not None else dict(type='IoU', plus_one=True)
        self.matcher = MATCHERS.build(matcher) if isinstance(matcher, dict) else matcher
        self.first_solver = LapJV(float('inf'))  # official linear_assignment2: lapjv without a cost limit
        self.second_solver, self.unconfirmed_solver = LapJV(second_match_thresh), LapJV(unconfirmed_match_thresh)
        motion = motion if motion is not None else dict(type=D2MP.__name__)
        self.motion = MODELS.build(motion) if isinstance(motion, dict) else motion
        self.motion.eval()
        self.seed, self.allow_untrained_motion = seed, allow_untrained_motion
        self.image_size = tuple(image_size) if image_size is not None else None
        if self.image_size is not None:
            self.required_inputs = ()
        self.tracks = DiffMOTTracks(duplicate_thresh)
        self.generator: torch.Generator | None = None

    def train(self, mode: bool = True) -> 'DiffMOTTracker':
        """The motion model always predicts in eval mode (no dropout), as in the official tracker."""
        super().train(mode)
        self.motion.eval()
        return self

    def reset(self) -> None:
        self.tracks.reset()
        self.generator = None  # re-seeded at the video's first prediction (on the motion model's device)

    # ---------------------------------------------------------------------------------------------------- motion
    def _predict(self, rows: np.ndarray, width: float, height: float) -> None:
        """Official ``multi_predict_diff``: one D2MP call for every track; the boxes become the predictions, which
        join the memory and the conditions."""
        if not len(rows):
            return
        store = self.tracks
        scale = np.array([width, height, width, height])
        # shorter histories: the last entry repeated at the end
        index = np.minimum(np.arange(HISTORY), store.num_conds[rows, None] - 1)
        conds = np.take_along_axis(store.conds[rows], index[:, :, None], axis=1)
        conds /= np.tile(scale, 2)
        device = self.motion.encoder.cls_token.device
        if self.generator is None:
            self.generator = torch.Generator(device=device).manual_seed(self.seed)
        with torch.no_grad():
            deltas = self.motion.predict_deltas(torch.from_numpy(conds).float().to(device), self.generator)
        xywh = ltwh_to_xywh(store.ltwh[rows])
        pred = (deltas.cpu().numpy() + xywh / scale) * scale  # float32 + float64, as the official
        pred[:, 0] -= pred[:, 2] / 2
        pred[:, 1] -= pred[:, 3] / 2
        store.ltwh[rows] = pred
        xywh = ltwh_to_xywh(pred)
        store.all_prev[rows] = store.all_last[rows]
        store.all_last[rows] = xywh
        self._push_conditions(rows, np.concatenate([xywh, xywh - store.all_prev[rows]], axis=1))

    def _push_conditions(self, rows: np.ndarray, conds: np.ndarray) -> None:
        """Append one condition per row, the oldest dropped beyond ``HISTORY``."""
        store = self.tracks
        count = store.num_conds[rows]
        full = rows[count == HISTORY]
        store.conds[full, :-1] = store.conds[full, 1:]
        slot = np.minimum(count, HISTORY - 1)
        store.conds[rows, slot] = conds
        store.num_conds[rows] = slot + 1

    # ----------------------------------------------------------------------------------------------------- update
    def update(self, frame: TrackingFrame) -> TrackOutput:
        if not (self.allow_untrained_motion or getattr(self.motion, 'has_weights', True)):
            raise MissingTrackerInput(
                f'video {frame.video_name!r} frame {frame.frame_id}: DiffMOTTracker needs a trained D2MP motion '
                'model: set model.tracker.motion.checkpoint=PATH (train one with tools/train.py '
                'configs/d2mp/d2mp_1xb2048-800e_vastmat-p1.py) or test with --checkpoint of a model holding it; '
                'model.tracker.allow_untrained_motion=True runs the untrained model (tests only)')
        if frame.image_size is None and self.image_size is None:
            frame.require('image_size')
        height, width = frame.image_size if frame.image_size is not None else self.image_size
        frame_id, scores = frame.frame_id, frame.scores
        high = scores > self.high_thres
        second = (scores > self.low_thres) & (scores < self.high_thres)
        # detections as the original holds them (left, top, width, height; costs recompute x2 = left + width)
        ltwh = xyxy_to_ltwh(np.concatenate([frame.bboxes[high], frame.bboxes[second]]))
        boxes = ltwh_to_xyxy(ltwh)
        det_scores = np.concatenate([scores[high], scores[second]])
        num_high = int(high.sum())
        second_idx = np.arange(num_high, len(boxes))
        features = frame.features[high] if frame.features is not None else None
        trust = (det_scores[:num_high] - self.high_thres) / (1 - self.high_thres)
        det_alpha = self.alpha_fixed_emb + (1 - self.alpha_fixed_emb) * (1 - trust)

        store = self.tracks
        if features is not None:
            store.set_row_shape('emb', features.shape[1:], f'video {frame.video_name!r} frame {frame_id}')
        confirmed, unconfirmed = store.confirmed_and_unconfirmed()
        pool = store.pool(confirmed)
        self._predict(pool, width, height)

        # one similarity matrix serves the three stages: the pool's boxes are its predictions throughout, the
        # unconfirmed tracks are not predicted
        rows = np.concatenate([pool, unconfirmed])
        similarity = self.matcher(store_boxes(store, rows), boxes,
                                  **matcher_context(self.matcher, TrackRows(store, rows), num_high))
        similarity = similarity.gated_scores()

        # first association: tracked and lost tracks against the high detections; pairs below the threshold are
        # unmatched after the others, in pair order (the official appends them to u_det / u_track)
        first = similarity[:len(pool), :num_high]
        pairs = self._first_pairs(first, pool, features)
        taken = ~(first[pairs[:, 0], pairs[:, 1]] < self.first_iou_thresh)
        u_det = np.concatenate([np.setdiff1d(np.arange(num_high), pairs[:, 1]), pairs[~taken, 1]])
        u_track = np.concatenate([np.setdiff1d(np.arange(len(pool)), pairs[:, 0]), pairs[~taken, 0]])
        pairs = pairs[taken]
        first_rows, first_dets = pool[pairs[:, 0]], pairs[:, 1]
        first_tracked = store.state[first_rows] == TRACKED
        # re_activate (lost tracks) keeps the score
        self._observe(first_rows, first_dets, ltwh, det_scores, frame_id, keep_score=~first_tracked)
        if features is not None:
            self._update_features(first_rows, features[first_dets], det_alpha[first_dets])

        # second association: the remaining tracked tracks against the second detections
        candidates = u_track[store.state[pool[u_track]] == TRACKED]
        remaining = pool[candidates]
        stage = self.second_solver(1.0 - similarity[np.ix_(candidates, second_idx)])
        second_rows = remaining[stage.matches[:, 0]]
        self._observe(second_rows, second_idx[stage.matches[:, 1]], ltwh, det_scores, frame_id)
        new_lost = remaining[stage.unmatched_rows]

        # unconfirmed tracks against the high detections left (in the first stage's order)
        unconfirmed_rows = np.arange(len(pool), len(rows))
        third = self.unconfirmed_solver(1.0 - similarity[np.ix_(unconfirmed_rows, u_det)])
        third_rows, third_dets = unconfirmed[third.matches[:, 0]], u_det[third.matches[:, 1]]
        self._observe(third_rows, third_dets, ltwh, det_scores, frame_id)
        if features is not None:
            # [faithful] alpha indexed by the position in the remaining list (official dets_alpha[idet])
            self._update_features(third_rows, features[third_dets], det_alpha[third.matches[:, 1]])
        activated = [first_rows[first_tracked], second_rows, third_rows]

        # new tracks from the high detections nobody took
        fresh = u_det[third.unmatched_cols]
        fresh = fresh[det_scores[fresh] >= self.high_thres]
        if len(fresh):
            xywh = ltwh_to_xywh(ltwh[fresh])
            columns = dict(ltwh=ltwh[fresh], all_last=xywh, obs_last=xywh, num_conds=1)
            if features is not None:
                columns['emb'] = features[fresh]
            new_rows = store.add(det_scores[fresh], frame_id, **columns)
            store.conds[new_rows, 0] = np.concatenate([xywh, xywh - xywh], axis=1)  # official `activate`
            activated.append(new_rows)

        removed = np.concatenate([unconfirmed[third.unmatched_rows], store.stale_lost(frame_id, self.max_time_lost)])
        return self._output(store.finish_frame(np.concatenate(activated), first_rows[~first_tracked], new_lost,
                                               removed))

    def _first_pairs(self, similarity: np.ndarray, pool: np.ndarray, features: np.ndarray | None) -> np.ndarray:
        """The first stage's candidate pairs (before the 0.1 filter), in the official order."""
        if min(similarity.shape) == 0:
            return np.zeros((0, 2), np.int64)
        above = similarity > self.first_iou_thresh
        if above.sum(1).max() == 1 and above.sum(0).max() == 1:
            return np.stack(np.nonzero(above), axis=1)
        cost = -similarity
        if features is not None:
            emb = self.tracks.emb[pool] @ features.T  # (zeros for a track without an embedding)
            emb = emb * compute_aw_new_metric(emb, self.w_assoc_emb, self.aw_param)
            cost = -(similarity + emb)
        return self.first_solver(cost).matches

    def _observe(self, rows: np.ndarray, dets: np.ndarray, ltwh: np.ndarray, scores: np.ndarray, frame_id: int,
                 keep_score: np.ndarray | None = None) -> None:
        """Official ``update`` / ``re_activate`` of matched rows (``keep_score``: re-activated ones, whose score is
        not updated): the box becomes the detection and replaces the last memory entry and the last condition; the
        delta is taken from the previous prediction-or-detection, or for a track not yet activated from its
        previous observation."""
        if not len(rows):
            return
        store = self.tracks
        boxes = ltwh[dets]
        xywh = ltwh_to_xywh(boxes)
        store.ltwh[rows] = boxes
        store.obs_prev[rows] = store.obs_last[rows]
        store.obs_last[rows] = store.all_last[rows] = xywh
        previous = np.where(store.activated[rows, None], store.all_prev[rows], store.obs_prev[rows])
        store.conds[rows, store.num_conds[rows] - 1] = np.concatenate([xywh, xywh - previous], axis=1)
        store.mark_matched(rows, scores[dets], frame_id, keep_score)

    def _update_features(self, rows: np.ndarray, features: np.ndarray, alpha: np.ndarray) -> None:
        """Official ``update_features``: exponential moving average, renormalised."""
        self.tracks.emb[rows] = moving_average_unit(self.tracks.emb[rows], features, alpha)

    def _output(self, rows: np.ndarray) -> TrackOutput:
        if not len(rows):
            return TrackOutput.empty()
        store = self.tracks
        return TrackOutput(store.ids[rows], store_boxes(store, rows), store.score[rows])
