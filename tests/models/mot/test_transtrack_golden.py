"""TransTrack training against the official code, one batch (issue 39): with the same weights (the official naming,
through the converter) on the same batch, with the random shifts and the track / detection choice set alike, the
matcher's assignments, every loss term of every decoder layer, the weighted total, the gradient of every parameter
and one step of the full-size config's optimizer (built by mmengine) equal the official ones
(tests/fixtures/transtrack_train_official: how they were made). Two cases: the step that trains the track decoder
and the step that trains the detection decoder. Also the converter: the converted model's forward equals the official
one, and a full-size official checkpoint loads with no missing or unexpected key.
"""
import ast
import os.path as osp

import numpy as np
import pytest
import torch
from mmdet.structures import DetDataSample
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.structures import InstanceData

from helpers.common import REPO, build_model, npz_arrays, vastmat_scope
from helpers import transtrack_train_inputs as inputs
from helpers.detr_samples import clip

from vastmat.models.mot.transtrack_conversion import official_transtrack_state_dict

FIXTURE = osp.join(inputs.FIXTURE_DIR, 'train_step.npz')
CONFIG = osp.join(REPO, 'configs', 'transtrack', 'transtrack_r50_8xb2-20e_vastmat-p1.py')
CASES = ('track', 'detect')
# official loss name -> ours (mmdet's DeformableDETRHead), for the last layer; layer i < L-1: '_i' -> 'd{i}.'
FIRM_GRAD = 1e-6
LOSS_NAMES = {'loss_ce': 'loss_cls', 'loss_bbox': 'loss_bbox', 'loss_giou': 'loss_iou'}


@pytest.fixture(scope='module', autouse=True)
def scope():
    vastmat_scope()


@pytest.fixture(scope='module')
def golden():
    return npz_arrays(FIXTURE)


def narrow_config():
    """The full-size config's model narrowed as the official run of make_golden.py (helpers: HIDDEN_DIM, ...), no
    dropout, no ImageNet download; everything else (ResNet-50, 4 levels, box refinement, losses, matching) as is."""
    cfg = Config.fromfile(CONFIG)
    d, ffn, heads, points = inputs.HIDDEN_DIM, inputs.FFN_DIM, inputs.NHEADS, inputs.NUM_POINTS
    det = cfg.model.detector
    assert det.official_offset_normalizer  # TransTrack's offsets over (H, W): the official outputs need it
    det.num_queries = inputs.NUM_QUERIES
    det.backbone.init_cfg = None
    det.neck.out_channels = d
    det.encoder.num_layers = inputs.ENC_LAYERS
    det.encoder.layer_cfg = dict(self_attn_cfg=dict(embed_dims=d, num_heads=heads, num_points=points, dropout=0.0,
                                                    batch_first=True),
                                 ffn_cfg=dict(embed_dims=d, feedforward_channels=ffn, ffn_drop=0.0))
    det.decoder.num_layers = inputs.DEC_LAYERS
    det.decoder.layer_cfg = dict(
        self_attn_cfg=dict(embed_dims=d, num_heads=heads, dropout=0.0, batch_first=True),
        cross_attn_cfg=dict(embed_dims=d, num_heads=heads, num_points=points, dropout=0.0, batch_first=True),
        ffn_cfg=dict(embed_dims=d, feedforward_channels=ffn, ffn_drop=0.0))
    det.positional_encoding.num_feats = d // 2
    det.bbox_head.embed_dims = d
    det.test_cfg.max_per_img = inputs.NUM_QUERIES
    return cfg


def build():
    """Our narrow TransTrack with the official weights through the converter (strict), its official-name map, and
    the full-size config's optimizer wrapper built by mmengine."""
    cfg = narrow_config()
    model = build_model(cfg.model, 0)
    official = inputs.official_state()
    converted = official_transtrack_state_dict(official)
    missing, unexpected = model.load_state_dict(converted, strict=False)
    assert not missing and not unexpected, (missing, unexpected)
    aliases = {id(v): k for k, v in official.items() if not k.startswith('transformer.decoder.bbox_embed.')}
    names = {ours: aliases[id(v)] for ours, v in converted.items() if id(v) in aliases}
    # the official named_parameters() meets the box heads first as the decoder's refinement alias
    names = {ours: 'transformer.decoder.' + k if k.startswith('bbox_embed.') else k for ours, k in names.items()}
    return model, names, build_optim_wrapper(model, cfg.optim_wrapper)


