"""Post-processing of TrackTrack: AFLink (PostLinker, official ``AFLink.link()``), its training on ground truth,
and GBI (official ``utils/gbi.py``)."""
import os.path as osp

import numpy as np
import pytest
import torch

from helpers.common import ANIMALTRACK, REPO, needs_animaltrack, tool

from vastmat.models.post.aflink import AFLink, PostLinker, PostLinkerModel, linker_state_dict
from vastmat.models.post.gbi import GBInterpolation, linear_interpolation

TINY = osp.join(REPO, 'configs', 'aflink', 'postlinker_tiny_animaltrack.py')

# The state-dict keys of the official `3. Tracker/AFLink/model.py` PostLinker (TrackTrack eac4df2 = StrongSORT), in
# order, as `list(PostLinker().state_dict())` prints them there.
OFFICIAL_KEYS = [
    'TemporalModule_1.0.conv.weight', 'TemporalModule_1.0.bnf.weight', 'TemporalModule_1.0.bnf.bias',
    'TemporalModule_1.0.bnf.running_mean', 'TemporalModule_1.0.bnf.running_var',
    'TemporalModule_1.0.bnf.num_batches_tracked', 'TemporalModule_1.0.bnx.weight', 'TemporalModule_1.0.bnx.bias',
    'TemporalModule_1.0.bnx.running_mean', 'TemporalModule_1.0.bnx.running_var',
    'TemporalModule_1.0.bnx.num_batches_tracked', 'TemporalModule_1.0.bny.weight', 'TemporalModule_1.0.bny.bias',
    'TemporalModule_1.0.bny.running_mean', 'TemporalModule_1.0.bny.running_var',
    'TemporalModule_1.0.bny.num_batches_tracked', 'TemporalModule_1.1.conv.weight', 'TemporalModule_1.1.bnf.weight',
    'TemporalModule_1.1.bnf.bias', 'TemporalModule_1.1.bnf.running_mean', 'TemporalModule_1.1.bnf.running_var',
    'TemporalModule_1.1.bnf.num_batches_tracked', 'TemporalModule_1.1.bnx.weight', 'TemporalModule_1.1.bnx.bias',
    'TemporalModule_1.1.bnx.running_mean', 'TemporalModule_1.1.bnx.running_var',
    'TemporalModule_1.1.bnx.num_batches_tracked', 'TemporalModule_1.1.bny.weight', 'TemporalModule_1.1.bny.bias',
    'TemporalModule_1.1.bny.running_mean', 'TemporalModule_1.1.bny.running_var',
    'TemporalModule_1.1.bny.num_batches_tracked', 'TemporalModule_1.2.conv.weight', 'TemporalModule_1.2.bnf.weight',
    'TemporalModule_1.2.bnf.bias', 'TemporalModule_1.2.bnf.running_mean', 'TemporalModule_1.2.bnf.running_var',
    'TemporalModule_1.2.bnf.num_batches_tracked', 'TemporalModule_1.2.bnx.weight', 'TemporalModule_1.2.bnx.bias',
    'TemporalModule_1.2.bnx.running_mean', 'TemporalModule_1.2.bnx.running_var',
    'TemporalModule_1.2.bnx.num_batches_tracked', 'TemporalModule_1.2.bny.weight', 'TemporalModule_1.2.bny.bias',
    'TemporalModule_1.2.bny.running_mean', 'TemporalModule_1.2.bny.running_var',
    'TemporalModule_1.2.bny.num_batches_tracked', 'TemporalModule_1.3.conv.weight', 'TemporalModule_1.3.bnf.weight',
    'TemporalModule_1.3.bnf.bias', 'TemporalModule_1.3.bnf.running_mean', 'TemporalModule_1.3.bnf.running_var',
    'TemporalModule_1.3.bnf.num_batches_tracked', 'TemporalModule_1.3.bnx.weight', 'TemporalModule_1.3.bnx.bias',
    'TemporalModule_1.3.bnx.running_mean', 'TemporalModule_1.3.bnx.running_var',
    'TemporalModule_1.3.bnx.num_batches_tracked', 'TemporalModule_1.3.bny.weight', 'TemporalModule_1.3.bny.bias',
    'TemporalModule_1.3.bny.running_mean', 'TemporalModule_1.3.bny.running_var',
    'TemporalModule_1.3.bny.num_batches_tracked', 'TemporalModule_2.0.conv.weight', 'TemporalModule_2.0.bnf.weight',
    'TemporalModule_2.0.bnf.bias', 'TemporalModule_2.0.bnf.running_mean', 'TemporalModule_2.0.bnf.running_var',
    'TemporalModule_2.0.bnf.num_batches_tracked', 'TemporalModule_2.0.bnx.weight', 'TemporalModule_2.0.bnx.bias',
    'TemporalModule_2.0.bnx.running_mean', 'TemporalModule_2.0.bnx.running_var',
    'TemporalModule_2.0.bnx.num_batches_tracked', 'TemporalModule_2.0.bny.weight', 'TemporalModule_2.0.bny.bias',
    'TemporalModule_2.0.bny.running_mean', 'TemporalModule_2.0.bny.running_var',
    'TemporalModule_2.0.bny.num_batches_tracked', 'TemporalModule_2.1.conv.weight', 'TemporalModule_2.1.bnf.weight',
    'TemporalModule_2.1.bnf.bias', 'TemporalModule_2.1.bnf.running_mean', 'TemporalModule_2.1.bnf.running_var',
    'TemporalModule_2.1.bnf.num_batches_tracked', 'TemporalModule_2.1.bnx.weight', 'TemporalModule_2.1.bnx.bias',
    'TemporalModule_2.1.bnx.running_mean', 'TemporalModule_2.1.bnx.running_var',
    'TemporalModule_2.1.bnx.num_batches_tracked', 'TemporalModule_2.1.bny.weight', 'TemporalModule_2.1.bny.bias',
    'TemporalModule_2.1.bny.running_mean', 'TemporalModule_2.1.bny.running_var',
    'TemporalModule_2.1.bny.num_batches_tracked', 'TemporalModule_2.2.conv.weight', 'TemporalModule_2.2.bnf.weight',
    'TemporalModule_2.2.bnf.bias', 'TemporalModule_2.2.bnf.running_mean', 'TemporalModule_2.2.bnf.running_var',
    'TemporalModule_2.2.bnf.num_batches_tracked', 'TemporalModule_2.2.bnx.weight', 'TemporalModule_2.2.bnx.bias',
    'TemporalModule_2.2.bnx.running_mean', 'TemporalModule_2.2.bnx.running_var',
    'TemporalModule_2.2.bnx.num_batches_tracked', 'TemporalModule_2.2.bny.weight', 'TemporalModule_2.2.bny.bias',
    'TemporalModule_2.2.bny.running_mean', 'TemporalModule_2.2.bny.running_var',
    'TemporalModule_2.2.bny.num_batches_tracked', 'TemporalModule_2.3.conv.weight', 'TemporalModule_2.3.bnf.weight',
    'TemporalModule_2.3.bnf.bias', 'TemporalModule_2.3.bnf.running_mean', 'TemporalModule_2.3.bnf.running_var',
    'TemporalModule_2.3.bnf.num_batches_tracked', 'TemporalModule_2.3.bnx.weight', 'TemporalModule_2.3.bnx.bias',
    'TemporalModule_2.3.bnx.running_mean', 'TemporalModule_2.3.bnx.running_var',
    'TemporalModule_2.3.bnx.num_batches_tracked', 'TemporalModule_2.3.bny.weight', 'TemporalModule_2.3.bny.bias',
    'TemporalModule_2.3.bny.running_mean', 'TemporalModule_2.3.bny.running_var',
    'TemporalModule_2.3.bny.num_batches_tracked', 'FusionBlock_1.conv.weight', 'FusionBlock_1.bn.weight',
    'FusionBlock_1.bn.bias', 'FusionBlock_1.bn.running_mean', 'FusionBlock_1.bn.running_var',
    'FusionBlock_1.bn.num_batches_tracked', 'FusionBlock_2.conv.weight', 'FusionBlock_2.bn.weight',
    'FusionBlock_2.bn.bias', 'FusionBlock_2.bn.running_mean', 'FusionBlock_2.bn.running_var',
    'FusionBlock_2.bn.num_batches_tracked', 'classifier.fc1.weight', 'classifier.fc1.bias', 'classifier.fc2.weight',
    'classifier.fc2.bias',
]


