"""TCEI's test-time calibration (vastmat/models/trackers/tcei_tracker.py, with tcei_params.py, tcei_caches.py and
tcei_calibration.py) against the official 1941Zpf/TCEI code.

Golden values: tests/fixtures/tcei_official (README.md there says how they were made)."""
import hashlib
import json
import math
import os.path as osp

import numpy as np
import pytest
import torch

from helpers.common import FIXTURES_ROOT, SHARED_DATA, assert_same_tracks
from helpers.motip_weights import deterministic_weights, record_id_logits, weights_digest
from vastmat.models.trackers.tcei_caches import CacheItem, EntropyRankedCache, TCEICaches
from vastmat.models.trackers.tcei_calibration import (calibrate_id_logits, experience_cache_logits, fisher_inner,
                                                      fisher_orthogonalize, fuse_logits, minmax_normalize,
                                                      negative_ids, normalized_entropy, object_cache_logits,
                                                      softmax_entropy)
from vastmat.models.trackers.tcei_params import TCEI_PRESETS, TCEIParams, resolve_tcei_params

FIXTURES = osp.join(FIXTURES_ROOT, 'tcei_official')
ATOL = 1e-6


@pytest.fixture(scope='module')
def official():
    with open(osp.join(FIXTURES, 'functions.json')) as f:
        return json.load(f)


def t(values):
    return torch.tensor(values, dtype=torch.float32)


# ------------------------------------------------------------------------------------------- the pure functions
def test_entropy_matches_official(official):
    num_classes = official['K'] + 1
    for case in official['entropy']:
        logits = t(case['logits'])[None]
        loss = softmax_entropy(logits)
        assert abs(float(loss) - case['loss']) < ATOL
        assert torch.allclose(logits.softmax(1)[0].double(), torch.tensor(case['prob_map'], dtype=torch.float64),
                              atol=ATOL)
        assert int(logits.argmax(1)) == case['pred']
        assert abs(normalized_entropy(loss, num_classes) - case['normalized']) < ATOL
    # nats over bits: the uniform row's "normalised" entropy is ln 2, not 1
    assert normalized_entropy(softmax_entropy(torch.zeros(1, 51)), 51) == pytest.approx(math.log(2), abs=1e-6)


@pytest.mark.parametrize('variant', ['update_cache', 'update_cache_payload'])
def test_cache_insertion_matches_official(official, variant):
    spec = official[variant]
    cache = EntropyRankedCache(spec['capacity'])
    for step, ((cls, entropy), state) in enumerate(zip(spec['steps'], spec['states'])):
        entropy = float(torch.tensor(entropy, dtype=torch.float32))  # the official stores float32 losses
        payload = [step, step + 100] if variant == 'update_cache_payload' else None
        cache.insert(cls, CacheItem(t([[float(step)]]), entropy, payload))
        ours = {str(c): [int(it.key.item()) if payload is None else [int(it.key.item()), it.payload]
                         for it in cache[c]] for c in cache.classes()}
        assert ours == state, f'step {step}'


def test_cache_insertion_order_by_hand():
    cache = EntropyRankedCache(2)
    for step, entropy in enumerate([0.9, 0.4, 0.6, 0.95, 0.4, 0.1]):
        cache.insert(3, CacheItem(t([[float(step)]]), entropy))
        if step == 1:  # room: appended, then sorted by entropy
            assert [it.entropy for it in cache[3]] == [0.4, 0.9]
        if step == 2:  # full: the worst (0.9) replaced by the lower 0.6
            assert [int(it.key) for it in cache[3]] == [1, 2]
        if step == 3:  # full, not lower than the worst: unchanged
            assert [int(it.key) for it in cache[3]] == [1, 2]
        if step == 4:  # a tie with the best: replaces the worst, stays after the older equal item
            assert [int(it.key) for it in cache[3]] == [1, 4]
    assert [int(it.key) for it in cache[3]] == [5, 1]
    assert len(cache) == 1 and cache.num_items() == 2 and cache.classes() == [3]
    cache.insert(1, CacheItem(t([[9.0]]), 5.0))  # a new class always starts with its item
    assert cache.classes() == [1, 3]
    cache.clear()
    assert not cache and len(cache) == 0
    with pytest.raises(ValueError, match='capacity'):
        EntropyRankedCache(0)