def batch():
    images, boxes = inputs.train_batch()
    samples = []
    for (h, w), b in zip(inputs.IMAGE_SIZES, boxes):
        sample = DetDataSample(metainfo=dict(img_shape=(h, w), ori_shape=(h, w), scale_factor=(1.0, 1.0),
                                             batch_input_shape=tuple(inputs.BATCH_SHAPE[2:]),
                                             pad_shape=tuple(inputs.BATCH_SHAPE[2:]), frame_id=0, video_name='v'))
        sample.gt_instances = InstanceData(bboxes=b.clone(), labels=torch.zeros(len(b), dtype=torch.long))
        samples.append(clip([sample]))
    return images[:, None], samples


class Draws:
    """torch.rand / torch.randn return the helper's values, in order, during our training step; the calls are
    recorded (they must be the official ones but the last: ours draws the branch with torch.rand)."""

    def __init__(self, monkeypatch, values):
        self.values, self.calls = [torch.tensor(v, dtype=torch.float32) for v in values], []
        monkeypatch.setattr(torch, 'rand', lambda *size, **kw: self.take('rand', size))
        monkeypatch.setattr(torch, 'randn', lambda *size, **kw: self.take('randn', size))

    def take(self, name, size):
        size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) else tuple(size)
        value = self.values.pop(0)
        self.calls.append((name, size))
        return value.reshape(size)


def close(actual, expected, what, rtol, atol):
    expected = torch.as_tensor(expected).double().reshape(actual.shape)
    torch.testing.assert_close(actual.double(), expected, rtol=rtol, atol=atol, msg=lambda m: f'{what}: {m}')


def assert_step(ours, before, golden, case, name, what):
    """One AdamW step: an element whose official (clipped) gradient is at least FIRM_GRAD moves as the official one
    to 1e-4 of its step plus two float32 roundings of the parameter; below that, Adam's first step
    ``lr * g / (|g| + 1e-8)`` turns the float32 differences of a tiny gradient into visible ones, and the element is
    checked to 2 % of the learning rate. A sketched tensor's sums (its first four entries) to 1e-4 plus 1e-3 of the
    learning rate's random walk over its elements. Parameters without a gradient do not move on either side."""
    official = torch.from_numpy(golden[f'{case}/step/{name}']).double()
    ours = ours.double()
    grad_key = f'{case}/grad/{name}'
    if grad_key not in golden:
        assert not official.any() and not ours.any(), what
        return
    grad = torch.from_numpy(golden[grad_key]).double()
    lr = float(golden[f'lr/{name}'])
    flat = before.detach().flatten().double()
    if before.numel() > inputs.FULL_LIMIT:
        # sums of many steps: the tiny-gradient elements' noise adds up like a random walk
        close(ours[:4], official[:4], f'{what} (sums)', rtol=1e-4, atol=1e-3 * lr * before.numel() ** 0.5)
        ours, official, grad = ours[4:], official[4:], grad[4:]
        flat = flat[inputs.sketch_indices(name, before.numel())]
    ours, official, grad = ours.flatten(), official.flatten(), grad.flatten()
    rounding = 2 * torch.finfo(torch.float32).eps * flat.abs()
    firm = grad.abs() >= FIRM_GRAD
    error = (ours - official).abs()
    bound = torch.where(firm, 1e-4 * official.abs() + rounding + 1e-10, torch.full_like(error, 0.02 * lr))
    assert (error <= bound).all(), (f'{what}: {(error > bound).sum().item()} elements differ, worst '
                                    f'{(error - bound).max().item():.3g} above the bound')


def stored(name, t):
    t = t.detach().float()
    return t if t.numel() <= inputs.FULL_LIMIT else inputs.sketch(name, t)


def test_the_weights_are_the_fixtures():
    """The helper still makes the official weights the fixture was made with (key set and shapes)."""
    shapes = inputs.official_shapes()
    state = inputs.official_state()
    assert {k: list(v.shape) for k, v in state.items()} == shapes and len(shapes) == 419