def track(track_id, frames, x, y, w=10.0, h=20.0, score=0.9):
    """Rows ``frame, id, x1, y1, x2, y2, score`` of a track standing still at top-left (x, y)."""
    frames = np.asarray(list(frames), np.float64)
    return np.column_stack([frames, np.full(len(frames), track_id), np.full(len(frames), x), np.full(len(frames), y),
                            np.full(len(frames), x + w), np.full(len(frames), y + h), np.full(len(frames), score)])


def video(*tracks):
    rows = np.concatenate(tracks)
    return rows[np.argsort(rows[:, 0], kind='stable')]


class StubAFLink(AFLink):
    """AFLink with fixed link probabilities per (former id, latter id) pair (0 for the others); records the pairs
    the temporal and spatial conditions let through."""

    def __init__(self, probs, **kwargs):
        super().__init__(**kwargs)
        self.probs, self.asked = probs, []

    def pair_probabilities(self, id_pairs, x1, x2):
        assert x1.shape == x2.shape == (len(id_pairs), 1, 30, 5) and x1.dtype == x2.dtype == np.float32
        pairs = [(int(a), int(b)) for a, b in id_pairs]
        self.asked += pairs
        return np.array([self.probs.get(p, 0.0) for p in pairs], np.float32)


def ids_by_input_track(out, rows):
    """The output id of every input row, keyed by the input id (rows are unchanged apart from their id)."""
    result = {}
    for row in rows:
        hit = out[(out[:, 0] == row[0]) & np.all(out[:, 2:] == row[2:], axis=1)]
        result.setdefault(int(row[1]), set()).update(hit[:, 1].astype(int).tolist())
    return result


