"""The stages of the official ``update`` that ByteTrack (:class:`.BYTETracker`) and FairMOT (:class:`.JDETracker`)
share, written once, on the rows of a :class:`.KalmanTrackStore` (reference/trackers.md sections 1 and 8):

- prediction (:func:`predict_pool`): the pool (confirmed tracked, then lost tracks) stepped by the Kalman filter,
  the official ``STrack.multi_predict``;
- association (:func:`frame_similarity`, :func:`match_stage`): one similarity matrix per frame for the IoU-family
  stages, then each stage's lapjv on ``1 - S`` (``1 - S * score`` where the official fuses scores);
- initiation (:func:`initiate`): new tracks from the detections nobody took, ``score >= det_thresh``;
- removal (:func:`removed_rows`): unmatched unconfirmed tracks, and lost tracks older than the buffer
  (:func:`buffer_size`);
- output (:func:`reported_rows`): the box written for a track (:func:`reported_boxes`) and the official
  evaluators' filter.

What differs stays in each tracker: the stages it runs and their thresholds (ByteTrack's high / low split, score
fusion and ``det_thresh = track_thresh + 0.1``; FairMOT's embedding stage, ``det_thresh = conf_thres`` and
re-activated tracks keeping their score), and its quirks (Roboflow ``trackers``' variants of ByteTrack).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from vastmat.structures.bbox import ltwh_to_xyah, ltwh_to_xyxy, xyah_to_xyxy

from ..association.solvers import Assignment
from .motion_context import matcher_context
from .track_lifecycle import TRACKED, reported_mask
from .track_store import KalmanTrackStore, TrackRows

REPORTED_BOXES = ('kalman', 'detection')
_NO_MATCHES = np.zeros((0, 2), np.int64)
_NO_MATCHES.flags.writeable = False
_NO_ROWS = np.zeros(0, np.int64)
_NO_ROWS.flags.writeable = False


def store_kalman_boxes(store: KalmanTrackStore, rows: np.ndarray) -> np.ndarray:
    """x1 y1 x2 y2 of the Kalman states of rows of a track store."""
    return xyah_to_xyxy(store.mean[rows, :4])


# ------------------------------------------------------------------------------------------------------ prediction
def predict_pool(motion: Any, store: KalmanTrackStore,
                 freeze_lost_height: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The pool of the first association (confirmed tracked tracks, then lost ones) predicted, and the unconfirmed
    tracks (not predicted, as the official): ``(pool, unconfirmed)``.

    The prediction is the official ``STrack.multi_predict``: one Kalman step for the whole pool, the height velocity
    (``vh``, state index 7) zeroed first for tracks that are not tracked (unless ``freeze_lost_height`` is False).
    ``motion`` steps the store's arrays in place (``predict_rows``)."""
    confirmed, unconfirmed = store.confirmed_and_unconfirmed()
    pool = store.pool(confirmed)
    if len(pool):
        if freeze_lost_height:
            store.mean[pool[store.state[pool] != TRACKED], 7] = 0.0
        motion.predict_rows(store.mean, store.covariance, pool)  # in place on the store's rows
    return pool, unconfirmed


# ----------------------------------------------------------------------------------------------------- association
def frame_similarity(matcher: Any, store: KalmanTrackStore, rows: np.ndarray, boxes: np.ndarray,
                     num_high: int) -> np.ndarray:
    """The matcher's gated similarity of the Kalman boxes of ``rows`` to the frame's detection ``boxes``, once per
    frame for every IoU-family stage: each entry depends only on its pair, and the tracks it covers are not updated
    before their stage, so its slices equal the official per-stage matrices (the matcher's fixed cost is paid
    once). ``num_high``: the detections of the first stage, the first ones of ``boxes``."""
    similarity = matcher(store_kalman_boxes(store, rows), boxes,
                         **matcher_context(matcher, TrackRows(store, rows), num_high))
    return similarity.gated_scores()


def stage_cost(similarity: np.ndarray, rows: np.ndarray | slice, cols: np.ndarray | slice,
               scores: np.ndarray | None) -> np.ndarray:
    """``1 - S`` (``1 - S * score`` with ``scores``: the official ``fuse_score``) of ``rows`` x ``cols`` of the
    frame's similarity (slices where a stage's rows or columns are a range: no fancy-index copy)."""
    sim = similarity[rows][:, cols]
    if scores is not None:
        sim = sim * scores[cols][None, :]
    return 1.0 - sim