@pytest.mark.parametrize('case', CASES)
def test_training_step_equals_the_official_one(golden, case, monkeypatch):
    model, names, optim_wrapper = build()
    images, samples = batch()
    assigned = []
    assigner = model.detector.bbox_head.assigner
    assign = assigner.assign
    monkeypatch.setattr(assigner, 'assign', lambda *a, **k: assigned.append(assign(*a, **k)) or assigned[-1])
    model.train()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    draws = Draws(monkeypatch, list(inputs.SHIFT_DRAWS) + [inputs.BRANCH_UNIFORM[case]])
    losses = model.loss(images, samples)
    monkeypatch.undo()
    # the draws in the official order: two randshifts (rand, randn, rand, randn), then the branch
    official_calls = ast.literal_eval(str(golden[f'{case}/draws']))
    assert draws.calls[:-1] == official_calls[:-1] and draws.calls[-1] == ('rand', ())
    assert not draws.values

    # matcher: layer l, image i -> (query, gt) pairs
    bs, layers = len(inputs.IMAGE_SIZES), inputs.DEC_LAYERS
    assert len(assigned) == layers * bs
    for layer in range(layers):
        for i in range(bs):
            gt_inds = assigned[layer * bs + i].gt_inds
            queries = torch.nonzero(gt_inds > 0).flatten()
            ours = np.stack([queries.numpy(), (gt_inds[queries] - 1).numpy()])
            np.testing.assert_array_equal(ours, golden[f'{case}/match/{layer}/{i}'],
                                          f'{case}: matching of layer {layer}, image {i}')

    # every loss term of every layer, weighted as the official weight_dict
    official = {k[len(f'{case}/loss/'):]: v for k, v in golden.items() if k.startswith(f'{case}/loss/')}
    expected = {}
    for name, value in official.items():
        base, _, layer = name.rpartition('_') if name[-1].isdigit() else (name, '', '')
        if base not in LOSS_NAMES:
            continue  # class_error, cardinality_error: logs
        ours = LOSS_NAMES[base] if not layer else f'd{layer}.{LOSS_NAMES[base]}'
        expected[ours] = float(value) * float(golden[f'{case}/weight/{name}'])
    assert sorted(losses) == sorted(expected)
    for name, value in expected.items():
        close(losses[name].detach(), value, f'{case}: {name}', rtol=2e-5, atol=1e-6)
    total, _ = model.parse_losses(losses)
    close(total.detach(), golden[f'{case}/loss'], f'{case}: total loss', rtol=2e-5, atol=1e-6)

    # gradients (clipped to the total norm 0.1 as the official clip_grad_norm_), every parameter
    optim_wrapper.backward(total)
    params = dict(model.named_parameters())
    with_grad = {n for n, p in params.items() if p.grad is not None}
    official_no_grad = set(golden[f'{case}/no_grad'].tolist())
    official_grad_names = {k[len(f'{case}/grad/'):] for k in golden if k.startswith(f'{case}/grad/')}
    assert {names[n] for n in with_grad} == official_grad_names
    # the official parameters without a gradient (frozen stem / layer1, the decoder that did not run) are ours
    # without one; ours has the frozen BN affine values as parameters too (official FrozenBatchNorm2d buffers)
    ours_no_grad = {names[n] for n in params if n not in with_grad}
    assert official_no_grad <= ours_no_grad
    assert all('.bn' in n or '.downsample.1.' in n for n in ours_no_grad - official_no_grad)
    assert not any(params[n].requires_grad for n in params if names[n] in ours_no_grad - official_no_grad)
    norm = torch.linalg.vector_norm(torch.stack([params[n].grad.norm() for n in with_grad]))
    close(norm, golden[f'{case}/grad_norm'], f'{case}: gradient norm', rtol=1e-4, atol=0)
    coef = min(1.0, 0.1 / (float(norm) + 1e-6))
    for n in sorted(with_grad):
        official_grad = torch.from_numpy(golden[f'{case}/grad/{names[n]}'])
        ours = stored(names[n], params[n].grad * coef)
        scale = float(official_grad.abs().max())
        close(ours, official_grad, f'{case}: gradient of {n} ({names[n]})', rtol=1e-4, atol=2e-5 * scale + 1e-10)

    # one step of the config's optimizer (it clips itself)
    optim_wrapper.step()
    for n, p in params.items():
        key = f'{case}/step/{names[n]}'
        if key not in golden:  # frozen BN affine values: official buffers
            assert not p.requires_grad and torch.equal(p.detach(), before[n]), n
            continue
        assert_step(stored(names[n], p.detach() - before[n]), before[n], golden, case, names[n],
                    f'{case}: step of {n}')