def _object_cache(spec, capacity=3):
    cache = EntropyRankedCache(capacity)
    for gid, items in spec['cache'].items():
        for it in items:
            cache.insert(int(gid), CacheItem(t([it['key']]), float(torch.tensor(it['entropy'])), it['payload']))
    return cache


def test_object_cache_logits_match_official(official):
    spec = official['object']
    num_classes = official['K'] + 1
    label_of_id = {g: int(k) for k, g in spec['id_label_to_id'].items()}
    cache = _object_cache(spec)
    feats = t(spec['features'])
    for case in spec['cases']:
        ours = object_cache_logits(feats[case['feature']][None], cache, case['alpha'], case['beta'], num_classes,
                                   label_of_id, case['temperature'], negative=case['negative'])
        assert ours.shape == (1, num_classes)
        np.testing.assert_allclose(ours[0].numpy(), case['logits'], atol=ATOL, err_msg=str(case))


def test_one_class_and_equal_affinities_stay_finite(official):
    spec = official['object']
    num_classes = official['K'] + 1
    label_of_id = {g: int(k) for k, g in spec['id_label_to_id'].items()}
    feature = t(spec['features'])[0][None]
    assert spec['one_class_official_all_nan']  # the official divides 0 by 0 here
    one = EntropyRankedCache(3)
    one.insert(1, CacheItem(t(spec['cache']['1'][0]['key'])[None], 0.5))
    for temperature in (0, 0.05):
        # the rule: a single class normalises to 1 -> exp(-beta * 0) = 1 on its label (3), times alpha
        logits = object_cache_logits(feature, one, 0.7, 3.0, num_classes, label_of_id, temperature)
        expected = torch.zeros(1, num_classes)
        expected[0, label_of_id[1]] = 0.7
        assert torch.isfinite(logits).all() and torch.allclose(logits, expected, atol=ATOL)
    # two classes with the same affinity (the same key): all 1 without temperature, a uniform softmax with one
    same = EntropyRankedCache(3)
    key = t(spec['cache']['1'][0]['key'])[None]
    same.insert(0, CacheItem(key, 0.5))
    same.insert(1, CacheItem(key.clone(), 0.6))
    logits = object_cache_logits(feature, same, 1.0, 3.0, num_classes, label_of_id, 0)
    assert logits[0, label_of_id[0]] == pytest.approx(1.0) and logits[0, label_of_id[1]] == pytest.approx(1.0)
    logits = object_cache_logits(feature, same, 1.0, 3.0, num_classes, label_of_id, 0.05)
    assert logits[0, label_of_id[0]] == pytest.approx(math.exp(-1.5), abs=1e-6)
    assert torch.equal(minmax_normalize(t([[0.3]])), t([[1.0]]))
    assert torch.allclose(minmax_normalize(t([[0.2, 0.4, 0.3]])), t([[0.0, 1.0, 0.5]]))


def test_object_cache_logits_any_vocabulary_size():
    # the official placeholder index 50 breaks for K < 50: an id without a label is a zero row here
    cache = EntropyRankedCache(3)
    cache.insert(0, CacheItem(t([[1.0, 0.0]]), 0.1))
    cache.insert(5, CacheItem(t([[0.0, 1.0]]), 0.1))  # no label any more
    logits = object_cache_logits(t([[1.0, 0.0]]), cache, 1.0, 2.0, 4, {0: 2}, 0)
    assert torch.allclose(logits, t([[0.0, 0.0, 1.0, 0.0]]))  # affinity normalised to 1 for id 0: exp(0)