def random_state_dict(seed=0):
    """A deterministic state dict with the official key names (non-trivial batch-norm statistics)."""
    generator = torch.Generator().manual_seed(seed)
    state = PostLinker().state_dict()
    for key, value in state.items():
        if value.dtype.is_floating_point:
            value.copy_(torch.rand(value.shape, generator=generator) + 0.5 if 'running_var' in key else
                        torch.randn(value.shape, generator=generator) * 0.2)
    return state


# --------------------------------------------------------------------------------------------------- PostLinker
def test_postlinker_state_dict_keys_equal_the_official():
    state = PostLinker().state_dict()
    assert list(state) == OFFICIAL_KEYS
    assert state['TemporalModule_1.0.conv.weight'].shape == (32, 1, 7, 1)
    assert state['FusionBlock_2.conv.weight'].shape == (256, 256, 1, 3)
    assert state['classifier.fc1.weight'].shape == (128, 512) and state['classifier.fc2.weight'].shape == (2, 128)
    # any state dict with the official names loads strictly
    model = PostLinker()
    model.load_state_dict(random_state_dict(3), strict=True)
    assert torch.equal(model.classifier.fc2.bias, random_state_dict(3)['classifier.fc2.bias'])


def test_batched_probabilities_equal_one_pair_calls():
    """The official calls the model on one pair at a time (mmdet's AFLinkModel is the official network with its
    in-place batch norm and returns softmax[0, 1] of one pair)."""
    from mmdet.models.task_modules.tracking.aflink import AFLinkModel
    state = random_state_dict(1)
    ours, official = PostLinker(), AFLinkModel()
    ours.load_state_dict(state)
    official.load_state_dict(state)
    official.eval()
    generator = torch.Generator().manual_seed(2)
    x1 = torch.rand(40, 1, 30, 5, generator=generator) * 2 - 1
    x2 = torch.rand(40, 1, 30, 5, generator=generator) * 2 - 1
    batched = ours.link_probability(x1, x2, chunk=16)
    with torch.no_grad():
        one_by_one = np.array([official(x1[i:i + 1], x2[i:i + 1]).numpy() for i in range(40)], np.float32)
    assert batched.dtype == np.float32 and np.allclose(batched, one_by_one, rtol=0, atol=1e-6)
    assert ours.training  # link_probability leaves the mode as it was


