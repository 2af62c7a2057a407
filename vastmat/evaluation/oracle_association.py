"""Truth identities on a tracker's or a detector's boxes, and the oracle association: the ceiling of any
association of a video's detections.

A box takes the identity of the valid truth box it overlaps at IoU >= ``TRUTH_IOU`` (one to one per frame, the
Hungarian assignment on IoU, ``scipy``'s ``linear_sum_assignment``); a box that matches none is dropped. Applied to
a tracker's output it measures the association reachable on those boxes (``tools/analysis/association_split.py``);
applied to the detections themselves it is the oracle association (``tools/analysis/oracle_association.py``): its
DetA is what the detections allow at best and its association is perfect wherever the detector found the animal.
"""
from __future__ import annotations

import os.path as osp

import numpy as np
from scipy.optimize import linear_sum_assignment

from vastmat.datasets.detections import detection_file
from vastmat.datasets.formats import Detections, GroundTruth, TrackResults, read_detections, write_results
from vastmat.datasets.sequences import load_sequence
from vastmat.structures.bbox import ltwh_to_xyxy
from vastmat.structures.pair_geometry import PairGeometry

TRUTH_IOU = 0.5  # a box takes a ground-truth id at this IoU or more


def iou_pairs(boxes_a: np.ndarray, boxes_b: np.ndarray, min_iou: float) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``boxes_a`` and of ``boxes_b`` (``x1 y1 x2 y2``) paired one to one by the Hungarian assignment on IoU,
    the pairs at IoU >= ``min_iou``."""
    if not len(boxes_a) or not len(boxes_b):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    iou = PairGeometry(boxes_a, boxes_b).iou
    rows, cols = linear_sum_assignment(-iou)
    good = iou[rows, cols] >= min_iou
    return rows[good], cols[good]


def match_truth(frames: np.ndarray, boxes: np.ndarray, gt_frames: np.ndarray, gt_ids: np.ndarray,
                gt_boxes: np.ndarray, min_iou: float = TRUTH_IOU) -> tuple[np.ndarray, np.ndarray]:
    """The rows (``frames``, ``boxes`` left, top, width, height) that match a ground-truth box at IoU >= ``min_iou``
    (one to one per frame) and the ids of those ground-truth boxes."""
    keep, ids = [], []
    det_order, gt_order = np.argsort(frames, kind='stable'), np.argsort(gt_frames, kind='stable')
    unique = np.unique(frames)
    det_bounds = np.searchsorted(frames[det_order], np.stack([unique, unique + 1]))
    gt_bounds = np.searchsorted(gt_frames[gt_order], np.stack([unique, unique + 1]))
    for k in range(len(unique)):
        rows = det_order[det_bounds[0, k]:det_bounds[1, k]]
        truth = gt_order[gt_bounds[0, k]:gt_bounds[1, k]]
        pairs_r, pairs_t = iou_pairs(ltwh_to_xyxy(boxes[rows]), ltwh_to_xyxy(gt_boxes[truth]), min_iou)
        keep.extend(rows[pairs_r].tolist())
        ids.extend(gt_ids[truth[pairs_t]].tolist())
    return np.asarray(keep, np.int64), np.asarray(ids, np.int64)


def truth_identities(results: TrackResults, gt: GroundTruth, min_iou: float = TRUTH_IOU) -> TrackResults:
    """The result boxes that match a box of ``gt`` (:func:`match_truth`), each with that box's id; the other boxes
    are dropped."""
    keep, ids = match_truth(results.frames, results.boxes, gt.frames, gt.ids, gt.boxes, min_iou)
    return TrackResults(results.frames[keep], ids, results.boxes[keep], results.scores[keep],
                        results.line_numbers[keep], results.path)


def oracle_tracks(gt: GroundTruth, detections: Detections, min_iou: float = TRUTH_IOU,
                  min_score: float = 0.0) -> TrackResults:
    """The oracle association of ``detections`` (those scoring ``min_score`` or more): each takes the identity of
    the valid truth box (valid 1: the boxes that are scored) it matches, the rest are dropped."""
    keep = detections.scores >= min_score
    results = TrackResults(detections.frames[keep], np.full(int(keep.sum()), -1), detections.boxes[keep],
                           detections.scores[keep], detections.line_numbers[keep], detections.path)
    return truth_identities(results, gt.select(gt.valid == 1), min_iou)


def write_oracle_folder(data_root: str, det_root: str, videos: list[str], out_dir: str,
                        min_iou: float = TRUTH_IOU, min_score: float = 0.0) -> str:
    """The oracle association of every video's cached detections, written as ``out_dir/<video>.txt`` (atomically);
    returns ``out_dir``."""
    for video in videos:
        sequence = load_sequence(data_root, video)
        if sequence.gt is None:
            raise FileNotFoundError(f'{sequence.directory}: no gt/gt.txt, the oracle needs the truth')
        detections = read_detections(detection_file(det_root, video), sequence.length)
        write_results(osp.join(out_dir, f'{video}.txt'), oracle_tracks(sequence.gt, detections, min_iou, min_score),
                      decimals=3)
    return out_dir