def test_experience_cache_logits_match_official(official):
    spec = official['experience']
    num_classes = official['K'] + 1
    pos, neg = EntropyRankedCache(3), EntropyRankedCache(2)
    for label, items in spec['pos'].items():
        for it in items:
            pos.insert(int(label), CacheItem(t([it['key']]), float(torch.tensor(it['entropy']))))
    for label, items in spec['neg'].items():
        for it in items:
            neg.insert(int(label), CacheItem(t([it['key']]), float(torch.tensor(it['entropy'])),
                                             t([it['prob_map']])))
    feats = t(spec['features'])
    for case in spec['cases']:
        f = feats[case['feature']][None]
        if case['negative']:
            ours = experience_cache_logits(f, neg, case['alpha'], case['beta'], num_classes, tuple(case['mask']))
        else:
            ours = experience_cache_logits(f, pos, case['alpha'], case['beta'], num_classes)
        np.testing.assert_allclose(ours[0].numpy(), case['logits'], atol=ATOL, err_msg=str(case))


def test_fisher_orthogonalize_matches_official(official):
    spec = official['fisher']
    ours = fisher_orthogonalize(t([spec['a']]), t([spec['b']]))
    np.testing.assert_allclose(ours[0].numpy(), spec['b_perp'], atol=ATOL)


def test_fusion_rule_by_hand():
    logits = t([[0.0, 0.0, 0.0]])  # p = 1/3 each, p (1 - p) = 2/9
    obj = t([[1.0, 0.0, -1.0]])  # l_obj
    idl = t([[2.0, 0.0, 0.5]])  # l_id
    # fisher_inner(l_obj, l_id) = [1 - 1/2, 1 - 0/eps = 1, clamp(1 - 1.5/1) = 0]; fisher_inner(a, a) = 1
    assert torch.allclose(fisher_inner(obj, idl), t([[0.5, 1.0, 0.0]]), atol=1e-7)
    assert torch.allclose(fisher_inner(obj, obj), t([[1.0, 1.0, 1.0]]))
    # l_id_perp = l_id - coef * l_obj = [1.5, 0, 0.5]; times 2/9 = [1/3, 0, 1/9]
    fused = fuse_logits(logits, obj, idl, lambda_id=1.0)
    assert torch.allclose(fused, t([[1.0 + 1 / 3, 0.0, -1.0 + 1 / 9]]), atol=1e-6)
    fused = fuse_logits(logits, obj, idl, lambda_id=0.5)
    assert torch.allclose(fused, t([[1.0 + 1 / 6, 0.0, -1.0 + 1 / 18]]), atol=1e-6)
    assert torch.equal(fuse_logits(logits, obj, idl, 1.0, 'object'), obj)
    assert torch.equal(fuse_logits(logits, obj, idl, 1.0, 'id'), idl)
    with pytest.raises(ValueError, match='use_cache'):
        fuse_logits(logits, obj, idl, 1.0, 'both')


def test_negative_ids_published_length_quirk():
    # 4 detections, K = 5: the published rule reads word probability j as detection j
    probs = t([0.5, 0.01, 0.2, 0.04, 0.05, 0.2])
    labels = torch.tensor([3, 1, 5, 0])
    id_label_to_id = {0: 10, 1: 11, 3: 13, 4: 14}
    # p[:4] = [0.5, 0.01, 0.2, 0.04] in (0.03, 1): detections 0, 2, 3 -> labels 3, 5 (newborn, dropped), 0
    assert negative_ids(probs, labels, 5, id_label_to_id, 0.03, 1.0) == [13, 10]
    # the word reading: words 0, 2, 3, 4 in the band, with ids: 0 -> 10, 3 -> 13, 4 -> 14
    assert negative_ids(probs, labels, 5, id_label_to_id, 0.03, 1.0, length_quirk=False) == [10, 13, 14]


