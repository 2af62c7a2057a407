"""MOTIP's learned identity modules and training targets (vastmat.models.trackers.motip_modules / motip_targets):
golden comparisons with the official MOTIP code (tests/fixtures/motip_official, see its README), the parameter count,
and invariants of the ID labels, attention masks, relative time bias and newborn rule."""
import os.path as osp
import random

import pytest
import torch

from helpers.common import FIXTURES_ROOT

from vastmat.models.trackers.motip_modules import MOTIPIDDecoder, MOTIPTrajectoryModeling
from vastmat.models.mot.motip_targets import (ClipIDLabels, MOTIPClipTargets, gather_clip_features, generate_id_labels,
                                              id_loss, trajectory_and_unknown)

FIXTURES = osp.join(FIXTURES_ROOT, 'motip_official')
SMALL = dict(feature_dim=32, id_dim=32, ffn_dim_ratio=2, num_layers=3, head_dim=16, num_id_vocabulary=10,
             rel_pe_length=8)
FIELDS = {  # official field name -> MOTIPClipTargets field
    'trajectory_id_labels': 'trajectory_id_labels', 'trajectory_id_masks': 'trajectory_masks',
    'trajectory_ann_idxs': 'trajectory_ann_idxs', 'trajectory_times': 'trajectory_times',
    'unknown_id_labels': 'unknown_id_labels', 'unknown_id_masks': 'unknown_masks',
    'unknown_ann_idxs': 'unknown_ann_idxs', 'unknown_times': 'unknown_times'}

# Full-size parameter count, derived from the official architecture (feature_dim = id_dim = 256, so tokens have
# D = 512 channels and 512 / head_dim 32 = 16 heads; K = 50; 6 layers; rel_pe_length 30; FFN ratio 2):
#   word_to_embed          Linear(51 -> 256, no bias)                      51 * 256 =     13,056
#   embed_to_word          Linear(256 -> 51, no bias), ONE shared module   256 * 51 =     13,056
#   rel_pos_embeds         6 * 30 * 16                                                 =      2,880
#   one MultiheadAttention in_proj 3*512*512 + 3*512, out_proj 512*512 + 512       =  1,050,624
#   self_attn_layers       5 x 1,050,624 (layer 0 has none)                           =  5,253,120
#   self_attn_norm_layers  5 x LayerNorm(512) = 5 x 1,024                             =      5,120
#   cross_attn_layers      6 x 1,050,624                                              =  6,303,744
#   cross_attn_norm_layers 6 x 1,024                                                  =      6,144
#   ffn_layers             6 x (512*1024 + 1024 + 1024*512 + 512) = 6 x 1,050,112     =  6,300,672
#   ffn_norm_layers        6 x 1,024                                                  =      6,144
#   ID decoder total                                                                  = 17,903,936
#   trajectory modelling: 2 FFNs (256*512 + 512 + 512*256 + 256 = 262,912 each) + 2 LayerNorm(256) (512 each)
#                                                                                     =    526,848
# The official modules instantiated outside the project give the same two numbers (fixture README).
ID_DECODER_PARAMETERS = 51 * 256 * 2 + 6 * 30 * 16 + 11 * (3 * 512 * 512 + 3 * 512 + 512 * 512 + 512) \
    + 17 * 1024 + 6 * (2 * 512 * 1024 + 1024 + 512)
TRAJECTORY_MODELING_PARAMETERS = 2 * (2 * 256 * 512 + 512 + 256) + 2 * 512


def load(name):
    return torch.load(osp.join(FIXTURES, name), weights_only=True)


def rule_init(module):
    """The fixture's deterministic parameters (README): sorted named_parameters, i-th = randn(seed i), scaled."""
    with torch.no_grad():
        for i, (name, p) in enumerate(sorted(module.named_parameters())):
            v = torch.randn(p.shape, generator=torch.Generator().manual_seed(i), dtype=torch.float32)
            if name == 'rel_pos_embeds':
                pass
            elif 'norm' in name and name.endswith('weight'):
                v = 1 + 0.2 * v
            else:
                v = 0.2 * v
            p.copy_(v)
    return module