def test_postlinker_trains_through_the_per_column_batch_norm():
    model = PostLinker()
    logits = model(torch.randn(8, 1, 30, 5), torch.randn(8, 1, 30, 5))
    assert logits.shape == (8, 2)
    torch.nn.functional.cross_entropy(logits, torch.tensor([1, 0] * 4)).backward()  # the official's in-place BN fails
    assert model.TemporalModule_1[0].conv.weight.grad is not None
    model.eval()
    probs = model(torch.randn(3, 1, 30, 5), torch.randn(3, 1, 30, 5))
    assert torch.allclose(probs.sum(1), torch.ones(3))


def test_training_wrapper_flattens_pairs_in_the_official_order():
    model = PostLinkerModel()
    track1, track2 = torch.randn(2, 4, 1, 30, 5), torch.randn(2, 4, 1, 30, 5)
    labels = torch.tensor([[1, 0, 0, 0]] * 2)
    # the official: torch.cat((pair1[0], pair2[0], pair3[0], pair4[0])) over a batch
    x1 = torch.cat([track1[:, k] for k in range(4)])
    x2 = torch.cat([track2[:, k] for k in range(4)])
    model.eval()
    assert torch.equal(model(track1, track2, mode='tensor'), model.linker.classifier(*model.linker.features(x1, x2)))
    model.train()
    torch.manual_seed(0)
    loss = model(list(track1), list(track2), list(labels), mode='loss')['loss']  # pseudo_collate's lists
    torch.manual_seed(0)
    expected = torch.nn.functional.cross_entropy(model.linker(x1, x2), torch.tensor([1, 1] + [0] * 6))
    assert torch.allclose(loss, expected)


# ----------------------------------------------------------------------------------------------------- AFLink
def test_aflink_follows_id_chains_with_real_ids():
    rows = video(track(7, range(1, 6), 0, 0), track(3, range(8, 13), 10, 0), track(11, range(15, 21), 20, 0))
    linker = StubAFLink({(7, 3): 0.99, (3, 11): 0.99})
    out = linker(rows)
    assert np.array_equal(out[:, 1], np.full(len(rows), 7.0))  # 7 -> 3 -> 11: all become 7 (not matrix indices)
    assert np.array_equal(out[:, [0, 2, 3, 4, 5, 6]], rows[:, [0, 2, 3, 4, 5, 6]])
    assert set(linker.asked) == {(7, 3), (7, 11), (3, 11)}


