"""Matchers, gates and solvers: hand-computed values, invariants, brute-force optima, configs."""
import glob
import itertools
import math
import os.path as osp

import numpy as np
import pytest
import torch
from mmengine.config import Config

from helpers.common import REPO, tool
from vastmat.models.association.matchers import center_similarity
from vastmat.models.association import (CDA, CIoU, CenterSim, DIoU, EIoU, Fused, GIoU, Greedy, HMIoU, Hungarian,
                                        IoU, LapJV, MutualBest, NormDIoUGate)
from vastmat.registry import MATCHERS
from vastmat.structures.pair_geometry import PairGeometry
from vastmat.structures.pair_kernels import iou_distance_pairs

A = np.array([[0.0, 0.0, 4.0, 3.0]])  # w 4, h 3, diagonal 5, centre (2, 1.5)
B = np.array([[2.0, 1.0, 6.0, 5.0]])  # w 4, h 4, diagonal sqrt(32), centre (4, 3)
# intersection 2 x 2 = 4, union 12 + 16 - 4 = 24, enclosing box 6 x 5, centre distance 2.5
IOU = 4 / 24
DIOU = IOU - 6.25 / 61
V = 4 / math.pi ** 2 * (math.atan(4 / 4) - math.atan(4 / 3)) ** 2
CS_MEAN = 1 - 2.5 / ((5 + math.sqrt(32)) / 2)
HAND = {
    'IoU': IOU,
    'GIoU': (IOU - (30 - 24) / 30 + 1) / 2,
    'DIoU': (DIOU + 1) / 2,
    'CIoU': (DIOU - V / (1 - IOU + V) * V + 1) / 2,
    'EIoU': (DIOU - 0 / 36 - 1 / 25 + 1) / 2,
    'CenterSim': CS_MEAN,
    'CenterSim-min': 1 - 2.5 / 5,
    'CenterSim-max': 1 - 2.5 / math.sqrt(32),
    'CenterSim-enclosing': 1 - 2.5 / math.sqrt(61),
    'CDA': 0.25 * IOU + 0.75 * CS_MEAN,
    'IoU+1': 9 / (20 + 25 - 9),
    'HMIoU': 2 / 5 * IOU,
}


@pytest.mark.parametrize('name, matcher', [
    ('IoU', IoU()), ('GIoU', GIoU()), ('DIoU', DIoU()), ('CIoU', CIoU()), ('EIoU', EIoU()),
    ('CenterSim', CenterSim()), ('CenterSim-min', CenterSim('min')), ('CenterSim-max', CenterSim('max')),
    ('CenterSim-enclosing', CenterSim('enclosing')), ('CDA', CDA()), ('IoU+1', IoU(plus_one=True)),
    ('HMIoU', HMIoU()),
])
def test_hand_computed_values(name, matcher):
    assert matcher(A, B).scores[0, 0] == pytest.approx(HAND[name], abs=1e-12)
    assert matcher(B, A).scores[0, 0] == pytest.approx(HAND[name], abs=1e-12)  # symmetric


def _random_boxes(rng, n):
    xy = rng.uniform(0, 200, size=(n, 2))
    return np.hstack([xy, xy + rng.uniform(2, 80, size=(n, 2))])


ALL = [IoU(), GIoU(), DIoU(), CIoU(), EIoU(), CenterSim(), CDA(), CDA(mode='forward'), CDA(mode='reverse'),
       HMIoU(), IoU(plus_one=True)]


def test_scores_lie_in_unit_interval_and_torch_matches_numpy():
    rng = np.random.default_rng(0)
    tracks, dets = _random_boxes(rng, 30), _random_boxes(rng, 40)
    for matcher in ALL:
        scores = matcher(tracks, dets, num_high_conf=7).scores
        assert scores.shape == (30, 40) and scores.min() >= 0 and scores.max() <= 1, type(matcher).__name__
        from_torch = matcher(torch.from_numpy(tracks), torch.from_numpy(dets), num_high_conf=7).scores
        np.testing.assert_allclose(from_torch.numpy(), scores, rtol=0, atol=1e-12)
    assert IoU()(np.zeros((0, 4)), dets).scores.shape == (0, 40)