@pytest.fixture(scope='module')
def golden():
    return load('decoder.pt')


@pytest.fixture(scope='module')
def small():
    torch.set_num_threads(1)
    return rule_init(MOTIPIDDecoder(**SMALL)).eval(), rule_init(MOTIPTrajectoryModeling(32, 2, 32)).eval()


def decode(dec, inp, **changes):
    with torch.no_grad():
        return dec(**dict(inp, **changes))


# ----------------------------------------------------------------------------------------------------------- golden
@pytest.mark.parametrize('case', ['train', 'runtime'])
def test_decoder_matches_official(golden, small, case):
    dec, traj = small
    inp, ref = golden['inputs'][case], golden['outputs'][case]
    with torch.no_grad():
        feats = traj(inp['trajectory_features'])
        assert torch.allclose(feats, ref['trajectory_features'], atol=1e-5, rtol=0)
        logits, id_embeds = dec(**dict(inp, trajectory_features=feats), return_id_embeds=True)
    assert logits.shape == ref['logits'].shape == inp['unknown_masks'].shape + (SMALL['num_id_vocabulary'] + 1,)
    assert torch.allclose(logits, ref['logits'], atol=1e-5, rtol=0)
    assert id_embeds.shape == inp['unknown_masks'].shape + (SMALL['id_dim'],)
    assert torch.allclose(id_embeds.reshape(-1, SMALL['id_dim']), ref['tcei_id_embeds'], atol=1e-5, rtol=0)
    assert ref['logits'].abs().max() > 1  # not a degenerate comparison
    # the logits are embed_to_word of the returned id embeddings
    assert torch.allclose(logits, id_embeds @ dec.embed_to_word.weight.t(), atol=1e-6)


def test_parameter_count_and_state_dict_match_official(golden):
    dec, traj = MOTIPIDDecoder(), MOTIPTrajectoryModeling()
    assert (dec.num_heads, dec.num_id_vocabulary, dec.rel_pe_length) == (16, 50, 30)
    n_dec = sum(p.numel() for p in dec.parameters())
    n_traj = sum(p.numel() for p in traj.parameters())
    assert n_dec == ID_DECODER_PARAMETERS == golden['param_counts']['id_decoder'] == 17_903_936
    assert n_traj == TRAJECTORY_MODELING_PARAMETERS == golden['param_counts']['trajectory_modeling'] == 526_848
    for module, key in ((dec, 'id_decoder'), (traj, 'trajectory_modeling')):
        shapes = {k: list(v.shape) for k, v in module.state_dict().items()}
        assert shapes == golden['state_dict_shapes'][key]
        # an official-shaped state dict loads strictly
        state = {k: torch.randn(s) for k, s in golden['state_dict_shapes'][key].items()}
        if key == 'id_decoder':  # the official entries of the shared classifier are one tensor
            for i in range(6):
                state[f'embed_to_word_layers.{i}.weight'] = state['embed_to_word_layers.0.weight']
        module.load_state_dict(state, strict=True)
        assert torch.equal(module.state_dict()[next(iter(state))], state[next(iter(state))])
    assert all(layer is dec.embed_to_word for layer in dec.embed_to_word_layers)


def test_registry_build():
    from vastmat.registry import MODELS
    dec = MODELS.build(dict(type='MOTIPIDDecoder', **SMALL))
    traj = MODELS.build(dict(type='MOTIPTrajectoryModeling', detr_dim=32, feature_dim=32))
    assert isinstance(dec, MOTIPIDDecoder) and isinstance(traj, MOTIPTrajectoryModeling)
    assert dec.num_heads == 4 and dec.rel_pos_embeds.shape == (3, 8, 4)
    assert torch.count_nonzero(dec.rel_pos_embeds) == 0  # official init: zeros