def test_aflink_temporal_and_spatial_conditions_exact_bounds():
    rows = video(
        track(1, range(1, 11), 0, 0),        # ends at frame 10, top-left (0, 0)
        track(2, [30], 0, 0),                # gap 20: not < 20
        track(3, [29], 0, 0),                # gap 19
        track(4, [9], 0, 0),                 # gap -1
        track(5, [10], 0, 0),                # gap 0 (same frame)
        track(6, [15], 60, 80, w=200),       # top-left distance exactly 100
        track(7, [15], 60, 80.5),            # 100.3
        track(8, [15], -150, 0, w=310))      # centre near track 1's, top-left 150 away
    linker = StubAFLink({})
    assert np.array_equal(linker(rows), rows[np.lexsort((rows[:, 1], rows[:, 0]))])  # nothing linked
    assert {j for i, j in linker.asked if i == 1} == {3, 5, 6}
    assert (4, 1) not in linker.asked  # 4 ends at frame 9, 1 starts at frame 1
    wide = StubAFLink({}, thrT=(-1, 21), thrS=150)
    wide(rows)
    assert {j for i, j in wide.asked if i == 1} == {2, 3, 4, 5, 6, 7, 8}


def test_aflink_threshold_and_hungarian_not_greedy():
    rows = video(track(1, range(1, 11), 0, 0), track(5, range(1, 11), 50, 0),
                 track(2, range(12, 21), 0, 0), track(3, range(12, 21), 50, 0))
    # costs 0.01, 0.02, 0.03 and 1 (> thrP: "no link", 1e5): greedy would take 1-2 and strand 5; the official's
    # Hungarian on the compressed matrix takes 1-3 and 5-2 (0.05 < 1e5 + 0.01)
    out = StubAFLink({(1, 2): 0.99, (1, 3): 0.98, (5, 2): 0.97, (5, 3): 0.0})(rows)
    assert ids_by_input_track(out, rows) == {1: {1}, 5: {5}, 2: {5}, 3: {1}}
    # cost 1 - p must be < thrP = 0.05
    out = StubAFLink({(1, 2): 0.94, (5, 3): 0.96})(rows)
    assert ids_by_input_track(out, rows) == {1: {1}, 5: {5}, 2: {2}, 3: {5}}


def test_aflink_deduplicates_frame_and_id():
    rows = video(track(1, range(1, 11), 0, 0), track(2, range(10, 21), 3, 0))  # 2 starts where 1 ends
    out = StubAFLink({(1, 2): 0.99})(rows)
    assert len(out) == len(rows) - 1 and np.all(out[:, 1] == 1)
    assert np.array_equal(out[:, 0], np.arange(1, 21))  # one row a frame, sorted
    assert out[9, 2] in (0, 3)


def test_aflink_with_fixed_weights_end_to_end():
    rows = video(track(4, range(1, 31), 0, 0), track(9, range(35, 60), 5, 5))
    linker = AFLink()
    with torch.no_grad():
        linker.linker.classifier.fc2.weight.zero_()
        linker.linker.classifier.fc2.bias.copy_(torch.tensor([0.0, 10.0]))  # p = sigmoid(10) for every pair
    out = linker(rows)
    assert np.all(out[:, 1] == 4) and len(out) == len(rows)
    _, costs = linker._costs(rows)
    assert costs[0, 1] == np.float32(1) - np.float32(1 / (1 + np.exp(np.float32(-10))))
    assert costs[1, 0] == 1e5  # 9 ends after 4 starts
    with torch.no_grad():
        linker.linker.classifier.fc2.bias.copy_(torch.tensor([0.0, -10.0]))
    assert np.array_equal(linker(rows)[:, 1], rows[:, 1])


def test_aflink_empty_and_single_track():
    assert AFLink()(np.zeros((0, 7))).shape == (0, 7)
    rows = track(2, [3, 1, 2], 0, 0)
    assert np.array_equal(AFLink()(rows), rows[[1, 2, 0]])