@pytest.mark.parametrize('plus_one', [False, True])
def test_compiled_kernels_equal_the_array_path_bit_for_bit(plus_one):
    """float64 numpy boxes take the compiled loops (structures/pair_kernels.py); the numpy path on the same boxes
    gives the same bits: IoU, CenterSim (mean denominator, weighted or not) and CDA at several alphas."""
    rng = np.random.default_rng(3)
    for trial in range(60):
        tracks = _random_boxes(rng, int(rng.integers(0, 25)))
        dets = _random_boxes(rng, int(rng.integers(0, 25)))
        common = min(len(tracks), len(dets))
        dets[:common] = tracks[:common] + rng.uniform(-8, 8, (common, 4))  # overlapping pairs, some boxes equal
        dets[:common // 3] = tracks[:common // 3]
        compiled, array_path = PairGeometry(tracks, dets, plus_one), PairGeometry(tracks, dets, plus_one)
        array_path.compiled = False
        assert compiled.compiled
        assert np.array_equal(compiled.iou, array_path.iou)
        assert np.array_equal(compiled.iou, array_path.inter / array_path.union)
        for weight in (1.0, 0.75):
            assert np.array_equal(center_similarity(compiled, 'mean', weight),
                                  center_similarity(array_path, 'mean', weight))
        for alpha in (0.25, 0.5, 0.9):
            cda = CDA(alpha=alpha, plus_one=plus_one)
            assert np.array_equal(cda.scores(compiled), cda.scores(array_path))
        for thr in (0.15, 0.6):  # the duplicate check's pairs: np.nonzero(1 - IoU < thr) without the matrices
            pairs = iou_distance_pairs(tracks, dets, compiled.one, thr)
            expected = np.nonzero(1.0 - array_path.iou < thr)
            assert all(np.array_equal(got, want) for got, want in zip(pairs, expected))
    # float32 and torch take the array path
    assert not PairGeometry(A.astype(np.float32), B.astype(np.float32)).compiled
    assert not PairGeometry(torch.from_numpy(A), torch.from_numpy(B)).compiled


def test_center_similarity_and_cda_are_scale_invariant():
    rng = np.random.default_rng(1)
    tracks, dets = _random_boxes(rng, 20), _random_boxes(rng, 25)
    for matcher in (CenterSim(), CDA(), CDA(mode='forward'), CenterSim('enclosing')):
        base = matcher(tracks, dets, num_high_conf=12).scores
        for scale in (0.1, 3.7):
            np.testing.assert_allclose(matcher(tracks * scale, dets * scale, num_high_conf=12).scores, base,
                                       rtol=0, atol=1e-12)


def test_center_similarity_is_positive_for_close_disjoint_boxes():
    a = np.array([[0.0, 0.0, 10.0, 10.0]])
    b = np.array([[11.0, 0.0, 21.0, 10.0]])  # disjoint, centres 11 apart, mean diagonal 14.14
    assert IoU()(a, b).scores[0, 0] == 0.0
    close = CenterSim()(a, b).scores[0, 0]
    assert close > 0 and close == pytest.approx(1 - 11 / math.sqrt(200), abs=1e-12)
    far = np.array([[15.0, 0.0, 25.0, 10.0]])  # centres 15 apart > 14.14: zero
    assert CenterSim()(a, far).scores[0, 0] == 0.0


def test_cda_limits_and_adaptive_alpha():
    rng = np.random.default_rng(2)
    tracks, dets = _random_boxes(rng, 10), _random_boxes(rng, 12)
    np.testing.assert_array_equal(CDA(alpha=1.0)(tracks, dets).scores, IoU()(tracks, dets).scores)
    np.testing.assert_array_equal(CDA(alpha=0.0)(tracks, dets).scores, CenterSim()(tracks, dets).scores)
    forward, reverse = CDA(mode='forward'), CDA(mode='reverse')
    alphas_f = [forward.alpha_for(n) for n in range(0, 40, 2)]
    alphas_r = [reverse.alpha_for(n) for n in range(0, 40, 2)]
    assert alphas_f == sorted(alphas_f) and alphas_f[0] == 0.0 and alphas_f[-1] == 1.0
    assert alphas_r == sorted(alphas_r, reverse=True) and forward.alpha_for(10) == reverse.alpha_for(10) == 0.5
    assert forward.alpha_for(14) == pytest.approx(0.7)
    with pytest.raises(ValueError, match='needs num_high_conf'):
        forward(tracks, dets)
    from vastmat.models.association import FrameContext
    context = FrameContext.from_scores([0.9, 0.7, 0.3, 0.65], high_thr=0.6)
    assert context.num_high_conf == 3
    np.testing.assert_array_equal(forward(tracks, dets, **context.as_kwargs()).scores,
                                  CDA(alpha=forward.alpha_for(3))(tracks, dets).scores)


def test_norm_diou_gate_hand_cases():
    gate = NormDIoUGate(thr=0.10)
    a = np.array([[0.0, 0.0, 10.0, 10.0]])
    # normalized DIoU of disjoint boxes = (1 - d^2 / c^2) / 2 with IoU 0: reject when <= 0.10, i.e. d^2/c^2 >= 0.8
    # b1: centre 20 away on x, enclosing 30 x 10: d^2/c^2 = 400/1000 = 0.4 -> 0.30 allowed
    # b2: centre 40 away on x and y (diagonal), enclosing 50 x 50: 3200/5000 = 0.64 -> 0.18 allowed
    # b3: centre 100 away on x, enclosing 110 x 10: 10000/12200 = 0.8197 -> 0.0902 rejected
    b = np.array([[20.0, 0.0, 30.0, 10.0], [40.0, 40.0, 50.0, 50.0], [100.0, 0.0, 110.0, 10.0]])
    assert gate(a, b).tolist() == [[True, True, False]]
    similarity = CDA(gate=dict(type='NormDIoUGate', thr=0.10))(a, b)
    assert similarity.gate.tolist() == [[True, True, False]]
    assert similarity.cost()[0, 2] == 1.0


def test_fused_tracktrack_cost():
    matcher = MATCHERS.build(Config.fromfile(osp.join(REPO, 'configs', 'matchers', 'tracktrack_fused.py')).matcher)
    appearance, confidence, direction = np.array([[0.2]]), np.array([[0.3]]), np.array([[0.4]])
    s = matcher(A, B, appearance=appearance, confidence=confidence, direction=direction)
    hmiou = HMIoU(plus_one=True)(A, B).scores[0, 0]
    expected = 1 - (0.5 * (1 - hmiou) + 0.5 * 0.2 + 0.1 * 0.3 + 0.05 * 0.4)
    assert s.scores[0, 0] == pytest.approx(max(expected, 0.0), abs=1e-12)
    with pytest.raises(KeyError, match="'appearance'"):
        matcher(A, B)
    assert isinstance(MATCHERS.build(dict(type='Fused')), Fused)


def test_matcher_configs_build():
    paths = sorted(glob.glob(osp.join(REPO, 'configs', 'matchers', '*.py')))
    assert len(paths) >= 10
    for path in paths:
        matcher = MATCHERS.build(Config.fromfile(path).matcher)
        assert matcher(A, B, num_high_conf=5, appearance=np.zeros((1, 1)), confidence=np.zeros((1, 1)),
                       direction=np.zeros((1, 1))).scores.shape == (1, 1)
    cfg = Config(dict(model=dict(tracker=dict(matcher=dict(type='IoU', plus_one=True)))))
    cfg.merge_from_dict({'model.tracker.matcher.type': 'CDA'})
    assert isinstance(MATCHERS.build(cfg.model.tracker.matcher), CDA)


# ---- solvers against brute force -------------------------------------------------------------------------------

def _partial_matchings(n, m):
    """Every set of disjoint (row, column) pairs."""
    for k in range(min(n, m) + 1):
        for rows in itertools.combinations(range(n), k):
            for cols in itertools.permutations(range(m), k):
                yield list(zip(rows, cols))


def _small_problems(seed, count=200):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n, m = rng.integers(1, 5, size=2)
        yield rng.uniform(0, 1, size=(n, m))


def test_lapjv_with_limit_is_the_padded_optimum_and_scipy_equals_lap():
    for cost in _small_problems(0):
        limit = 0.6
        result = LapJV(limit)(cost)
        objective = lambda pairs: sum(cost[i, j] for i, j in pairs) + (sum(cost.shape) - 2 * len(pairs)) * limit / 2
        best = min(objective(p) for p in _partial_matchings(*cost.shape))
        assert objective([tuple(p) for p in result.matches]) == pytest.approx(best, abs=1e-12)
        scipy_result = LapJV(limit, backend='scipy')(cost)
        np.testing.assert_array_equal(scipy_result.matches, result.matches)
        np.testing.assert_array_equal(scipy_result.unmatched_rows, result.unmatched_rows)


@pytest.mark.parametrize('limit', [0.3, 0.9, float('inf')])
def test_scipy_lapjv_equals_lap_on_frame_sized_problems(limit):
    """The scipy backend (on the unpadded matrix) equals lap's padded problem on problems of a frame's size; with a
    finite limit on fused-score-like costs (IoU x score: most pairs at 1, which no optimum takes), with none on
    costs without ties (lap is the default there: pairs at 1 tie)."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        n, m = rng.integers(1, 40, size=2)
        overlap = rng.uniform(0, 1, size=(n, m)) < (0.3 if limit < 1 else 1.0)
        cost = 1.0 - rng.uniform(0, 1, size=(n, m)) * overlap * rng.uniform(0.1, 1, m)
        lap_result, scipy_result = LapJV(limit, backend='lap')(cost), LapJV(limit, backend='scipy')(cost)
        np.testing.assert_array_equal(scipy_result.matches, lap_result.matches)
        np.testing.assert_array_equal(scipy_result.unmatched_rows, lap_result.unmatched_rows)
        np.testing.assert_array_equal(scipy_result.unmatched_cols, lap_result.unmatched_cols)


def test_hungarian_is_the_minimum_full_assignment_then_threshold():
    for cost in _small_problems(1):
        result = Hungarian(thr=0.5)(cost)
        n, m = cost.shape
        best = min((p for p in _partial_matchings(n, m) if len(p) == min(n, m)),
                   key=lambda p: sum(cost[i, j] for i, j in p))
        expected = sorted((i, j) for i, j in best if cost[i, j] <= 0.5)
        assert [tuple(p) for p in result.matches] == expected


def test_greedy_and_mutual_best_are_valid_and_optimal_when_the_optimum_is_unambiguous():
    for cost in _small_problems(2):
        for solver in (Greedy(thr=0.7), MutualBest(thr=0.7, reduce_step=0.05)):
            result = solver(cost)
            pairs = [tuple(p) for p in result.matches]
            assert len({i for i, _ in pairs}) == len(pairs) == len({j for _, j in pairs})
            assert all(cost[i, j] < 0.7 for i, j in pairs)
            assert sorted(set(range(cost.shape[0])) - {i for i, _ in pairs}) == result.unmatched_rows.tolist()
        # greedy is maximal: no unmatched row and column left with a pair under the threshold
        rows, cols = Greedy(thr=0.7)(cost).unmatched_rows, Greedy(thr=0.7)(cost).unmatched_cols
        assert not (cost[np.ix_(rows, cols)] < 0.7).any()
    # with a clear diagonal optimum every solver finds it
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 5))
        cost = rng.uniform(0.6, 1.0, size=(n, n))
        cost[np.arange(n), rng.permutation(n)] = rng.uniform(0.0, 0.2, size=n)
        optimum = sorted(min((p for p in _partial_matchings(n, n) if len(p) == n),
                             key=lambda p: sum(cost[i, j] for i, j in p)))
        for solver in (LapJV(0.5), Hungarian(0.5), Greedy(0.5), MutualBest(0.5)):
            assert [tuple(p) for p in solver(cost).matches] == optimum


def test_mutual_best_tightens_the_threshold():
    # pass 1 (thr .5) takes (0, 0) at .1 (row 1's best is column 0, so (1, 1) is not mutual yet); pass 2 (thr .45)
    # sees (1, 1) at .48 mutual but above the tightened threshold
    cost = np.array([[0.1, 0.3], [0.2, 0.48]])
    assert MutualBest(0.5, reduce_step=0.05)(cost).matches.tolist() == [[0, 0]]
    assert MutualBest(0.5, reduce_step=0.0)(cost).matches.tolist() == [[0, 0], [1, 1]]
    assert LapJV(0.5)(np.zeros((0, 3))).matches.shape == (0, 2)


def _mutual_best_by_arrays(cost, thr, reduce_step, closed_cost=1.0):
    """TrackTrack's passes written with numpy's argmin (its official form), the reference of the compiled loop."""
    cost, pairs = cost.copy(), []
    while True:
        row_best, col_best = cost.argmin(axis=1), cost.argmin(axis=0)
        rows = np.arange(len(cost))
        new = [(i, row_best[i]) for i in rows[(col_best[row_best] == rows) & (cost[rows, row_best] < thr)]]
        if not new:
            return sorted(pairs)
        for i, j in new:
            cost[i, :] = closed_cost
            cost[:, j] = closed_cost
        pairs += new
        thr -= reduce_step


def test_mutual_best_equals_its_argmin_passes_with_ties():
    """The compiled passes take what numpy's argmin passes take, ties included (costs on a coarse grid make many
    rows and columns with equal minima), and a threshold above the closed cost (closed pairs taken again)."""
    rng = np.random.default_rng(5)
    for trial in range(300):
        cost = np.round(rng.uniform(0, 1.2, (rng.integers(1, 20), rng.integers(1, 25))), 1 if trial % 2 else 6)
        cost = np.clip(cost, 0, 1)
        for thr, step in ((0.6, 0.05), (0.9, 0.0), (1.1, 0.05)):
            got = MutualBest(thr, step)(cost)
            expected = _mutual_best_by_arrays(cost, thr, step)
            assert got.matches.tolist() == [list(p) for p in expected], (trial, thr)
            assert set(got.unmatched_rows) == set(range(cost.shape[0])) - {i for i, _ in expected}


# ---- diagnostics -----------------------------------------------------------------------------------------------

def test_candidate_margins_hand_case():
    from vastmat.datasets.formats import GroundTruth
    from vastmat.evaluation.association_diagnostics import candidate_margins, discrimination_table
    # id 1 moves right by 8 px (a 10 px box): IoU with its old box 2/18; id 2 sits 12 px to the right of id 1's old
    # box, overlapping its old box not at all but closer in centre than... computed below
    boxes = np.array([[0, 0, 10, 10], [30, 0, 10, 10], [8, 0, 10, 10], [30, 0, 10, 10]], float)  # ltwh
    gt = GroundTruth(np.array([1, 1, 2, 2]), np.array([1, 2, 1, 2]), boxes, np.ones(4, np.int64),
                     -np.ones(4, np.int64), -np.ones(4), np.arange(1, 5))
    margins = candidate_margins(gt)
    assert margins.shape == (2, 3)
    # event of id 1: correct candidate [8, 0, 18, 10], competitor [30, 0, 40, 10]
    m1 = margins[0]
    assert m1[0] == pytest.approx(8 / math.sqrt(200))
    assert m1[1] == pytest.approx(20 / 180)  # IoU(prev, correct) = 20 / 180, IoU(prev, competitor) = 0
    assert m1[2] == pytest.approx((1 - 8 / math.sqrt(200)) - 0.0)  # competitor centre 30 px away: CenterSim 0
    table = discrimination_table(margins)
    assert table['events'] == 2 and table['bins'][0]['both'] == 1.0


@pytest.mark.slow
def test_candidate_pairs_tool_on_animaltrack_at_10fps(tmp_path, capfd):
    from helpers.common import ANIMALTRACK
    if not osp.isdir(ANIMALTRACK):
        pytest.skip(f'real data not found at {ANIMALTRACK}')
    out = tmp_path / 'pairs.json'
    tool('tools/analysis/candidate_pairs.py', '--data-root', ANIMALTRACK, '--stride', 3, '--out', out)
    printed = ''.join(capfd.readouterr())  # stdout and stderr (warnings)
    import json
    table = json.loads(out.read_text())
    assert table['events'] == 61048 and 'only CenterSim' in printed
    for row in table['bins']:
        total = row['only_centersim'] + row['only_iou'] + row['both'] + row['neither']
        assert total == pytest.approx(1.0)
    # beyond one diagonal neither cue can tell the correct candidate (both similarities are 0 on both sides)
    assert table['bins'][3]['neither'] == 1.0
    assert table['bins'][2]['only_centersim'] > table['bins'][2]['only_iou']


def test_cda_microbench_tool(demo_root, tmp_path, capfd):
    out = tmp_path / 'micro.json'
    tool('tools/analysis/cda_microbench.py', '--data-root', demo_root, '--stride', 1, '--repeats', 1,
         '--out', out)
    printed = ''.join(capfd.readouterr())  # stdout and stderr (warnings)
    import json
    results = json.loads(out.read_text())
    assert results['frame_pairs'] > 100 and results['IoU (baseline)']['overhead'] == 0.0
    assert all(r['us_per_call'] > 0 for k, r in results.items() if isinstance(r, dict))
    assert 'CDA adaptive' in printed


def test_a_gate_keeps_its_own_pixel_convention_inside_a_matcher():
    """IoU(A, B) is 4/24 = 0.167 without the +1 pixel convention and 9/36 = 0.25 with it. A plain gate at 0.2
    rejects the pair whatever convention its matcher uses (the matcher's used to override the gate's)."""
    from vastmat.models.association import IoUGate
    plain_gate = dict(type='IoUGate', thr=0.2, plus_one=False)
    plus_one_gate = dict(type='IoUGate', thr=0.2, plus_one=True)
    assert IoUGate(0.2, plus_one=False)(A, B).tolist() == [[False]]
    for matcher_plus_one in (True, False):
        for gate, allowed in ((plain_gate, False), (plus_one_gate, True)):
            similarity = MATCHERS.build(dict(type='IoU', plus_one=matcher_plus_one, gate=gate))(A, B)
            assert similarity.gate.tolist() == [[allowed]], (matcher_plus_one, gate)
            assert similarity.scores[0, 0] == pytest.approx(HAND['IoU+1'] if matcher_plus_one else HAND['IoU'])