def clip_targets(case):
    random.seed(case['seed'])
    torch.manual_seed(case['seed'])
    labels = generate_id_labels([torch.tensor(ids) for ids in case['clip']], case['K'], case['G'],
                                case['num_training_ids'])
    return labels, trajectory_and_unknown(labels, case['K'], case['occlusion_prob'], case['switch_prob'])


def test_targets_match_official():
    cases = load('targets.pt')
    assert len(cases) == 8
    for name, case in cases.items():
        _, targets = clip_targets(case)
        for official, ours in FIELDS.items():
            assert torch.equal(getattr(targets, ours), case['targets'][official]), (name, ours)


def test_gather_matches_official_collate_and_prepare():
    g = load('gather.pt')
    targets = [clip_targets(dict(clip=clip, seed=seed, K=g['K'], G=g['G'], num_training_ids=None,
                                 occlusion_prob=g['occlusion_prob'], switch_prob=g['switch_prob']))[1]
               for clip, seed in zip(g['clips'], g['seeds'])]
    T = len(g['clips'][0])
    feats = [[f.clone().requires_grad_() for f in g['frame_features'][b * T:(b + 1) * T]] for b in range(2)]
    out = gather_clip_features(targets, feats)
    assert set(out) == set(g['seq_info'])
    for key, ref in g['seq_info'].items():
        assert out[key].dtype == ref.dtype and torch.equal(out[key].detach(), ref), key
    assert out['unknown_masks'].shape[-1] > targets[1].unknown_masks.shape[-1]  # clip 1 was padded
    out['trajectory_features'].sum().backward()
    assert feats[0][1].grad is not None and feats[0][1].grad.abs().sum() > 0


def test_id_loss_matches_official():
    ref = load('loss.pt')
    loss = id_loss(ref['logits'], ref['labels'], ref['masks'])
    assert torch.allclose(loss, ref['loss'], atol=1e-6, rtol=1e-6)
    assert id_loss(ref['logits'], ref['labels'], torch.ones_like(ref['masks'])).item() == 0.0
    # frame 0 is never supervised
    masks = ref['masks'].clone()
    masks[:, :, 1:] = True
    assert id_loss(ref['logits'], ref['labels'], masks).item() == 0.0
    with pytest.raises(ValueError, match=r'unmasked labels must lie in \[0, 7\)'):
        id_loss(ref['logits'], ref['labels'].masked_fill(ref['masks'], -1).clamp(min=0) + 7, ref['masks'])


# -------------------------------------------------------------------------------------------------------- ID labels
CLIP = [[3, 7, 1000], [7, 3, 12], [12, 1000, 40, 3], [40, 5], [5, 7, 77, 12], [3, 77, 1000], [], [5]]


@pytest.mark.parametrize('K,num_training_ids', [(10, None), (5, None), (10, 4), (7, 7)])
def test_id_label_invariants(K, num_training_ids):
    n_ids = len({i for frame in CLIP for i in frame})
    for seed in range(5):
        torch.manual_seed(seed)
        labels = generate_id_labels([torch.tensor(ids, dtype=torch.int64) for ids in CLIP], K, 3, num_training_ids)
        G, T, N = labels.id_labels.shape
        assert (G, T) == (3, len(CLIP)) and N == min(n_ids, K, num_training_ids or K)
        assert labels.id_labels.dtype == labels.ann_idxs.dtype == torch.int64 and labels.id_masks.dtype == torch.bool
        assert bool((labels.id_labels >= 0).all() and (labels.id_labels < K).all())
        assert bool((labels.id_labels == labels.id_labels[:, :1]).all())  # one label per identity, every frame
        for g in range(G):
            assert len(set(labels.id_labels[g, 0].tolist())) == N  # distinct within a group
        assert torch.equal(labels.id_masks, labels.ann_idxs < 0)
        # each column is one identity: ann_idxs point at that identity's GT row in every frame where it is present
        for n in range(N):
            ids = {CLIP[t][labels.ann_idxs[0, t, n]] for t in range(T) if labels.ann_idxs[0, t, n] >= 0}
            assert len(ids) == 1
            gid = ids.pop()
            present = [gid in CLIP[t] for t in range(T)]
            assert labels.id_masks[0, :, n].tolist() == [not p for p in present]
        assert torch.equal(labels.ann_idxs, labels.ann_idxs[:1].expand_as(labels.ann_idxs))  # groups share columns
    # groups draw independent labels
    torch.manual_seed(0)
    many = generate_id_labels([torch.tensor(CLIP[0])], 50, 6)
    assert len({tuple(many.id_labels[g, 0].tolist()) for g in range(6)}) > 1