def test_presets_and_overrides():
    assert resolve_tcei_params() == TCEIParams()
    dance = resolve_tcei_params('dancetrack')
    assert (dance.pos_beta, dance.neg_beta, dance.pos_temperature, dance.w_neg_beta, dance.w_pos_temperature) == \
        (3.0, 1.5, 0.05, 2.0, 0.5)
    assert resolve_tcei_params('sportsmot') == dance
    bft = resolve_tcei_params('bft', lambda_id=0.5)
    assert (bft.pos_shot_capacity, bft.pos_beta, bft.neg_alpha, bft.w_pos_shot_capacity, bft.w_pos_beta,
            bft.w_neg_alpha, bft.w_neg_entropy_threshold_lower, bft.pos_temperature, bft.lambda_id) == \
        (2, 0.2, 0.145, 12, 3.0, 0.15, 0.1, 0.02, 0.5)
    assert set(TCEI_PRESETS) == {'dancetrack', 'sportsmot', 'bft'}
    with pytest.raises(ValueError, match='unknown preset'):
        resolve_tcei_params('mot17')
    with pytest.raises(TypeError, match='pos_betta'):
        resolve_tcei_params(pos_betta=1.0)
    with pytest.raises(ValueError, match='use_cache'):
        resolve_tcei_params(use_cache='all')


def test_calibration_changes_tracked_rows_only():
    torch.manual_seed(0)
    n, k = 4, 6
    logits = torch.randn(n, k + 1) * 2
    labels = torch.tensor([0, 2, k, 1])
    params = TCEIParams()
    caches = TCEICaches.from_params(params)
    out = calibrate_id_logits(logits, labels, torch.randn(n, 8), torch.randn(n, 8), caches, {0: 0, 1: 1, 2: 2},
                              params)
    assert torch.isfinite(out).all()
    assert torch.equal(out[2], logits[2])  # first predicted newborn: not recalibrated
    assert not torch.allclose(out[[0, 1, 3]], logits[[0, 1, 3]])
    assert caches.w_pos.classes() == [0, 1, 2, k] and caches.pos.classes() == [0, 1, 2]


def test_calibration_flips_an_ambiguous_decision_to_the_cached_identity():
    """An identity decision TCEI changes: detection 0 scores label 0 just above label 1 (logits 2.0 vs 1.8), but
    its DETR embedding equals the per-video positive cache's key of label 1's track (global id 11) and is
    orthogonal to label 0's track (global id 10). The intuition term adds alpha = 1 to label 1 (the best affinity,
    min-max 1) and alpha exp(-beta) to label 0; the experience term (the detection's own id embedding, just cached
    under label 0) is orthogonalised against it and weighted by p (1 - p) <= 1/4: label 1 wins after calibration
    (the detection's embedding also enters track 10's cache first: affinities 0.5 and 1, min-max 0 and 1)."""
    params = resolve_tcei_params(neg_enabled=False, w_neg_enabled=False)  # positive caches only: hand-checkable
    caches = TCEICaches.from_params(params)
    e = torch.eye(8)
    caches.pos.insert(10, CacheItem(e[0:1], 0.1))  # label 0's track
    caches.pos.insert(11, CacheItem(e[1:2], 0.1))  # label 1's track: the detection's embedding
    logits = t([[2.0, 1.8, -1.0, -1.0, 0.0]])
    out = calibrate_id_logits(logits, torch.tensor([0]), e[2:3], e[1:2], caches, {0: 10, 1: 11}, params)
    assert int(logits.argmax()) == 0 and int(out.argmax()) == 1 and torch.isfinite(out).all()
    # l_obj = [exp(-5), 1, 0, 0, 0] (pos alpha 1, beta 5, T 0); the experience term adds at most 1/4 to label 0
    assert float(out[0, 1]) == pytest.approx(1.8 + 1.0, abs=1e-5)
    assert 2.0 + math.exp(-5) <= float(out[0, 0]) <= 2.0 + math.exp(-5) + 0.25
    assert caches.pos.classes() == [10, 11] and caches.w_pos.classes() == [0]

# ----------------------------------------------------------------------------------- the official tracker's run
AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
VIDEOS = ('chicken_5', 'deer_4')  # tracked in this order, the cross-video caches carried over
NUM_FRAMES = 24
FEATURE_DIM = 256  # the official RuntimeTracker hard-codes 256
NUM_PADDING = 4
FEATURE_SCALE = 4.0


