"""Deterministic per-frame TransTrack query outputs for the tracker's golden tests (``tests/fixtures/transtrack_official``).

TransTrack's tracker (``models/tracker.py``) reads, per frame, the post-processed outputs of ALL object queries
(``scores``, ``boxes`` x1 y1 x2 y2 in original-frame pixels) and the track decoder's boxes (``track_boxes``: row ``i``
= the previous frame's query ``i`` relocated into the current frame). The shared data has no network outputs, so this
module builds them from the simulated detections and the ground truth of ``shared/data/AnimalTrack-10fps-sim``,
deterministically: numpy ``Generator``s seeded by ``zlib.crc32``, no global state; every value is a float32 number
(the official tracker reads float32 tensors), held as float64.

Per video (``W x H`` from seqinfo.ini), ``NUM_QUERIES`` queries; per frame ``t = 1..seqLength``, one generator
``rng = default_rng(crc32(f'transtrack:{video}:{t}'))`` draws, in this order: ``perm = rng.permutation(N)``,
``pad = rng.random((N, 5))``, ``parked_jitter = rng.standard_normal((4, 4))``, ``parked_score = rng.random(4)``,
``noise = rng.standard_normal((N, 4))``, ``jump = rng.random(N)``, ``jump_offset = rng.random((N, 2))``,
``track_score = rng.random(N)``. Then:

* Real objects: the frame's rows of ``dets/<video>.txt`` (file order; ``x2 = left + width``), then the four parked
  objects visible in the frame. Parked object ``p`` (``PARKED[p] = (fx, fy, gap)``) is a fixed box centred at
  ``(fx W, fy H)`` of size ``PARKED_SIZE * (W, H)``, plus ``parked_jitter[p]`` px, score ``0.8 + 0.15 *
  parked_score[p]``; it is visible in frames with ``(t - 1) % (PARKED_VISIBLE + gap) < PARKED_VISIBLE`` (so it is
  missed ``gap`` frames in a row: gaps 31 and 32 straddle the official 32-frame memory, 7 and 8 the 8-frame one).
  Object ``k`` takes query ``perm[k]``; the other queries are padding: centre ``(pad0 W, pad1 H)``, size ``(0.02 +
  0.13 pad2) W x (0.02 + 0.13 pad3) H``, score ``PAD_SCORE_MAX * pad4``.
* Blackout: in frames with ``t % BLACKOUT_PERIOD == BLACKOUT_PHASE`` every query's score is multiplied by
  ``BLACKOUT_FACTOR`` (no detection passes 0.4: every track goes unmatched for a frame).
* Track decoder (``tracking``), row ``i`` = previous frame's query ``i`` with box ``b``: an object query owned at
  ``t - 1`` by ground-truth id ``g`` (its best-IoU ground-truth box, IoU >= ``MATCH_IOU``, of positive size) that
  ``g`` also has in frame ``t`` moves with ``g``: centre shifted by ``g``'s centre motion, width and height scaled by ``g``'s; a parked
  object's query and any other query stay in place. Then noise: centre ``+= REL_NOISE * noise[i, :2] * (w, h)``,
  size ``*= exp(REL_NOISE * noise[i, 2:])``; where ``jump[i] < JUMP_PROB`` the track decoder loses the object:
  centre ``+= (4 jump_offset[i] - 2) * (w, h)``; width and height at least 2 px. Score: previous score times ``0.8 +
  0.2 track_score[i]``. On frame 1 the rows are the detections themselves (the official tracker ignores them there).

Boxes and scores are rounded to float32 once, in the order above (each frame's values from the previous frame's
rounded ones). :func:`inputs_digest` is the sha256 the fixtures' README records.
"""
from __future__ import annotations

import hashlib
import os.path as osp
import zlib
from dataclasses import dataclass

import numpy as np

from vastmat.datasets.formats import read_detections, read_gt, read_seqinfo