def test_id_label_errors():
    with pytest.raises(ValueError, match=r'gt_ids\[1\].*duplicate'):
        generate_id_labels([torch.tensor([1, 2]), torch.tensor([4, 4])], 10, 1)
    with pytest.raises(ValueError, match='num_training_ids'):
        generate_id_labels([torch.tensor([1])], 10, 1, num_training_ids=11)
    with pytest.raises(ValueError, match='1-D integer'):
        generate_id_labels([torch.tensor([1.0])], 10, 1)
    with pytest.raises(ValueError, match='no frames'):
        generate_id_labels([], 10, 1)
    labels = generate_id_labels([torch.tensor([1, 2])], 10, 1)
    with pytest.raises(ValueError, match='occlusion_prob'):
        trajectory_and_unknown(labels, 10, 1.5, 0.0)
    with pytest.raises(ValueError, match=r'num_id_vocabulary=5'):
        trajectory_and_unknown(ClipIDLabels(labels.id_labels + 5, labels.id_masks, labels.ann_idxs), 5, 0.0, 0.0)


def test_newborn_rule():
    K = 10
    clip = [torch.tensor(ids) for ids in CLIP]
    # without augmentation: newborn exactly until the first frame after the identity's first appearance
    labels = generate_id_labels(clip, K, 2)
    tgt = trajectory_and_unknown(labels, K, 0.0, 0.0)
    assert torch.equal(tgt.trajectory_masks, labels.id_masks) and torch.equal(tgt.unknown_masks, labels.id_masks)
    assert torch.equal(tgt.trajectory_ann_idxs, labels.ann_idxs)
    G, T, N = labels.id_labels.shape
    for g in range(G):
        for n in range(N):
            first = next(t for t in range(T) if not labels.id_masks[g, t, n])
            expected = [K if t <= first else int(labels.id_labels[g, 0, n]) for t in range(T)]
            assert tgt.unknown_id_labels[g, :, n].tolist() == expected
    # with augmentation: newborn until seen in the AUGMENTED trajectory at an earlier frame
    for seed in range(6):
        random.seed(seed)
        torch.manual_seed(seed)
        tgt = trajectory_and_unknown(labels, K, 0.7, 0.5)
        assert torch.equal(tgt.trajectory_id_labels, labels.id_labels)
        assert torch.equal(tgt.trajectory_times, torch.arange(T)[None, :, None].expand(G, T, N))
        assert bool((tgt.unknown_masks >= labels.id_masks).all())  # occlusion only adds masks
        seen_before = torch.zeros(G, N, dtype=torch.bool)
        for t in range(T):
            expected = torch.where(seen_before, labels.id_labels[:, t], torch.full_like(labels.id_labels[:, t], K))
            assert torch.equal(tgt.unknown_id_labels[:, t], expected)
            seen_before |= ~tgt.trajectory_masks[:, t]
        # switches permute the rows of one frame among the columns: the multiset is kept
        for g in range(G):
            for t in range(T):
                assert sorted(tgt.trajectory_ann_idxs[g, t].tolist()) == sorted(labels.ann_idxs[g, t].tolist())


