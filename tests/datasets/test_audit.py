"""The reannotation audit on AnimalTrack ground truth against a copy with known deletions, shifts and id swaps."""
import json
import os
import os.path as osp
import shutil
from collections import defaultdict

import numpy as np
import pytest

from helpers.common import ANIMALTRACK, needs_animaltrack, tool
from vastmat.datasets.audit import SIZE_BINS, Clip, audit_clips, match_boxes
from vastmat.datasets.formats import write_gt
from vastmat.datasets.sequences import load_sequence

VIDEOS = ('chicken_3', 'deer_4', 'zebra_3')
CLIP_LENGTH = 20


def _clips():
    return [Clip(v, 1 + k * CLIP_LENGTH, (k + 1) * CLIP_LENGTH) for v in VIDEOS for k in range(2)]


def _perturb(original, rng):
    """A copy with deleted boxes, boxes shifted out of reach, and one id swap per clip (from its 11th frame on).

    Returns the copy and, per video, the set of original rows that can no longer match and the swapped ids.
    """
    changed, lost, swaps = {}, {}, {}
    for name, gt in original.items():
        in_clips = np.flatnonzero(gt.frames <= 2 * CLIP_LENGTH)
        # ids present in every frame of the clips are kept intact and used for the swaps
        per_id = defaultdict(set)
        for r in in_clips:
            per_id[int(gt.ids[r])].add(int(gt.frames[r]))
        stable = sorted(i for i, f in per_id.items() if len(f) == 2 * CLIP_LENGTH)[:2]
        candidates = np.array([r for r in in_clips if int(gt.ids[r]) not in stable])
        picked = rng.choice(candidates, size=16, replace=False)
        deleted, shifted = picked[:10], picked[10:]
        boxes, ids = gt.boxes.copy(), gt.ids.copy()
        boxes[shifted, 0] += 1e5  # far from everything: unmatched on both sides
        p, q = stable
        for k in range(2):  # in each clip, p and q exchange ids from the clip's 11th frame on
            late = (gt.frames >= k * CLIP_LENGTH + 11) & (gt.frames <= (k + 1) * CLIP_LENGTH)
            ids[late & (gt.ids == p)], ids[late & (gt.ids == q)] = q, p
        keep = np.setdiff1d(np.arange(len(gt)), deleted)
        changed[name] = gt.select(keep)
        changed[name].boxes[:] = boxes[keep]
        changed[name].ids[:] = ids[keep]
        lost[name] = set(picked.tolist())
        swaps[name] = (p, q)
    return changed, lost, swaps


@needs_animaltrack
def test_audit_reports_the_expected_values(tmp_path):
    rng = np.random.default_rng(0)
    original = {v: load_sequence(ANIMALTRACK, v).gt for v in VIDEOS}
    changed, lost, swaps = _perturb(original, rng)
    clips = _clips()
    result = audit_clips(clips, original, changed)

    n_original = sum(int((gt.frames <= 2 * CLIP_LENGTH).sum()) for gt in original.values())
    n_deleted, n_shifted = 10 * len(VIDEOS), 6 * len(VIDEOS)
    matches = n_original - n_deleted - n_shifted
    assert (result['original_boxes'], result['reannotated_boxes'], result['matches']) == (
        n_original, n_original - n_deleted, matches)
    assert result['coverage_original'] == pytest.approx(matches / n_original, abs=1e-15)
    assert result['coverage_reannotated'] == pytest.approx(matches / (n_original - n_deleted), abs=1e-15)
    assert result['f1'] == pytest.approx(2 * matches / (2 * n_original - n_deleted), abs=1e-15)
    assert result['mean_matched_iou'] == pytest.approx(1.0, abs=1e-12)

    # identity: per clip, an id matched in >= 2 frames is eligible; only the two swapped ids are inconsistent
    eligible = 0
    for clip in clips:
        gt = original[clip.video]
        rows = [r for r in np.flatnonzero((gt.frames >= clip.first_frame) & (gt.frames <= clip.last_frame))
                if r not in lost[clip.video]]
        per_id = defaultdict(int)
        for r in rows:
            per_id[int(gt.ids[r])] += 1
        eligible += sum(n >= 2 for n in per_id.values())
    inconsistent = 2 * len(clips)
    identity = result['identity']
    assert (identity['eligible'], identity['consistent']) == (eligible, eligible - inconsistent)
    # a swapped id is matched 10 frames to itself and 10 to the other: majority 1/2, longest span 10
    assert identity['mean_majority_coverage'] == pytest.approx(
        (eligible - inconsistent + inconsistent * 0.5) / eligible, abs=1e-12)
    for clip in clips:
        assert result['per_clip'][clip.name]['consistent_identities'] == (
            result['per_clip'][clip.name]['eligible_identities'] - 2)

    # size bins of the original boxes
    areas = np.concatenate([gt.boxes[gt.frames <= 2 * CLIP_LENGTH, 2] * gt.boxes[gt.frames <= 2 * CLIP_LENGTH, 3]
                            for gt in original.values()])
    for name, lo, hi in SIZE_BINS:
        assert result['by_size'][name]['boxes'] == int(((areas >= lo) & (areas < hi)).sum())
    assert sum(s['boxes'] for s in result['by_size'].values()) == n_original

    # the same through the tool, from two roots on disk
    root = tmp_path / 'reannotated'
    for name, gt in changed.items():
        os.makedirs(root / name / 'gt')
        shutil.copy(osp.join(ANIMALTRACK, name, 'seqinfo.ini'), root / name / 'seqinfo.ini')
        write_gt(str(root / name / 'gt' / 'gt.txt'), gt, decimals=3)
    out = tmp_path / 'audit.json'
    tool('tools/analysis/audit_annotations.py', '--original', ANIMALTRACK, '--reannotated', root,
         '--clip-length', CLIP_LENGTH, '--clips-per-video', 2, '--out', out)
    from_tool = json.load(open(out))
    assert from_tool['f1'] == pytest.approx(result['f1'], abs=1e-15)
    assert from_tool['identity']['consistent'] == identity['consistent']


def test_matchers_agree_with_brute_force():
    rng = np.random.default_rng(3)
    from itertools import permutations
    for _ in range(50):
        iou = rng.uniform(0, 1, size=(4, 4)) * (rng.uniform(size=(4, 4)) < 0.6)
        pairs = match_boxes(iou, 0.5, 'hungarian')
        best = max(((sum(iou[r, c] >= 0.5 for r, c in enumerate(p)),
                     sum(iou[r, c] for r, c in enumerate(p) if iou[r, c] >= 0.5)) for p in permutations(range(4))))
        assert (len(pairs), pytest.approx(sum(iou[r, c] for r, c in pairs))) == (best[0], best[1])
        greedy = match_boxes(iou, 0.5, 'greedy')
        assert all(iou[r, c] >= 0.5 for r, c in greedy)
        assert len({r for r, _ in greedy}) == len(greedy) == len({c for _, c in greedy})