def test_optimizer_is_the_official_one(golden):
    """The config's optimizer (mmengine, paramwise custom_keys) gives every parameter the learning rate, weight
    decay and Adam settings of main_track.py's three param_dicts (backbone 2e-5, reference_points /
    sampling_offsets 2e-5, the rest 2e-4; weight decay 1e-4 everywhere; AdamW defaults); clipping at norm 0.1."""
    model, names, optim_wrapper = build()
    optimizer = optim_wrapper.optimizer
    assert type(optimizer) is torch.optim.AdamW
    official_groups = ast.literal_eval(str(golden['optimizer']))
    settings = {k: v for k, v in official_groups[0].items() if k not in ('lr', 'initial_lr')}
    group_of = {id(p): g for g in optimizer.param_groups for p in g['params']}
    official_lr = {k[len('lr/'):]: float(v) for k, v in golden.items() if k.startswith('lr/')}
    trained = {n: p for n, p in model.named_parameters() if p.requires_grad}
    assert sorted(names[n] for n in trained) == sorted(official_lr)  # the same parameters are trained ...
    for n, p in trained.items():  # ... each at the official rate, with the official AdamW settings
        group = group_of[id(p)]
        assert group['lr'] == pytest.approx(official_lr[names[n]], rel=1e-12), n
        assert {k: group[k] for k in settings} == settings, n
    assert sorted({g['lr'] for g in official_groups}) == pytest.approx([2e-5, 2e-4])
    assert optim_wrapper.clip_grad_kwargs == dict(max_norm=0.1, norm_type=2)


@torch.no_grad()
def test_converted_model_forward_equals_the_official_one(golden):
    """The official model in eval mode (its frame fused with itself, the detection decoder) and ours from the
    converted weights: every decoder layer's logits and boxes."""
    model, _, _ = build()
    model.eval()
    images, samples = batch()
    net = model.detector
    feats = net.extract_feat(images[:, 0])
    out = net.forward_fused(feats, feats, [c[0] for c in samples])
    logits, boxes = net.heads(out['detection'])
    close(logits, golden['eval/pred_logits'], 'logits, every layer', rtol=1e-4, atol=2e-5)
    close(boxes, golden['eval/pred_boxes'], 'boxes, every layer', rtol=1e-4, atol=2e-6)


def test_converter_tool_writes_a_plain_checkpoint(tmp_path):
    """tools/model_converters/transtrack_official.py on a file as main_track.py saves it ({'model', 'optimizer',
    'lr_scheduler', 'epoch', 'args'}: a Namespace); the official 20-row class heads keep row 1; a plain Deformable
    DETR file or an unknown key is refused, naming it."""
    import argparse

    from helpers.common import tool
    state = inputs.official_state()
    g = torch.Generator().manual_seed(1)
    for key in [k for k in state if k.startswith('class_embed.')]:
        state[key] = torch.randn(20, *state[key].shape[1:], generator=g)
    source, target = tmp_path / 'crowdhuman_final.pth', tmp_path / 'out' / 'converted.pth'
    torch.save(dict(model=state, optimizer={}, lr_scheduler={}, epoch=149,
                    args=argparse.Namespace(num_queries=inputs.NUM_QUERIES)), source)
    converted = tool('tools/model_converters/transtrack_official.py', source, target)
    saved = torch.load(target, weights_only=True)
    assert saved['meta'] == dict(converted_from='crowdhuman_final.pth', class_index=1, official_epoch=149)
    assert sorted(saved['state_dict']) == sorted(converted)
    head = saved['state_dict']['detector.bbox_head.cls_branches.1.weight']
    assert torch.equal(head, state['class_embed.1.weight'][1:2])
    assert torch.equal(saved['state_dict']['detector.combine.weight'], state['combine.weight'])
    assert torch.equal(saved['state_dict']['detector.decoder_track.layers.1.norms.0.weight'],
                       state['transformer.decoder_track.layers.1.norm2.weight'])
    plain = {k: v for k, v in state.items() if not k.startswith('combine.')}
    with pytest.raises(KeyError, match="no 'combine.weight'"):
        official_transtrack_state_dict(plain)
    with pytest.raises(KeyError, match='transformer.decoder_track.bbox_embed.0.layers.0.weight'):
        official_transtrack_state_dict({**state, 'transformer.decoder_track.bbox_embed.0.layers.0.weight': head})