# ------------------------------------------------------------------------------------------ attention masks and bias
def test_unknown_never_sees_trajectory_at_or_after_its_time(golden, small):
    dec, _ = small
    inp = golden['inputs']['train']
    base = decode(dec, inp)
    tm = inp['trajectory_masks']
    for t_changed in range(5):
        feats = inp['trajectory_features'].clone()
        feats[:, :, t_changed] += 3.0
        labels = inp['trajectory_id_labels'].clone()
        labels[:, :, t_changed] = torch.where(tm[:, :, t_changed], labels[:, :, t_changed], 9 - labels[:, :, t_changed])
        out = decode(dec, inp, trajectory_features=feats, trajectory_id_labels=labels)
        diff = (out - base).abs().amax(dim=(3, 4))  # (B, G, T2)
        # unknowns at times <= t_changed: identical; later: changed where the changed frame has a visible token
        assert torch.equal(out[:, :, :t_changed + 1], base[:, :, :t_changed + 1])
        visible = (~tm[:, :, t_changed]).any(-1)  # (B, G)
        for t in range(t_changed + 1, 5):
            assert torch.equal(diff[:, :, t] > 1e-4, visible)
    # masked trajectory tokens are never seen
    feats = inp['trajectory_features'].masked_fill(tm[..., None], 50.0)
    labels = inp['trajectory_id_labels'].masked_fill(tm, 3)
    assert torch.equal(decode(dec, inp, trajectory_features=feats, trajectory_id_labels=labels), base)


def test_masked_unknowns_do_not_affect_others(golden, small):
    dec, _ = small
    inp = golden['inputs']['train']
    base = decode(dec, inp)
    um = inp['unknown_masks']
    out = decode(dec, inp, unknown_features=inp['unknown_features'].masked_fill(um[..., None], 7.0))
    assert torch.equal(out[~um], base[~um])
    # an unmasked unknown does influence the others of its frame (self-attention from layer 1 on)
    feats = inp['unknown_features'].clone()
    feats[0, 0, 2, 0] += 3.0
    assert not um[0, 0, 2, 0]
    diff = (decode(dec, inp, unknown_features=feats) - base).abs().amax(-1)
    assert (diff[0, 0, 2] > 1e-4).sum() >= 2
    diff[0, 0, 2] = 0
    assert diff.max() == 0


def test_relative_time_bias_only_where_offset_occurs(golden, small):
    dec, _ = small
    last = SMALL['num_layers'] - 1
    for case in ('train', 'runtime'):
        inp = golden['inputs'][case]
        base = decode(dec, inp)
        tt, tm, ut = inp['trajectory_times'], inp['trajectory_masks'], inp['unknown_times']
        B, G = tm.shape[:2]
        for dt in range(SMALL['rel_pe_length']):
            for layer, head in ((last, 1), (0, 3)):
                with torch.no_grad():
                    old = dec.rel_pos_embeds[layer, dt, head].item()
                    dec.rel_pos_embeds[layer, dt, head] += 2.0
                    out = dec(**inp)
                    dec.rel_pos_embeds[layer, dt, head] = old
                diff = (out - base).abs().amax(-1) > 1e-5  # (B, G, T2, N2)
                # offset dt occurs for an unknown at time u iff an unmasked trajectory token has time u - dt < u
                visible_times = [[set(tt[b, g][~tm[b, g]].tolist()) for g in range(G)] for b in range(B)]
                occurs = torch.tensor([[[[dt > 0 and int(ut[b, g, t, n]) - dt in visible_times[b][g]
                                          for n in range(ut.shape[3])] for t in range(ut.shape[2])]
                                        for g in range(G)] for b in range(B)])
                if layer == last:  # after the last self-attention: exactly the tokens with that offset change
                    assert torch.equal(diff, occurs), (case, dt)
                else:  # layer 0: later self-attention spreads the change within the frame, never across frames
                    assert torch.equal(diff.any(-1), occurs.any(-1)), (case, dt)
        assert not occurs.any() or case == 'train'  # offset 7 never occurs in the runtime case (history of 6)