def tcei_queries(video: str, num_frames: int = NUM_FRAMES) -> dict:
    """The DETR outputs of the first ``num_frames`` frames of one AnimalTrack-10fps-sim video: vastmat.experiments.
    simulated_inputs ``detr_queries`` with key ``tcei``, ``NUM_PADDING`` padding queries with scores below 0.25,
    features times ``FEATURE_SCALE``, in file order (detections then padding), no blackouts."""
    from vastmat.benchmarks.simulated_inputs import detr_queries
    return detr_queries(AT10, video, key='tcei', num_padding=NUM_PADDING, padding_score_max=0.25,
                        feature_scale=FEATURE_SCALE, feature_dim=FEATURE_DIM, shuffle=False, blackouts=False,
                        num_frames=num_frames)


def inputs_digest(queries: dict) -> str:
    """sha256 of the float32 query arrays (videos in ``VIDEOS`` order, frames in order)."""
    h = hashlib.sha256()
    for video in VIDEOS:
        for f in queries[video]['frames']:
            for key in ('logits', 'boxes', 'features'):
                h.update(np.ascontiguousarray(f[key], np.float32).tobytes())
    return h.hexdigest()


ID_DECODER = dict(feature_dim=256, id_dim=256, ffn_dim_ratio=2, num_layers=2, head_dim=32, num_id_vocabulary=50,
                  rel_pe_length=30)
RUNTIME = dict(det_thresh=0.3, newborn_thresh=0.6, id_thresh=0.2, area_thresh=0.0, miss_tolerance=10,
               assignment_protocol='object-max')


def _track_videos(tracker, queries):
    """Run ``tracker`` over the videos in order (reset between them); per frame: the output, the labels of the two
    assignments, the raw and calibrated logits and the cache sizes."""
    from vastmat.structures.tracking import TrackingFrame
    calls, raw = [], []
    assign, id_logits = tracker.assign, tracker.id_logits

    def recording_assign(id_scores):
        labels = assign(id_scores)
        calls.append(list(labels))
        return labels

    def recording_id_logits(features):
        out = id_logits(features)
        raw.append(out[0].clone())
        return out
    tracker.assign, tracker.id_logits = recording_assign, recording_id_logits
    record = {}
    for video, q in queries.items():
        tracker.reset()
        frames = []
        for t, f in enumerate(q['frames']):
            calls.clear()
            raw.clear()
            frame = TrackingFrame.from_arrays(f['xyxy'], f['scores'], t + 1, features=f['features'].astype(np.float64),
                                              video_name=video)
            out = tracker.update(frame)
            caches = tracker.caches
            frames.append(dict(
                out=out, initial_labels=calls[0] if len(calls) == 2 else None,
                final_labels=calls[1] if len(calls) == 2 else None, raw=raw[0] if raw else None,
                calibrated=tracker._calibrated_logits,
                caches={name: [len(c), c.num_items()] for name, c in
                        (('pos', caches.pos), ('neg', caches.neg), ('w_pos', caches.w_pos), ('w_neg', caches.w_neg))}))
        record[video] = frames
    return record


@pytest.fixture(scope='module')
def official_run():
    path = osp.join(FIXTURES, 'tracker.json')
    if not osp.exists(AT10):
        pytest.skip(f'shared data missing: {AT10}')
    with open(path) as f:
        golden = json.load(f)
    logits = dict(np.load(osp.join(FIXTURES, 'calibrated_logits.npz')))
    return golden, logits


@pytest.fixture(scope='module')
def queries():
    if not osp.exists(AT10):
        pytest.skip(f'shared data missing: {AT10}')
    return {video: tcei_queries(video) for video in VIDEOS}


@pytest.fixture(scope='module')
def our_runs(official_run, queries):
    from vastmat.models.trackers.motip_modules import MOTIPIDDecoder, MOTIPTrajectoryModeling
    from vastmat.models.trackers.tcei_tracker import TCEITracker
    golden, _ = official_run
    assert inputs_digest(queries) == golden['settings']['inputs_sha256'], 'the inputs differ from the fixture\'s'
    torch.manual_seed(0)
    runs = {}
    for run, settings in golden['settings']['runs'].items():
        trajectory_modeling, id_decoder = MOTIPTrajectoryModeling(), MOTIPIDDecoder(**ID_DECODER)
        deterministic_weights(trajectory_modeling, 'tracking')
        deterministic_weights(id_decoder, 'tracking')
        assert weights_digest(trajectory_modeling.state_dict()) == golden['settings']['weights_sha256'][0]
        assert weights_digest(id_decoder.state_dict()) == golden['settings']['weights_sha256'][1]
        params = dict(settings)  # the fixture's preset and the values over it
        tracker = TCEITracker(trajectory_modeling=trajectory_modeling, id_decoder=id_decoder, **RUNTIME,
                              preset=params.pop('preset', None), params=params)
        tracker.eval()
        runs[run] = _track_videos(tracker, queries)
    return runs