def test_aflink_checkpoint_forms(tmp_path):
    state = random_state_dict(5)
    raw = tmp_path / 'AFLink_epoch20.pth'
    torch.save(state, raw)  # the official file: a raw state dict
    runner = tmp_path / 'epoch_20.pth'
    torch.save({'meta': {'epoch': 20}, 'state_dict': {f'linker.{k}': v for k, v in state.items()}}, runner)
    for path in (raw, runner):
        linker = AFLink(checkpoint=str(path))
        assert all(torch.equal(v, state[k]) for k, v in linker.linker.state_dict().items())
        assert not linker.linker.training
    # a whole tracking model's state dict (the post-processor is its submodule)
    whole = {'detector.w': torch.zeros(1), **{f'post_processor0.linker.{k}': v for k, v in state.items()}}
    assert list(linker_state_dict(whole)) == OFFICIAL_KEYS
    with pytest.raises(KeyError, match='no key ending in'):
        linker_state_dict({'state_dict': {'backbone.conv.weight': torch.zeros(1)}})
    broken = tmp_path / 'broken.pth'
    torch.save({k: v for k, v in state.items() if not k.startswith('classifier')}, broken)
    with pytest.raises(KeyError, match='do not fit the official model'):
        AFLink(checkpoint=str(broken))


def test_aflink_is_a_submodule_of_the_tracking_model():
    from vastmat.registry import MODELS
    model = MODELS.build(dict(type='TrackingByDetection', tracker=dict(type='BYTETracker'),
                              post_processors=[dict(type='AFLink'), dict(type='GBInterpolation', tau=12)]))
    keys = list(model.state_dict())
    assert 'post_processor0.linker.TemporalModule_1.0.conv.weight' in keys
    assert not any(k.startswith('post_processor1') for k in keys)
    model.train()
    assert not model.post_processor0.linker.training


# -------------------------------------------------------------------------------------------------------- GBI
def test_gbi_linear_step_then_gradient_boosting():
    from sklearn.ensemble import GradientBoostingRegressor
    rng = np.random.default_rng(0)
    frames = np.r_[1:9, 12:21]  # a gap of 3 frames (9, 10, 11)
    ltwh = np.column_stack([np.linspace(100, 160, len(frames)) + rng.normal(0, 2, len(frames)),
                            np.linspace(50, 40, len(frames)) + rng.normal(0, 2, len(frames)),
                            30 + rng.normal(0, 1, len(frames)), 60 + rng.normal(0, 1, len(frames))])
    far = np.r_[1:6, 40:46]  # a gap of 34 frames: not filled (>= interval - 1 missing)
    ltwh2 = np.tile([[300.0, 300.0, 20.0, 20.0]], (len(far), 1)) + np.arange(len(far))[:, None]
    rows = np.concatenate([
        np.column_stack([frames, np.ones(len(frames)), ltwh[:, :2], ltwh[:, :2] + ltwh[:, 2:],
                         np.full(len(frames), .8)]),
        np.column_stack([far, np.full(len(far), 2), ltwh2[:, :2], ltwh2[:, :2] + ltwh2[:, 2:],
                         np.full(len(far), .7)])])
    rows = rows[np.argsort(rows[:, 0], kind='stable')]

    # the linear step, on ltwh rows: frames 9, 10, 11 = row(8) + (row(12) - row(8)) / 4 * i
    ltwh_rows = np.column_stack([rows[:, :4], rows[:, 4:6] - rows[:, 2:4], rows[:, 6]])
    filled = linear_interpolation(ltwh_rows, 30)
    one = filled[filled[:, 1] == 1]
    assert np.array_equal(one[:, 0], np.arange(1, 21))
    a, b = ltwh_rows[(ltwh_rows[:, 1] == 1) & (ltwh_rows[:, 0] == 8)][0], ltwh_rows[(ltwh_rows[:, 1] == 1) &
                                                                                 (ltwh_rows[:, 0] == 12)][0]
    for i, frame in enumerate((9, 10, 11), start=1):
        assert np.allclose(one[one[:, 0] == frame][0], a + (b - a) / 4 * i, rtol=0, atol=1e-12)
    assert np.array_equal(filled[filled[:, 1] == 2][:, 0], far)

    out = GBInterpolation(interval=30, tau=12)(rows)
    assert out.shape == (len(frames) + 3 + len(far), 7)
    assert np.array_equal(out[:, 0], np.sort(out[:, 0])) and np.all(out[:, 6] == 1)
    for track_id, track_rows in ((1, one), (2, filled[filled[:, 1] == 2])):
        t = track_rows[:, :1]
        expected = []
        for column in range(2, 6):
            regressor = GradientBoostingRegressor(n_estimators=115, learning_rate=0.065, min_samples_split=6)
            expected.append(regressor.fit(t, track_rows[:, column]).predict(t))
        got = out[out[:, 1] == track_id]
        assert np.array_equal(got[:, 0], t[:, 0])
        assert np.allclose(got[:, 2], expected[0], rtol=0, atol=1e-9)
        assert np.allclose(got[:, 3], expected[1], rtol=0, atol=1e-9)
        assert np.allclose(got[:, 4] - got[:, 2], expected[2], rtol=0, atol=1e-9)
        assert np.allclose(got[:, 5] - got[:, 3], expected[3], rtol=0, atol=1e-9)