def test_degenerate_inputs_are_finite(small):
    dec, _ = small

    def inp(T, N, T2, N2, traj_masked=False):
        return dict(trajectory_features=torch.randn(1, 2, T, N, 32),
                    trajectory_id_labels=torch.zeros(1, 2, T, N, dtype=torch.long),
                    trajectory_times=torch.arange(T)[:, None].expand(1, 2, T, N),
                    trajectory_masks=torch.full((1, 2, T, N), traj_masked),
                    unknown_features=torch.randn(1, 2, T2, N2, 32), unknown_times=torch.full((1, 2, T2, N2), T),
                    unknown_masks=torch.zeros(1, 2, T2, N2, dtype=torch.bool))
    for shape, masked in (((3, 2, 1, 4), True), ((3, 0, 1, 4), False), ((0, 0, 1, 4), False), ((3, 2, 1, 0), False)):
        out = decode(dec, inp(*shape, traj_masked=masked))
        assert out.shape == (1, 2, 1, shape[3], 11) and bool(torch.isfinite(out).all())
    # a fully masked trajectory is the same as no trajectory (add_zero_attn: only the zero key is attended to)
    x = inp(3, 2, 1, 4, traj_masked=True)
    empty = {k: (v[:, :, :, :0] if k.startswith('trajectory') else v) for k, v in x.items()}
    assert torch.allclose(decode(dec, x), decode(dec, empty), atol=1e-6)


def test_checkpointing_gives_same_values_and_gradients(golden):
    inp = golden['inputs']['train']
    grads = []
    for with_cp in (False, True):
        dec = rule_init(MOTIPIDDecoder(**SMALL, with_cp=with_cp)).train()
        out = dec(**inp)
        (out * torch.linspace(-1, 1, out.shape[-1])).sum().backward()
        grads.append((out.detach(), dec.rel_pos_embeds.grad.clone(), dec.word_to_embed.weight.grad.clone()))
    for a, b in zip(*grads):
        assert torch.allclose(a, b, atol=1e-6)
    assert grads[0][1].abs().sum() > 0


def test_input_validation(golden, small):
    dec, traj = small
    inp = golden['inputs']['runtime']
    with pytest.raises(ValueError, match=r'unknown_times must lie in \[0, rel_pe_length=8\)'):
        dec(**dict(inp, unknown_times=inp['unknown_times'] + 2))
    with pytest.raises(ValueError, match='rel_pe_length=8'):
        dec(**dict(inp, trajectory_times=inp['trajectory_times'] - 1))
    labels = inp['trajectory_id_labels'].clone()
    labels[~inp['trajectory_masks']] = 11
    with pytest.raises(ValueError, match=r'trajectory_id_labels must lie in \[0, num_id_vocabulary=10\]'):
        dec(**dict(inp, trajectory_id_labels=labels))
    labels = inp['trajectory_id_labels'].masked_fill(inp['trajectory_masks'], -1)  # padding value: fine
    assert torch.equal(decode(dec, inp, trajectory_id_labels=labels), decode(dec, inp))
    with pytest.raises(ValueError, match='unknown_masks must have shape'):
        dec(**dict(inp, unknown_masks=inp['unknown_masks'][..., :2]))
    with pytest.raises(ValueError, match='feature_dim=32'):
        dec(**dict(inp, unknown_features=inp['unknown_features'][..., :16]))
    with pytest.raises(TypeError, match='trajectory_masks must be bool'):
        dec(**dict(inp, trajectory_masks=inp['trajectory_masks'].long()))
    with pytest.raises(TypeError, match='trajectory_times must be an integer'):
        dec(**dict(inp, trajectory_times=inp['trajectory_times'].float()))
    with pytest.raises(ValueError, match='detr_dim=32'):
        traj(torch.zeros(2, 16))
    with pytest.raises(ValueError, match='must equal feature_dim'):
        MOTIPTrajectoryModeling(detr_dim=256, feature_dim=128)
    with pytest.raises(ValueError, match='multiple of head_dim'):
        MOTIPIDDecoder(feature_dim=32, id_dim=32, head_dim=48)


