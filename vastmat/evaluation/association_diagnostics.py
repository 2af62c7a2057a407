"""Candidate-pair discrimination of IoU and CenterSim on ground truth (paper appendix E.4, Table 24).

An *event* is a track (identity) present in frames t-1 and t with at least one other candidate in frame t. With
``g_prev`` the identity's box at t-1, ``c*`` the candidate with the highest IoU (>= 0.5) with its box at t and ``w*``
the other candidate with the highest IoU with ``g_prev``: ``m_I = IoU(g_prev, c*) - IoU(g_prev, w*)`` and
``m_C = CenterSim(g_prev, c*) - CenterSim(g_prev, w*)``. A positive margin means the cue ranks the correct
candidate first. Events are binned by the identity's normalized displacement from t-1 to t.
"""
from __future__ import annotations

import numpy as np

from vastmat.datasets.formats import GroundTruth
from vastmat.datasets.statistics import DISPLACEMENT_EDGES, normalized_displacement
from vastmat.models.association.matchers import CenterSim, IoU
from vastmat.structures.bbox import ltwh_to_xyxy


def candidate_margins(gt: GroundTruth, candidates: dict[int, np.ndarray] | None = None) -> np.ndarray:
    """``(events, 3)`` rows of (normalized displacement, m_I, m_C) for one video.

    Args:
        gt: the ground truth (valid rows are used).
        candidates: xyxy candidate boxes per frame (e.g. detections); default: the frame's ground-truth boxes.
    """
    iou, center = IoU(), CenterSim()
    valid = gt.select(gt.valid == 1)
    rows = []
    by_frame = {int(f): np.flatnonzero(valid.frames == f) for f in np.unique(valid.frames)}
    for frame, current in by_frame.items():
        previous = by_frame.get(frame - 1)
        if previous is None:
            continue
        boxes_now = ltwh_to_xyxy(valid.boxes[current])
        cands = boxes_now if candidates is None else np.asarray(candidates.get(frame, np.zeros((0, 4)))).reshape(-1, 4)
        if len(cands) < 2:
            continue
        prev_row = {int(valid.ids[r]): r for r in previous}
        keep = [k for k, r in enumerate(current) if int(valid.ids[r]) in prev_row]
        if not keep:
            continue
        now_rows = current[keep]
        prev_rows = np.array([prev_row[int(valid.ids[r])] for r in now_rows])
        g_prev = ltwh_to_xyxy(valid.boxes[prev_rows])
        to_truth = iou(boxes_now[keep], cands).scores  # (events, candidates), all events of the frame at once
        correct = to_truth.argmax(axis=1)
        iou_prev = iou(g_prev, cands).scores
        center_prev = center(g_prev, cands).scores
        competitor = iou_prev.copy()
        competitor[np.arange(len(keep)), correct] = -np.inf
        wrong = competitor.argmax(axis=1)
        ok = to_truth[np.arange(len(keep)), correct] >= 0.5
        e = np.arange(len(keep))[ok]
        displacement = normalized_displacement(valid.boxes[prev_rows[ok]], valid.boxes[now_rows[ok]])
        rows.extend(zip(displacement, iou_prev[e, correct[ok]] - iou_prev[e, wrong[ok]],
                        center_prev[e, correct[ok]] - center_prev[e, wrong[ok]]))
    return np.array(rows, dtype=np.float64).reshape(-1, 3)


def discrimination_table(margins: np.ndarray, edges: tuple[float, ...] = DISPLACEMENT_EDGES) -> dict:
    """Per displacement bin: events and the shares distinguished by only CenterSim, only IoU, both, neither."""
    displacement, m_iou, m_center = margins[:, 0], margins[:, 1], margins[:, 2]
    bins = np.searchsorted(np.asarray(edges), displacement, side='left')
    bounds = (0.0, *edges, float('inf'))
    out = []
    for b in range(len(edges) + 1):
        sel = bins == b
        n = int(sel.sum())
        iou_ok, center_ok = m_iou[sel] > 0, m_center[sel] > 0

        def share(mask):
            return float(mask.mean()) if n else float('nan')

        label = f'[{bounds[b]:g}, {bounds[b + 1]:g}]' if b == 0 else (
            f'({bounds[b]:g}, {bounds[b + 1]:g}]' if b < len(edges) else f'> {bounds[b]:g}')
        out.append(dict(range=label, events=n, only_centersim=share(center_ok & ~iou_ok),
                        only_iou=share(iou_ok & ~center_ok), both=share(iou_ok & center_ok),
                        neither=share(~iou_ok & ~center_ok),
                        median_m_iou=float(np.median(m_iou[sel])) if n else float('nan'),
                        median_m_centersim=float(np.median(m_center[sel])) if n else float('nan')))
    return dict(events=int(len(margins)), bins=out)