def match_stage(solver: Any, similarity: np.ndarray, rows: np.ndarray | slice, cols: np.ndarray | slice,
                scores: np.ndarray | None = None) -> Assignment:
    """A stage's assignment, ``solver`` (lapjv with the stage's cost limit) on :func:`stage_cost`; a stage without
    rows or columns (often the second and third) builds no matrix."""
    n, m = (r.stop - r.start if isinstance(r, slice) else len(r) for r in (rows, cols))
    if not n or not m:
        return Assignment(_NO_MATCHES, np.arange(n), np.arange(m))
    return solver(stage_cost(similarity, rows, cols, scores))


# ------------------------------------------------------------------------------------------------------ initiation
def initiate(motion: Any, store: KalmanTrackStore, candidates: np.ndarray, scores: np.ndarray, det_thresh: float,
             frame_id: int, ltwh: np.ndarray, xyah: np.ndarray | None = None, **columns: np.ndarray) -> np.ndarray:
    """New tracks (the official ``activate``) from the detections ``candidates`` that nobody took, those with
    ``score >= det_thresh``: a Kalman state initiated from the detection, which is also their ``detection_box``
    (``ltwh``; ``xyah``: the same boxes converted, where the caller has them); ``columns`` are further per-detection
    columns (FairMOT's embeddings). A track started in the video's first frame is confirmed at once
    (:meth:`.TrackStore.add`). Returns the new rows."""
    fresh = candidates[scores[candidates] >= det_thresh]
    if not len(fresh):
        return _NO_ROWS
    rows = store.add(scores[fresh], frame_id, detection_box=ltwh[fresh],
                     **{name: values[fresh] for name, values in columns.items()})
    motion.initiate_rows(store.mean, store.covariance, rows,
                         ltwh_to_xyah(ltwh[fresh]) if xyah is None else xyah[fresh])
    return rows


# --------------------------------------------------------------------------------------------------------- removal
def buffer_size(track_buffer: int, buffer_frame_rate: float | None, frame: Any) -> int:
    """Frames a lost track is kept, the official ``int(frame_rate / 30 * track_buffer)``; ``buffer_frame_rate``
    None takes the frame's video rate."""
    rate = buffer_frame_rate
    if rate is None:
        frame.require('frame_rate')
        rate = frame.frame_rate
    return int(rate / 30.0 * track_buffer)


def removed_rows(store: KalmanTrackStore, unconfirmed: np.ndarray, unmatched: np.ndarray, frame_id: int,
                 max_time_lost: int) -> np.ndarray:
    """The tracks removed this frame: the unconfirmed ones the last stage left unmatched (``unmatched`` indexes
    ``unconfirmed``), and the lost ones not matched for more than ``max_time_lost`` frames."""
    return np.concatenate([unconfirmed[unmatched], store.stale_lost(frame_id, max_time_lost)])


# ---------------------------------------------------------------------------------------------------------- output
def check_reported_box(reported_box: str) -> str:
    if reported_box not in REPORTED_BOXES:
        raise ValueError(f'reported_box must be one of {REPORTED_BOXES}, got {reported_box!r}')
    return reported_box


def reported_boxes(store: KalmanTrackStore, rows: np.ndarray, reported_box: str) -> np.ndarray:
    """x1 y1 x2 y2 written for rows of a track store: their Kalman states (``'kalman'``, the official) or the
    detections they took last (``'detection'``, Roboflow ``trackers``; a ``detection_box`` column, ltwh)."""
    if reported_box == 'kalman':
        return store_kalman_boxes(store, rows)
    return ltwh_to_xyxy(store.detection_box[rows])


def reported_rows(store: KalmanTrackStore, rows: np.ndarray, reported_box: str, min_box_area: float | None,
                  aspect_ratio_thresh: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The rows written for a frame and their boxes (:func:`reported_boxes`): those of ``rows`` that pass the
    official evaluators' filter (:func:`.reported_mask`)."""
    boxes = reported_boxes(store, rows, reported_box)
    keep = reported_mask(boxes, min_box_area, aspect_ratio_thresh)
    return rows[keep], boxes[keep]
