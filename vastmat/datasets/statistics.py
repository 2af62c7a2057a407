"""The paper's dataset statistics (Table 3 style counts, Figure 3 motion analysis, Table 2 displacement bins).

Definitions (paper section 3.4, Figure 3 and Table 2; DESIGN.md section 4):
* normalized displacement (target motion) of two boxes = centre distance / mean of the two box diagonals;
* motion and IoU are measured between consecutive annotated frames (gap 1 in the analysed, possibly strided, frame
  index) of the same identity; area and aspect ratio relative to the identity's first box (the first box itself is
  left out);
* Table 2 events: each box paired with the same identity's next box when that is at most ``max_gap`` frames later.
Only valid (evaluated) rows enter the motion analysis and Table 2.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

import numpy as np

from .categories import GROUPS, Categories
from .formats import GroundTruth
from .sequences import Sequence

DISPLACEMENT_EDGES = (0.25, 0.5, 1.0)  # Table 2 bins: [0, .25], (.25, .5], (.5, 1], (1, inf)


def pairwise_iou_ltwh(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of ``a[i]`` with ``b[i]`` for (n, 4) left-top-width-height boxes (continuous coordinates)."""
    ax2, ay2 = a[:, 0] + a[:, 2], a[:, 1] + a[:, 3]
    bx2, by2 = b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]
    iw = np.clip(np.minimum(ax2, bx2) - np.maximum(a[:, 0], b[:, 0]), 0, None)
    ih = np.clip(np.minimum(ay2, by2) - np.maximum(a[:, 1], b[:, 1]), 0, None)
    inter = iw * ih
    return inter / (a[:, 2] * a[:, 3] + b[:, 2] * b[:, 3] - inter)


def normalized_displacement(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Centre distance / mean of the two diagonals, for (n, 4) ltwh boxes ``a[i]``, ``b[i]``."""
    distance = np.hypot(a[:, 0] + a[:, 2] / 2 - b[:, 0] - b[:, 2] / 2, a[:, 1] + a[:, 3] / 2 - b[:, 1] - b[:, 3] / 2)
    return distance / ((np.hypot(a[:, 2], a[:, 3]) + np.hypot(b[:, 2], b[:, 3])) / 2)


def next_observation_pairs(gt: GroundTruth, max_gap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Index pairs (i, j) where row j is the next valid box of row i's identity, at most ``max_gap`` frames later.

    Returns:
        i, j and the frame gaps.
    """
    valid = np.flatnonzero(gt.valid == 1)
    order = valid[np.lexsort((gt.frames[valid], gt.ids[valid]))]
    i, j = order[:-1], order[1:]
    gap = gt.frames[j] - gt.frames[i]
    keep = (gt.ids[i] == gt.ids[j]) & (gap >= 1) & (gap <= max_gap)
    return i[keep], j[keep], gap[keep]


def _share(mask: np.ndarray) -> float:
    return float(mask.mean()) if len(mask) else float('nan')


def _quantiles(values: np.ndarray, prefix: str, qs: Iterable[int] = (5, 50, 95)) -> dict:
    if not len(values):
        return {f'{prefix}_p{q}' if q != 50 else f'{prefix}_median': float('nan') for q in qs}
    return {f'{prefix}_p{q}' if q != 50 else f'{prefix}_median': float(np.percentile(values, q)) for q in qs}


def counts(sequences: list[Sequence], categories: Categories | None = None) -> dict:
    """Videos, categories, frames, boxes, trajectories, ... (paper Table 3 style) and per-group counts."""
    frames = sum(s.length for s in sequences)
    boxes = sum(len(s.gt) for s in sequences if s.gt is not None)
    valid_boxes = sum(int((s.gt.valid == 1).sum()) for s in sequences if s.gt is not None)
    trajectories_per_video = [len(np.unique(s.gt.ids)) if s.gt is not None else 0 for s in sequences]
    trajectories = int(sum(trajectories_per_video))
    hours = sum(s.length / s.frame_rate for s in sequences if s.frame_rate) / 3600
    category_sets = []
    for s in sequences:
        cats = s.gt.categories[(s.gt.valid == 1) & (s.gt.categories > 0)] if s.gt is not None else []
        category_sets.append(set(np.unique(cats).tolist()))
    all_categories = set().union(*category_sets) if category_sets else set()
    result = dict(
        videos=len(sequences), categories=len(all_categories), frames=int(frames), boxes=int(boxes),
        valid_boxes=int(valid_boxes), trajectories=trajectories,
        trajectories_per_video=trajectories / len(sequences) if sequences else float('nan'),
        objects_per_frame=boxes / frames if frames else float('nan'), hours=hours,
        multi_category_videos=sum(len(c) >= 2 for c in category_sets),
        videos_with_more_than_10_trajectories=sum(t > 10 for t in trajectories_per_video),
        videos_without_category=sum(not c for c in category_sets))
    if categories is not None and all_categories:
        result['groups'] = _group_counts(sequences, category_sets, categories)
    return result


def _group_counts(sequences: list[Sequence], category_sets: list[set], categories: Categories) -> dict:
    """Per group: categories present, videos containing the group, valid boxes, trajectories (modal category)."""
    groups = {g: dict(categories=set(), videos=0, boxes=0, trajectories=0) for g in GROUPS}
    for sequence, cats in zip(sequences, category_sets):
        for group in {categories.group_of(c) for c in cats}:
            groups[group]['videos'] += 1
        gt = sequence.gt
        rows = (gt.valid == 1) & (gt.categories > 0)
        for category, n in Counter(gt.categories[rows].tolist()).items():
            group = categories.group_of(category)
            groups[group]['categories'].add(category)
            groups[group]['boxes'] += n
        for track_id in np.unique(gt.ids[rows]):
            modal = Counter(gt.categories[rows & (gt.ids == track_id)].tolist()).most_common(1)[0][0]
            groups[categories.group_of(modal)]['trajectories'] += 1
    for values in groups.values():
        values['categories'] = len(values['categories'])
    return groups


def motion(sequences: list[Sequence]) -> tuple[dict, dict]:
    """Figure 3: target motion, consecutive-frame IoU, relative area and aspect ratio.

    Returns:
        The summary (medians, percentiles, share of IoU < 0.8) and the raw values (for histograms).
    """
    displacement, iou, rel_area, rel_aspect = [], [], [], []
    for s in sequences:
        gt = s.gt
        if gt is None or not len(gt):
            continue
        i, j, _ = next_observation_pairs(gt, max_gap=1)
        displacement.append(normalized_displacement(gt.boxes[i], gt.boxes[j]))
        iou.append(pairwise_iou_ltwh(gt.boxes[i], gt.boxes[j]))
        valid = np.flatnonzero(gt.valid == 1)
        order = valid[np.lexsort((gt.frames[valid], gt.ids[valid]))]
        ids = gt.ids[order]
        starts = np.r_[True, ids[1:] != ids[:-1]]
        first = order[np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))]
        later = ~starts
        w, h = gt.boxes[order, 2], gt.boxes[order, 3]
        w0, h0 = gt.boxes[first, 2], gt.boxes[first, 3]
        rel_area.append((w * h / (w0 * h0))[later])
        rel_aspect.append(((w / h) / (w0 / h0))[later])
    values = {name: np.concatenate(v) if v else np.zeros(0) for name, v in
              (('motion', displacement), ('iou', iou), ('relative_area', rel_area),
               ('relative_aspect_ratio', rel_aspect))}
    summary = dict(pairs=int(len(values['motion'])))
    summary.update(_quantiles(values['motion'], 'motion', (50, 95)))
    summary.update(_quantiles(values['iou'], 'iou', (5, 50)))
    summary['iou_below_0.8_share'] = _share(values['iou'] < 0.8)
    summary.update(_quantiles(values['relative_area'], 'relative_area'))
    summary.update(_quantiles(values['relative_aspect_ratio'], 'relative_aspect_ratio'))
    return summary, values


