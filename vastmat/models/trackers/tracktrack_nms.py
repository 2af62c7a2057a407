"""TrackTrack's two NMS steps on detections (kamkyu94/TrackTrack, reference/trackers.md section 3): which boxes of
the NMS-0.95 set the main NMS suppressed (``deleted_detections``, TPA's penalised columns) and TAI, the track-aware
NMS choosing the leftover detections that start tracks (``track_aware_nms``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from vastmat.structures.pair_geometry import PairGeometry
from vastmat.structures.tracking import FrameDetections


def track_aware_nms(track_boxes: np.ndarray, det_boxes: np.ndarray, scores: np.ndarray, iou_thr: float,
                    score_thr: float) -> np.ndarray:
    """TAI (official ``track_aware_nms``): which candidate detections start tracks. A candidate needs ``score >
    score_thr`` and IoU <= ``iou_thr`` with every alive track; going through the candidates in their given order
    (not sorted), an allowed one suppresses every still-allowed candidate of lower score overlapping it by more than
    ``iou_thr``. Returns a bool mask."""
    allowed = scores > score_thr
    # a candidate overlapping an alive track never starts one and never suppresses another (the official loop skips
    # it before its suppression step): it is dropped first, and the loop runs over the rest only
    if len(track_boxes) and allowed.any():
        allowed[allowed] = PairGeometry(det_boxes[allowed], track_boxes, plus_one=True).iou.max(axis=1) <= iou_thr
    candidates = np.flatnonzero(allowed)
    if len(candidates) < 2:
        return allowed
    det_iou = PairGeometry(det_boxes[candidates], det_boxes[candidates], plus_one=True).iou
    allowed[candidates[~_survivors(det_iou, scores[candidates], iou_thr)]] = False
    return allowed


@njit(cache=True, nogil=True)
def _survivors(det_iou: np.ndarray, scores: np.ndarray, iou_thr: float) -> np.ndarray:  # pragma: no cover
    """TAI's suppression loop (compiled: a Python loop of numpy calls per candidate before): in the given order,
    each surviving candidate suppresses every candidate of lower score overlapping it by more than ``iou_thr``."""
    alive = np.ones(len(scores), np.bool_)
    for k in range(len(scores)):
        if alive[k]:
            for j in range(len(scores)):
                if j != k and scores[k] > scores[j] and det_iou[k, j] > iou_thr:
                    alive[j] = False
    return alive


def deleted_detections(dets: FrameDetections, extra: FrameDetections, iou_thr: float = 0.97) -> FrameDetections:
    """Official ``find_deleted_detections``: the boxes of the NMS-0.95 set whose best IoU with the main (NMS-0.80)
    detections is below ``iou_thr``, i.e. candidates the main NMS suppressed."""
    if len(extra) == 0 or len(dets) == 0:
        return extra
    return extra.select(_suppressed(dets, extra, iou_thr))


def deleted_rows_read(dets: FrameDetections, extra: FrameDetections, det_thr: float,
                      iou_thr: float = 0.97) -> np.ndarray:
    """Which rows of a frame's NMS-0.95 set TrackTrack reads (a bool mask): the deleted ones
    (:func:`deleted_detections`) scoring above ``det_thr``. A frame without main detections reads none (the
    tracker only ages its tracks there)."""
    if len(extra) == 0 or len(dets) == 0:
        return np.zeros(len(extra), bool)
    return _suppressed(dets, extra, iou_thr) & (extra.scores > det_thr)


def _suppressed(dets: FrameDetections, extra: FrameDetections, iou_thr: float) -> np.ndarray:
    return PairGeometry(dets.bboxes, extra.bboxes, plus_one=True).iou.max(axis=0) < iou_thr