def test_gbi_empty_input():
    assert GBInterpolation()(np.zeros((0, 7))).shape == (0, 7)


def test_gbi_names_a_bad_parameter_and_a_row_with_nan():
    """sklearn's own checks are off inside GBI's fits (a third of its time): GBI makes them, naming what is wrong."""
    for kwargs, name in ((dict(n_estimators=0), 'n_estimators'), (dict(min_samples_split=1.5), 'min_samples_split'),
                         (dict(learning_rate=-0.1), 'learning_rate'), (dict(n_estimators=True), 'n_estimators')):
        with pytest.raises(ValueError, match=name):
            GBInterpolation(**kwargs)
    rows = np.array([[1, 1, 0, 0, 10, 10, 0.9], [2, 1, np.nan, 0, 10, 10, 0.9]])
    with pytest.raises(ValueError, match=r'1 row\(s\) with NaN'):
        GBInterpolation()(rows)


# ------------------------------------------------------------------------------------------ training data + run
def write_vastmat_root(root):
    """A two-video VastMAT root (protocol1 train = both), nine-column gt, one short and one ignored track."""
    import os
    for v, name in enumerate(('Video_A', 'Video_B')):
        directory = osp.join(root, 'videos', name)
        os.makedirs(osp.join(directory, 'gt'))
        with open(osp.join(directory, 'seqinfo.ini'), 'w') as f:
            f.write(f'[Sequence]\nname={name}\nimDir=img1\nframeRate=10\nseqLength=50\nimWidth=640\n'
                    'imHeight=480\nimExt=.jpg\n')
        lines = []
        for frame in range(1, 51):
            lines.append(f'{frame},1,{10 + frame},{20 + v},30,40,1,5,1')  # 50 rows
            if frame <= 20:
                lines.append(f'{frame},2,200,200,30,40,1,5,1')  # 20 rows: too short
            lines.append(f'{frame},3,300,{frame},30,40,0,5,1')  # ignored
        with open(osp.join(directory, 'gt', 'gt.txt'), 'w') as f:
            f.write('\n'.join(lines) + '\n')
    os.makedirs(osp.join(root, 'splits', 'protocol1'))
    with open(osp.join(root, 'splits', 'protocol1', 'train.txt'), 'w') as f:
        f.write('Video_A\nVideo_B\n')