def displacement_table(sequences: list[Sequence], max_gap: int = 3,
                       edges: tuple[float, ...] = DISPLACEMENT_EDGES) -> dict:
    """Table 2: same-identity events with frame gap <= ``max_gap``, binned by normalized displacement.

    Returns:
        ``{'events': N, 'zero_overlap_share': s, 'bins': [{'range', 'count', 'share', 'median_iou',
        'zero_overlap_share'}, ...]}`` with right-closed bins ``[0, e1], (e1, e2], ..., (e_last, inf)``.
    """
    displacement, iou = [], []
    for s in sequences:
        if s.gt is None or not len(s.gt):
            continue
        i, j, _ = next_observation_pairs(s.gt, max_gap=max_gap)
        displacement.append(normalized_displacement(s.gt.boxes[i], s.gt.boxes[j]))
        iou.append(pairwise_iou_ltwh(s.gt.boxes[i], s.gt.boxes[j]))
    displacement = np.concatenate(displacement) if displacement else np.zeros(0)
    iou = np.concatenate(iou) if iou else np.zeros(0)
    bin_index = np.searchsorted(np.asarray(edges), displacement, side='left')  # right-closed bins
    bounds = (0.0, *edges, float('inf'))
    rows = []
    for b in range(len(edges) + 1):
        in_bin = bin_index == b
        label = f'[{bounds[b]:g}, {bounds[b + 1]:g}]' if b == 0 else (
            f'({bounds[b]:g}, {bounds[b + 1]:g}]' if b < len(edges) else f'> {bounds[b]:g}')
        rows.append(dict(range=label, count=int(in_bin.sum()),
                         share=float(in_bin.mean()) if len(in_bin) else float('nan'),
                         median_iou=float(np.median(iou[in_bin])) if in_bin.any() else float('nan'),
                         zero_overlap_share=_share(iou[in_bin] == 0)))
    return dict(events=int(len(iou)), max_gap=max_gap, zero_overlap_share=_share(iou == 0), bins=rows)