class _Results:
    """Rows of a result file, as conftest.assert_same_tracks reads them (boxes ltwh)."""

    def __init__(self, frames, boxes_ltwh, ids):
        self.frames = np.asarray(frames, np.int64)
        self.boxes = np.asarray(boxes_ltwh, np.float64).reshape(-1, 4)
        self.ids = np.asarray(ids, np.int64)

    def __len__(self):
        return len(self.ids)


@pytest.mark.xdist_group('tcei_runs')  # both runs read our_runs: one worker computes it
@pytest.mark.parametrize('run', ['published', 'patched'])
def test_tracker_matches_official(official_run, our_runs, run):
    golden, logits = official_run
    assert golden['settings']['id_decoder'] == ID_DECODER and golden['settings']['runtime'] == RUNTIME
    assert tuple(golden['settings']['videos']) == VIDEOS
    changed_rows = 0
    for video in VIDEOS:
        theirs, ours = golden['runs'][run][video], our_runs[run][video]
        assert len(ours) == len(theirs) == NUM_FRAMES
        tf, tb, ti, of, ob, oi = [], [], [], [], [], []
        for t, (a, b) in enumerate(zip(ours, theirs)):
            where = f'{run} {video} frame {t + 1}'
            assert not b['nan'], f'{where}: the official run has NaN logits (the fixture must not)'
            assert a['initial_labels'] == b['initial_labels'], where
            assert a['final_labels'] == b['final_labels'], where
            assert a['caches'] == b['caches'], where
            key = f'{run}/{video}/{t}'
            assert (key in logits) == (a['calibrated'] is not None), where
            if a['calibrated'] is not None:
                assert torch.isfinite(a['calibrated']).all(), where
                np.testing.assert_allclose(a['calibrated'].numpy(), logits[key], atol=1e-4, rtol=0, err_msg=where)
                changed_rows += int((a['calibrated'] != a['raw']).any(dim=1).sum())
            assert a['out'].ids.tolist() == [i + 1 for i in b['ids']], where  # official ids + 1, exactly
            out = a['out']
            of += [t + 1] * len(out)
            ob.append(np.column_stack([out.bboxes[:, :2], out.bboxes[:, 2:] - out.bboxes[:, :2]]))
            oi += out.ids.tolist()
            tf += [t + 1] * len(b['ids'])
            tb += b['bbox_xywh']
            ti += b['ids']
        assert_same_tracks(_Results(of, np.concatenate(ob), oi), _Results(tf, tb, ti), f'{run} {video}')
    assert changed_rows > 0  # the calibration moved MOTIP's logits


# ------------------------------------------------------------------------------------------ the tracker, by hand
def _tiny_tracker(device='cpu', **kwargs):
    from vastmat.registry import MODELS
    torch.manual_seed(0)
    tracker = MODELS.build(dict(
        type='TCEITracker', trajectory_modeling=dict(type='MOTIPTrajectoryModeling', detr_dim=8, feature_dim=8),
        id_decoder=dict(type='MOTIPIDDecoder', feature_dim=8, id_dim=8, num_layers=1, head_dim=4,
                        num_id_vocabulary=5, rel_pe_length=5), miss_tolerance=5, **kwargs))
    return tracker.to(device).eval()


