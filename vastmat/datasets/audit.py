"""The reannotation audit of paper section 3.3 / appendix C.2: two annotation sets of the same clips compared.

Per frame, boxes are matched one-to-one at IoU >= 0.5 (Hungarian on 1 - IoU, or greedy by IoU). Over all audited
boxes (pooled): coverage of each side = matches / boxes of that side, F1 = 2 matches / (boxes of both sides), mean
IoU of matched pairs, category agreement of matched pairs, coverage of the original boxes by size (pixel area
< 32^2, [32^2, 96^2), >= 96^2). Identity: an original identity matched in at least two frames of a clip is
*consistent* when all its matches map to one reannotated identity; majority coverage is the share of its matched
frames mapped to its most frequent reannotated identity; its longest consistent span is the longest run of
consecutive frames matched to that identity; per-clip IDR = consistent / eligible identities (the paper's 0.50 and
0.93 examples).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from vastmat.structures.bbox import ltwh_to_xyxy
from vastmat.structures.pair_geometry import PairGeometry

from .categories import Categories
from .formats import GroundTruth

SIZE_BINS = (('small', 0.0, 32.0 ** 2), ('medium', 32.0 ** 2, 96.0 ** 2), ('large', 96.0 ** 2, float('inf')))


@dataclass(frozen=True)
class Clip:
    video: str
    first_frame: int
    last_frame: int

    @property
    def name(self) -> str:
        return f'{self.video}[{self.first_frame}-{self.last_frame}]'


def match_boxes(iou: np.ndarray, threshold: float = 0.5, method: str = 'hungarian') -> list[tuple[int, int]]:
    """One-to-one matches with IoU >= ``threshold``: maximum total IoU (Hungarian) or greedy by decreasing IoU."""
    if iou.size == 0:
        return []
    if method == 'hungarian':
        cost = np.where(iou >= threshold, 1.0 - iou, 1e6)  # a forbidden pair costs more than any allowed set
        rows, cols = linear_sum_assignment(cost)
        return [(int(r), int(c)) for r, c in zip(rows, cols) if iou[r, c] >= threshold]
    if method == 'greedy':
        pairs, used_r, used_c = [], set(), set()
        for flat in np.argsort(-iou, axis=None, kind='stable'):
            r, c = divmod(int(flat), iou.shape[1])
            if iou[r, c] < threshold:
                break
            if r not in used_r and c not in used_c:
                pairs.append((r, c))
                used_r.add(r)
                used_c.add(c)
        return pairs
    raise ValueError(f'matcher must be hungarian or greedy, got {method!r}')


def _coverage_stats(n_original: int, n_reannotated: int, matches: int) -> dict:
    total = n_original + n_reannotated
    return dict(original_boxes=n_original, reannotated_boxes=n_reannotated, matches=matches,
                coverage_original=matches / n_original if n_original else float('nan'),
                coverage_reannotated=matches / n_reannotated if n_reannotated else float('nan'),
                f1=2 * matches / total if total else float('nan'),
                unmatched_original=n_original - matches, unmatched_reannotated=n_reannotated - matches)


def _longest_run(frames: list[int]) -> int:
    best = run = 0
    previous = None
    for f in sorted(frames):
        run = run + 1 if previous is not None and f == previous + 1 else 1
        best = max(best, run)
        previous = f
    return best


def audit_clips(clips: list[Clip], original: dict[str, GroundTruth], reannotated: dict[str, GroundTruth],
                categories: Categories | None = None, iou_threshold: float = 0.5,
                method: str = 'hungarian') -> dict:
    """Compare two annotation sets on ``clips`` (ground truth per video name, all rows counted)."""
    total = Counter()
    matched_ious, category_agree, category_known = [], 0, 0
    size_counts = {name: Counter() for name, _, _ in SIZE_BINS}
    groups: dict[str, Counter] = defaultdict(Counter)
    eligible_records, per_clip = [], {}
    for clip in clips:
        if clip.video not in original or clip.video not in reannotated:
            side = 'original' if clip.video not in original else 'reannotated'
            raise KeyError(f'clip {clip.name}: video {clip.video!r} has no {side} annotations')
        gt_o, gt_r = original[clip.video], reannotated[clip.video]
        mapping: dict[int, dict[int, int]] = defaultdict(dict)  # original id -> {frame: reannotated id}
        for frame in range(clip.first_frame, clip.last_frame + 1):
            rows_o = np.flatnonzero(gt_o.frames == frame)
            rows_r = np.flatnonzero(gt_r.frames == frame)
            iou = PairGeometry(ltwh_to_xyxy(gt_o.boxes[rows_o]), ltwh_to_xyxy(gt_r.boxes[rows_r])).iou
            pairs = match_boxes(iou, iou_threshold, method)
            matched_o = {r for r, _ in pairs}
            total['original'] += len(rows_o)
            total['reannotated'] += len(rows_r)
            total['matches'] += len(pairs)
            for r, c in pairs:
                matched_ious.append(iou[r, c])
                co, cr = gt_o.categories[rows_o[r]], gt_r.categories[rows_r[c]]
                if co > 0 and cr > 0:
                    category_known += 1
                    category_agree += int(co == cr)
                mapping[int(gt_o.ids[rows_o[r]])][frame] = int(gt_r.ids[rows_r[c]])
            for k, row in enumerate(rows_o):
                area = gt_o.boxes[row, 2] * gt_o.boxes[row, 3]
                size = next(name for name, lo, hi in SIZE_BINS if lo <= area < hi)
                size_counts[size]['boxes'] += 1
                size_counts[size]['matched'] += int(k in matched_o)
            if categories is not None:
                for row in rows_o:
                    c = int(gt_o.categories[row])
                    groups[categories.group_of(c) if c in categories else 'unknown']['original'] += 1
                for row in rows_r:
                    c = int(gt_r.categories[row])
                    groups[categories.group_of(c) if c in categories else 'unknown']['reannotated'] += 1
                for r, _ in pairs:
                    c = int(gt_o.categories[rows_o[r]])
                    groups[categories.group_of(c) if c in categories else 'unknown']['matches'] += 1
        consistent = eligible = 0
        for track_id, frames in mapping.items():
            if len(frames) < 2:
                continue
            eligible += 1
            majority_id, majority_count = Counter(frames.values()).most_common(1)[0]
            is_consistent = len(set(frames.values())) == 1
            consistent += int(is_consistent)
            eligible_records.append(dict(
                consistent=is_consistent, majority_coverage=majority_count / len(frames),
                longest_span=_longest_run([f for f, rid in frames.items() if rid == majority_id])))
        per_clip[clip.name] = dict(eligible_identities=eligible, consistent_identities=consistent,
                                   idr=consistent / eligible if eligible else float('nan'))
    n_o, n_r = total['original'], total['reannotated']
    unmatched_original = n_o - total['matches']
    result = dict(_coverage_stats(n_o, n_r, total['matches']),
                  clips=len(clips), iou_threshold=iou_threshold, matcher=method,
                  mean_matched_iou=float(np.mean(matched_ious)) if matched_ious else float('nan'),
                  category_agreement=category_agree / category_known if category_known else float('nan'),
                  category_pairs_compared=category_known)
    result['by_size'] = {name: dict(boxes=c['boxes'], share_of_original=c['boxes'] / n_o if n_o else float('nan'),
                                    coverage_original=c['matched'] / c['boxes'] if c['boxes'] else float('nan'),
                                    share_of_unmatched_original=((c['boxes'] - c['matched']) / unmatched_original
                                                                 if unmatched_original else float('nan')))
                         for name, c in size_counts.items()}
    eligible_total = len(eligible_records)
    result['identity'] = dict(
        eligible=eligible_total, consistent=sum(r['consistent'] for r in eligible_records),
        consistency=(sum(r['consistent'] for r in eligible_records) / eligible_total if eligible_total
                     else float('nan')),
        mean_majority_coverage=(float(np.mean([r['majority_coverage'] for r in eligible_records]))
                                if eligible_total else float('nan')),
        mean_longest_consistent_span=(float(np.mean([r['longest_span'] for r in eligible_records]))
                                      if eligible_total else float('nan')))
    result['per_clip'] = per_clip
    if categories is not None:
        result['by_group'] = {g: _coverage_stats(c['original'], c['reannotated'], c['matches'])
                              for g, c in sorted(groups.items())}
    return result