DATA_ROOT = osp.normpath(osp.join(osp.dirname(osp.abspath(__file__)), '..', '..', '..', 'shared', 'data',
                                  'AnimalTrack-10fps-sim'))
NUM_QUERIES = 100
PAD_SCORE_MAX = 0.35
PARKED = ((0.03, 0.05, 31), (0.97, 0.05, 32), (0.03, 0.95, 7), (0.97, 0.95, 8))
PARKED_SIZE = (0.025, 0.045)
PARKED_VISIBLE = 5
BLACKOUT_PERIOD, BLACKOUT_PHASE, BLACKOUT_FACTOR = 40, 12, 0.3
REL_NOISE = 0.04
JUMP_PROB = 0.03
MATCH_IOU = 0.5


@dataclass
class FrameQueries:
    """One frame's query outputs: ``boxes (N, 4)`` x1 y1 x2 y2 and ``scores (N,)`` of the object queries, and
    ``track_boxes`` / ``track_scores`` of the track decoder (row i = the previous frame's query i)."""

    boxes: np.ndarray
    scores: np.ndarray
    track_boxes: np.ndarray
    track_scores: np.ndarray


def _f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float64).astype(np.float32).astype(np.float64)


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Plain IoU between x1 y1 x2 y2 boxes ``a (n, 4)`` and ``b (m, 4)``."""
    iw = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    ih = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    inter = iw * ih
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / np.maximum(area_a[:, None] + area_b[None] - inter, 1e-12)


def _xyxy(ltwh: np.ndarray) -> np.ndarray:
    return np.concatenate([ltwh[:, :2], ltwh[:, :2] + ltwh[:, 2:]], axis=1)


def parked_visible(p: int, frame: int) -> bool:
    """Whether parked object ``p`` is detected in ``frame``."""
    return (frame - 1) % (PARKED_VISIBLE + PARKED[p][2]) < PARKED_VISIBLE


def video_queries(video: str, data_root: str = DATA_ROOT) -> list[FrameQueries]:
    """The query outputs of every frame of ``video`` (frames 1..seqLength), as the module docstring says."""
    info = read_seqinfo(osp.join(data_root, 'gt', video, 'seqinfo.ini'))
    length, width, height = int(info['seqLength']), float(info['imWidth']), float(info['imHeight'])
    dets = read_detections(osp.join(data_root, 'dets', f'{video}.txt'), length)
    gt = read_gt(osp.join(data_root, 'gt', video, 'gt', 'gt.txt'), length)
    det_boxes, gt_boxes = _xyxy(dets.boxes), _xyxy(gt.boxes)
    n = NUM_QUERIES
    scale = np.array([width, height])
    parked_size = np.array(PARKED_SIZE) * scale

    frames: list[FrameQueries] = []
    prev_boxes = prev_scores = None
    prev_owner = np.full(n, -1, np.int64)  # the ground-truth id owning each query at t - 1, or -1
    prev_gt: dict[int, np.ndarray] = {}
    for t in range(1, length + 1):
        rng = np.random.default_rng(zlib.crc32(f'transtrack:{video}:{t}'.encode()))
        perm = rng.permutation(n)
        pad = rng.random((n, 5))
        parked_jitter = rng.standard_normal((len(PARKED), 4))
        parked_score = rng.random(len(PARKED))
        noise = rng.standard_normal((n, 4))
        jump = rng.random(n)
        jump_offset = rng.random((n, 2))
        track_score = rng.random(n)

        rows = np.flatnonzero(dets.frames == t)
        obj_boxes, obj_scores = [det_boxes[rows]], [dets.scores[rows]]
        for p, (fx, fy, _) in enumerate(PARKED):
            if parked_visible(p, t):
                centre = np.array([fx, fy]) * scale
                obj_boxes.append((np.concatenate([centre - parked_size / 2, centre + parked_size / 2])
                                  + parked_jitter[p])[None])
                obj_scores.append(np.array([0.8 + 0.15 * parked_score[p]]))
        obj_boxes, obj_scores = np.concatenate(obj_boxes), np.concatenate(obj_scores)
        k = len(obj_scores)
        if k > n:
            raise ValueError(f'{video} frame {t}: {k} objects for {n} queries')
        centre, size = pad[:, :2] * scale, (0.02 + 0.13 * pad[:, 2:4]) * scale
        boxes = np.concatenate([centre - size / 2, centre + size / 2], axis=1)
        scores = PAD_SCORE_MAX * pad[:, 4]
        boxes[perm[:k]], scores[perm[:k]] = obj_boxes, obj_scores
        if t % BLACKOUT_PERIOD == BLACKOUT_PHASE:
            scores = scores * BLACKOUT_FACTOR
        boxes, scores = _f32(boxes), _f32(scores)

        g_rows = np.flatnonzero(gt.frames == t)
        cur_gt = {int(i): b for i, b in zip(gt.ids[g_rows], gt_boxes[g_rows])}
        if t == 1:
            track_boxes, track_scores = boxes.copy(), scores.copy()
        else:
            centre = (prev_boxes[:, :2] + prev_boxes[:, 2:]) / 2
            size = prev_boxes[:, 2:] - prev_boxes[:, :2]
            for i in np.flatnonzero(prev_owner >= 0):
                g = int(prev_owner[i])
                before, after = prev_gt[g], cur_gt.get(g)
                if after is not None and (before[2:] > before[:2]).all():
                    centre[i] += (after[:2] + after[2:]) / 2 - (before[:2] + before[2:]) / 2
                    size[i] *= (after[2:] - after[:2]) / (before[2:] - before[:2])
            centre += REL_NOISE * noise[:, :2] * size
            size *= np.exp(REL_NOISE * noise[:, 2:])
            lost = jump < JUMP_PROB
            centre[lost] += (4 * jump_offset[lost] - 2) * size[lost]
            size = np.maximum(size, 2.0)
            track_boxes = _f32(np.concatenate([centre - size / 2, centre + size / 2], axis=1))
            track_scores = _f32(prev_scores * (0.8 + 0.2 * track_score))
        frames.append(FrameQueries(boxes, scores, track_boxes, track_scores))

        owner = np.full(n, -1, np.int64)
        if len(g_rows):
            real = perm[:len(rows)]  # the detection queries (parked objects own no ground truth)
            if len(real):
                iou = _iou(boxes[real], gt_boxes[g_rows])
                best = iou.argmax(axis=1)
                ok = iou[np.arange(len(real)), best] >= MATCH_IOU
                owner[real[ok]] = gt.ids[g_rows[best[ok]]]
        prev_boxes, prev_scores, prev_owner, prev_gt = boxes, scores, owner, cur_gt
    return frames


def inputs_digest(queries: dict[str, list[FrameQueries]]) -> str:
    """sha256 of the inputs: per video in name order, per frame, the float32 bytes of boxes, scores, track_boxes,
    track_scores."""
    digest = hashlib.sha256()
    for video in sorted(queries):
        digest.update(video.encode())
        for q in queries[video]:
            for array in (q.boxes, q.scores, q.track_boxes, q.track_scores):
                digest.update(np.ascontiguousarray(array, np.float32).tobytes())
    return digest.hexdigest()


def tracking_frames(video: str, queries: list[FrameQueries], frame_rate: float = 10.0) -> list:
    """The queries as the tracker's :class:`~vastmat.structures.tracking.TrackingFrame` s (``extra_dets['tracking']``
    the track decoder's rows)."""
    from vastmat.structures.tracking import FrameDetections, TrackingFrame
    return [TrackingFrame(FrameDetections(q.boxes, q.scores), t, video_name=video, frame_rate=frame_rate,
                          extra_dets=dict(tracking=FrameDetections(q.track_boxes, q.track_scores)))
            for t, q in enumerate(queries, start=1)]