def test_pairs_dataset_on_a_vastmat_root(tmp_path):
    from vastmat.datasets.aflink_pairs import AFLinkPairs, transform_pair
    write_vastmat_root(str(tmp_path))
    data = AFLinkPairs(str(tmp_path), protocol='protocol1', split='train', mode='val')
    assert len(data) == 2 and data.track_keys == [('Video_A', 1), ('Video_B', 1)]
    item = data[0]
    assert item['track1'].shape == item['track2'].shape == (4, 1, 30, 5) and item['track1'].dtype == torch.float32
    assert item['labels'].tolist() == [1, 0, 0, 0]
    info = data.tracks[0]  # frame, left, top, width, height
    assert np.array_equal(info[:, 0], np.arange(1, 51)) and np.array_equal(info[:, 1], 10 + np.arange(1, 51))
    first, second = info[:25], info[25:]  # val: cut at n // 2, shifts (-1) ** 25 * 50 frames / 300 px
    shifted_t, shifted_s = second.copy(), second.copy()
    shifted_t[:, 0] -= 50
    shifted_s[:, 1:3] -= 300
    for k, (a, b) in enumerate(((first, second), (second, first), (first, shifted_t), (first, shifted_s))):
        x1, x2 = transform_pair(a, b)
        assert torch.equal(item['track1'][k], x1) and torch.equal(item['track2'][k], x2)
    # the official window + normalisation by hand for the positive pair: 25 rows + 5 zero rows in front / behind
    w1 = np.concatenate([np.zeros((5, 5)), first])
    w2 = np.concatenate([second, np.zeros((5, 5))])
    low, high = np.minimum(w1.min(0), w2.min(0)), np.maximum(w1.max(0), w2.max(0))
    expected = (w1 - (high + low) / 2) / ((high - low) / 2 + 1e-5)
    assert torch.equal(item['track1'][0, 0], torch.tensor(expected, dtype=torch.float))
    with pytest.raises(ValueError, match='no valid ground-truth track of at least 60 rows'):
        AFLinkPairs(str(tmp_path), protocol='protocol1', split='train', min_len=60)


@needs_animaltrack
def test_pairs_dataset_random_cuts_on_animaltrack():
    import random

    from vastmat.datasets.aflink_pairs import AFLinkPairs
    from vastmat.datasets.sequences import load_sequence
    data = AFLinkPairs(ANIMALTRACK, videos=['chicken_3'], stride=3)
    gt = load_sequence(ANIMALTRACK, 'chicken_3', stride=3).gt
    counts = np.unique(gt.ids[gt.valid == 1], return_counts=True)[1]
    assert len(data) == np.count_nonzero(counts >= 30)
    random.seed(0)
    items = [data[index] for index in range(len(data))]
    for item in items:
        assert item['track1'].shape == item['track2'].shape == (4, 1, 30, 5)
        assert torch.all(item['track1'].abs() <= 1) and torch.all(item['track2'].abs() <= 1)  # min-max normalised
        assert item['labels'].tolist() == [1, 0, 0, 0]
    random.seed(0)  # the official draws from Python's random: the runner's seed fixes the samples
    assert all(torch.equal(a['track1'], data[i]['track1']) for i, a in enumerate(items))
    random.seed(1)
    assert not all(torch.equal(a['track2'], data[i]['track2']) for i, a in enumerate(items))


@needs_animaltrack
def test_tiny_postlinker_training_and_aflink_loads_it(tmp_path):
    work_dir = tmp_path / 'work'
    tool('tools/train.py', TINY, '--work-dir', work_dir, '--cfg-options',
         f'train_dataloader.dataset.data_root={ANIMALTRACK}/')
    checkpoint = torch.load(work_dir / 'iter_2.pth', weights_only=True)
    assert checkpoint['meta']['iter'] == 2
    losses = checkpoint['message_hub']['log_scalars']['train/loss']['log_history']
    assert len(losses) == 2 and all(np.isfinite(losses)) and all(0 < loss < 5 for loss in losses)
    linker = AFLink(checkpoint=str(work_dir / 'iter_2.pth'))
    trained = {k[len('linker.'):]: v for k, v in checkpoint['state_dict'].items()}
    assert set(trained) == set(OFFICIAL_KEYS)
    assert all(torch.equal(v, trained[k]) for k, v in linker.linker.state_dict().items())
    assert linker.linker.TemporalModule_1[0].bnf.num_batches_tracked.item() == 2