def _tiny_video(num_animals, num_frames=4, name='v'):
    from vastmat.structures.tracking import TrackingFrame
    rng = np.random.default_rng(num_animals)
    bases = rng.standard_normal((num_animals, 8))
    boxes = np.array([[10.0 + 30 * i, 10.0, 30.0 + 30 * i, 40.0] for i in range(num_animals)])
    return [TrackingFrame.from_arrays(boxes, np.full(num_animals, 0.9), t + 1, video_name=name,
                                      features=bases + 0.1 * rng.standard_normal((num_animals, 8)))
            for t in range(num_frames)]


def _run_video(tracker, frames):
    tracker.reset()
    calibrated = []
    for frame in frames:
        out = tracker.update(frame)
        if tracker._calibrated_logits is not None:
            calibrated.append(tracker._calibrated_logits)
    return out, calibrated


def test_tracker_caches_persist_and_reset():
    tracker = _tiny_tracker(preset='dancetrack')
    _run_video(tracker, _tiny_video(3))
    caches = tracker.caches
    assert len(caches.pos) >= 3 and len(caches.w_pos) > 0
    experience = caches.w_pos.num_items()
    tracker.reset()  # a new video: the per-video caches go, the experience stays
    assert len(caches.pos) == len(caches.neg) == 0 and caches.w_pos.num_items() == experience
    tracker.reset_experience()
    assert len(caches.w_pos) == len(caches.w_neg) == 0
    tracker = _tiny_tracker(reset_experience_per_video=True)
    _run_video(tracker, _tiny_video(3))
    assert len(tracker.caches.w_pos) > 0
    tracker.reset()
    assert len(tracker.caches.w_pos) == len(tracker.caches.w_neg) == 0


def test_tracker_one_class_cache_and_small_vocabulary_stay_finite():
    # one animal: the per-video positive cache holds one id from the second frame on (NaN in the official), and
    # K = 5 (the official one-hot placeholder 50 needs K = 50)
    tracker = _tiny_tracker(preset='bft')
    raw = record_id_logits(tracker)
    out, calibrated = _run_video(tracker, _tiny_video(1, num_frames=5))
    assert out.ids.tolist() == [1] and len(tracker.caches.pos) == 1  # one track, one cached id
    assert len(calibrated) == 4 and all(torch.isfinite(c).all() for c in calibrated)
    tracked = [(c, r) for c, r in zip(calibrated, raw) if not torch.equal(c, r)]
    assert tracked  # a tracked detection was recalibrated (calibrated logits differ from MOTIP's)


def test_tracker_preset_overrides_and_errors():
    tracker = _tiny_tracker(preset='bft', params=dict(lambda_id=0.3), det_thresh=0.4)
    assert tracker.params.lambda_id == 0.3 and tracker.params.pos_beta == 0.2 and tracker.det_thresh == 0.4
    assert tracker.caches.w_pos.capacity == 12 and tracker.caches.pos.capacity == 2
    assert _tiny_tracker(preset='bft').params == resolve_tcei_params('bft')
    built = resolve_tcei_params('dancetrack', lambda_id=0.5)
    assert _tiny_tracker(params=built).params is built
    with pytest.raises(ValueError, match='unknown preset'):
        _tiny_tracker(preset='DanceTrack')
    with pytest.raises(ValueError, match='pos_shot_capacity'):
        _tiny_tracker(params=dict(pos_shot_capacity=0))
    with pytest.raises(TypeError, match=r'lambda_id are TCEI hyperparameters: give them in params'):
        _tiny_tracker(lambda_id=0.3)  # a field of TCEIParams given as a tracker argument
    with pytest.raises(ValueError, match='built TCEIParams'):
        _tiny_tracker(preset='bft', params=built)


@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a GPU (device-agnostic check)')
def test_tracker_on_gpu_matches_cpu():
    outs = {}
    for device in ('cpu', 'cuda'):
        tracker = _tiny_tracker(device=device, preset='dancetrack')
        out, calibrated = _run_video(tracker, _tiny_video(3, num_frames=6))
        outs[device] = (out.ids.tolist(), [c.cpu() for c in calibrated])
    assert outs['cpu'][0] == outs['cuda'][0]
    for a, b in zip(outs['cpu'][1], outs['cuda'][1]):
        assert torch.allclose(a, b, atol=1e-4)