def test_gather_validation():
    torch.manual_seed(0)
    labels = generate_id_labels([torch.tensor([4, 5]), torch.tensor([5])], 10, 2)
    tgt = trajectory_and_unknown(labels, 10, 0.0, 0.0)
    with pytest.raises(ValueError, match=r'frame_features\[0\]\[1\] has 0 rows'):
        gather_clip_features([tgt], [[torch.zeros(2, 4), torch.zeros(0, 4)]])
    with pytest.raises(ValueError, match='expected T=2'):
        gather_clip_features([tgt], [[torch.zeros(2, 4)]])
    out = gather_clip_features([tgt], [[torch.arange(8.).reshape(2, 4), torch.full((1, 4), 9.)]])
    col5 = int((labels.ann_idxs[0, 1] == 0).nonzero()[0, 0])  # the column of identity 5
    assert torch.equal(out['unknown_features'][0, :, 1, col5], torch.full((2, 4), 9.))
    assert torch.equal(out['unknown_features'][0, :, 1, 1 - col5], torch.zeros(2, 4))  # absent: zeros
    assert isinstance(tgt, MOTIPClipTargets)


def test_decoding_against_kept_keys_values_equals_the_forward():
    """The runtime tracker's path: each window token's keys and values computed once (in any batch), the masked
    tokens left out or marked as padding, nn.MultiheadAttention's zero-attention token kept as a slot with relative
    time 0 anywhere in the buffer: the forward's logits and id embeddings within float rounding, on a decoder of
    another size (feature 64, id 32, head 16)."""
    from vastmat.models.trackers.motip_tracker import WindowKeysValues
    torch.manual_seed(3)
    dec = MOTIPIDDecoder(feature_dim=64, id_dim=32, num_layers=3, head_dim=16, num_id_vocabulary=9,
                         rel_pe_length=12).eval()
    with torch.no_grad():
        dec.rel_pos_embeds.normal_()
    T, N, n = 10, 7, 5
    feats, unknown = torch.randn(T, N, 64), torch.randn(n, 64)
    labels = torch.randperm(9)[:N].repeat(T, 1)
    times = torch.arange(T)[:, None].repeat(1, N)
    masks = torch.rand(T, N) < 0.4
    with torch.no_grad():
        logits, embeds = dec(feats[None, None], labels[None, None], times[None, None], masks[None, None],
                             unknown[None, None, None], torch.full((1, 1, 1, n), T),
                             torch.zeros((1, 1, 1, n), dtype=torch.bool), return_id_embeds=True)
        window = WindowKeysValues(3, dec.num_heads, dec.head_dim, torch.device('cpu'), capacity=4)
        for t in range(T):  # frames 1 .. T, observed tokens only; a token of a label evicted later is removed
            seen = torch.nonzero(~masks[t]).flatten()
            window.append(dec.trajectory_keys_values(feats[t, seen], labels[t, seen]), labels[t, seen], t + 1)
        window.append(dec.trajectory_keys_values(feats[0, :2], torch.tensor([0, 0])), torch.tensor([99, 99]), 1)
        window.remove_labels([99])
        assert window.buffer.shape[3] >= window.size > int((~masks).sum()) + 1  # grew from capacity 4
        ours, our_embeds = dec.decode_against_keys_values(unknown, *window.view(T + 1))
    torch.testing.assert_close(ours, logits[0, 0, 0], atol=2e-5, rtol=0)
    torch.testing.assert_close(our_embeds, embeds[0, 0, 0], atol=2e-5, rtol=0)
    window.remove_before(T)  # only the last frame's tokens (and the zero slot) stay
    keys_values, padding, rel_times = window.view(T + 1)
    assert rel_times[~padding].tolist() == [0] + [1] * int((~masks[-1]).sum())
