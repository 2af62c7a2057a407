"""MOTIP's training step (and its DETR pre-training step) against the OFFICIAL one (MCG-NJU/MOTIP 5cfbcd4, recorded by
tests/fixtures/motip_train_official/make_golden.py; README.md there): from the same weights (a seeded COCO-shaped
Deformable DETR in the official naming, its person row copied into the one-class head by the official
load_detr_pretrain / our converter's package functions; the ID modules by one rule) on the same clip, with the same
random draws (the ID labels' and the gradient frames' generators seeded alike), the frames with DETR gradients and
the DETR passes, the ID targets, every decoder layer's Hungarian assignments and focal / L1 / GIoU terms, the ID
loss, the gradient of every parameter, and one step of the full-size config's optim_wrapper (parameter groups,
weight decay, separate clipping) against the official AdamW built by get_param_groups. The DETR pre-training case
(ONLY_DETR: two single frames, motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py's model and optim_wrapper) checks the
same minus the ID part."""
import copy
import os.path as osp
import random

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper

from helpers.common import REPO, build_model, vastmat_scope
from helpers.detr_official_weights import official_detr_weights, read_shapes
from helpers.detr_samples import clip, frame_sample
from helpers.motip_train_inputs import (FRAME_SEED, FRAMES, HEIGHT, PRETRAIN_FRAMES, TARGET_SEED, WEIGHT_DRAW,
                                        WEIGHT_SEED, WIDTH, clip_images, id_module_weights, narrow_model_cfg,
                                        normalized, record)

# one worker runs the whole module, so each case's module fixtures (a float64 R50 model's training step, 9 to 15 s)
# are made once, not once per worker
pytestmark = pytest.mark.xdist_group('motip_golden_train')

FIXTURES = osp.join(REPO, 'tests', 'fixtures', 'motip_train_official')
# case -> (the full-size config, the official run's record)
CASES = {'clip': ('motip_r50_8xb1-10e_vastmat-p1.py', 'train_step.pt'),
         'pretrain': ('motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py', 'train_step_pretrain.pt')}
# official loss key -> ours: the last decoder layer's terms bare, the first layer's as d0.* (official *_0)
LOSS_KEYS = {'loss_ce': 'loss_cls', 'loss_bbox': 'loss_bbox', 'loss_giou': 'loss_iou'}
# Tolerances (float64 on both sides; measured largest differences in the fixture README). The two codes differ in
# one known way: mmdet's weight_reduce_loss divides each DETR term by avg_factor + float32 eps (avg_factor: the N
# ground-truth boxes of the batch), the official SetCriterion by N, so our DETR terms are the official ones times
# N / (N + eps) (1.3e-8 / 1.7e-8 smaller for N = 9 / 7). The losses are compared with that factor applied.
LOSS_REL = 1e-12  # measured 5e-16
# the gradients and clipped norms are not rescaled: the factor moves a DETR gradient by up to eps / N of its size, the
# sum of squares in a digest by twice that (measured 3.4e-8)
GRAD_REL = 1e-7
# the steps: clipping divides the factor out where a clipping set's gradients all carry it (the pre-training:
# measured 1e-11); in the clip the ID loss reaches the DETR too, and Adam's first step lr g / (|g| + eps) turns
# the remaining relative 1e-8 into up to 3.1e-7 of a tensor's largest step (measured)
STEP_REL = 1e-6


@pytest.fixture(scope='module', autouse=True)
def scope():
    vastmat_scope('vastmat.engine')


def official_names(shapes: dict) -> dict:
    """Official MOTIP parameter name -> ours (the package's DETR mapping; the ID modules keep their names)."""
    from vastmat.models.mot import official_deformable_detr_state_dict
    dummy = {k: torch.empty(v) for k, v in shapes.items()}
    by_id = {id(v): k for k, v in official_deformable_detr_state_dict(dummy).items()}
    names = {f'detr.{k}': f'detector.{by_id[id(v)]}' for k, v in dummy.items() if id(v) in by_id}
    # the official named_parameters() names the box-refinement alias first (transformer before bbox_embed)
    for k in list(names):
        if k.startswith('detr.bbox_embed.'):
            names[k.replace('detr.', 'detr.transformer.decoder.', 1)] = names[k]
    return names


@pytest.fixture(scope='module', params=sorted(CASES))
def case(request):
    return request.param


@pytest.fixture(scope='module')
def golden(case):
    return torch.load(osp.join(FIXTURES, CASES[case][1]), weights_only=True)


def training_batch(case: str) -> tuple:
    """The inputs ``(N, T, C, H, W)`` (float64) and clips of the case: one clip of the frames, or the pre-training's
    single frames as clips of one."""
    images = normalized(clip_images(), torch.float64)
    frames = [frame_sample(t, HEIGHT, WIDTH, boxes=boxes, ids=ids) for t, (boxes, ids) in enumerate(FRAMES)]
    for frame in frames:
        frame.gt_instances.bboxes = frame.gt_instances.bboxes.double()
    if case == 'clip':
        return images[None], [clip(frames)]
    return images[list(PRETRAIN_FRAMES)][:, None], [clip([frames[i]]) for i in PRETRAIN_FRAMES]


@pytest.fixture(scope='module')
def ours(case):
    """Our model from the same weights, one training step on the same batch (draws seeded as the driver's), with the
    full-size config's optim_wrapper; everything the test compares."""
    from vastmat.models.mot import motip as motip_module
    from vastmat.models.mot import official_deformable_detr_state_dict, official_one_class_head
    base = Config.fromfile(osp.join(REPO, 'configs', 'motip', CASES[case][0]))
    model = build_model(narrow_model_cfg(base), seed=0)
    shapes = read_shapes(osp.join(FIXTURES, 'detr_shapes.json'))
    coco = official_detr_weights(shapes, WEIGHT_SEED, draw=WEIGHT_DRAW)
    model.detector.load_state_dict(official_deformable_detr_state_dict(official_one_class_head(coco)), strict=True)
    id_module_weights(model.tracker.trajectory_modeling)
    id_module_weights(model.tracker.id_decoder)
    model.double()  # float64, as the driver's official run (fixture README)
    model.train()

    rec = dict(calls=[], assignments=[], targets=[])
    run_chunks, assign = model._run_detr_in_chunks, model.detector.bbox_head.assigner.assign
    generate, to_targets = motip_module.generate_id_labels, motip_module.trajectory_and_unknown

    def recording_chunks(frames, samples, rows, chunk, checkpointed=False):
        step = chunk if chunk > 0 else len(rows)
        rec['calls'] += [dict(frames=len(rows[i:i + step]), grad=torch.is_grad_enabled(), checkpoint=checkpointed)
                         for i in range(0, len(rows), step)]
        return run_chunks(frames, samples, rows, chunk, checkpointed)

    def recording_assign(**kwargs):
        result = assign(**kwargs)
        positive = torch.nonzero(result.gt_inds > 0).squeeze(1)
        rec['assignments'].append((positive.tolist(), (result.gt_inds[positive] - 1).tolist()))
        return result

    def seeded_generate(*args, **kwargs):  # the official draws happen in its dataset transforms, seeded so
        random.seed(TARGET_SEED)
        torch.manual_seed(TARGET_SEED)
        return generate(*args, **kwargs)

    def recording_targets(*args, **kwargs):
        out = to_targets(*args, **kwargs)
        rec['targets'].append(out)
        return out

    model._run_detr_in_chunks = recording_chunks
    model.detector.bbox_head.assigner.assign = recording_assign
    motip_module.generate_id_labels, motip_module.trajectory_and_unknown = seeded_generate, recording_targets
    try:
        inputs, samples = training_batch(case)
        torch.manual_seed(FRAME_SEED)
        losses = model.loss(inputs, samples)
    finally:
        motip_module.generate_id_labels, motip_module.trajectory_and_unknown = generate, to_targets
    total = sum(v for k, v in losses.items() if 'loss' in k)
    total.backward()
    rec['losses'] = {k: float(v) for k, v in losses.items()}
    rec['total'] = float(total)
    rec['grads'] = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    wrapper = build_optim_wrapper(model, copy.deepcopy(base.optim_wrapper))
    rec['lr'] = {id(p): (g['lr'], g['weight_decay']) for g in wrapper.optimizer.param_groups for p in g['params']}
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    wrapper.step()
    hub = wrapper.message_hub
    parts = ('_detector', '_other') if case == 'clip' else ('',)  # separate sets / one set (the ID part idle)
    rec['clip_norms'] = [hub.get_scalar(f'train/grad_norm{part}').current() for part in parts]
    rec['steps'] = {n: p.detach() - before[n] for n, p in model.named_parameters()}
    rec['params'] = dict(model.named_parameters())
    rec['names'] = official_names(shapes)
    for n, _ in model.tracker.named_parameters():
        rec['names'].setdefault(n, f'tracker.{n}')
    return rec


def test_same_frames_carry_detr_gradients(case, golden, ours):
    """num_train_frames / num_checkpoint_frames = the official DETR_NUM_TRAIN_FRAMES / DETR_NUM_CHECKPOINT_FRAMES:
    the same frames with gradients (the same torch.randperm draw), the same passes (frames, grad mode,
    checkpointing)."""
    assert golden['train_frames'] == ([1, 2] if case == 'clip' else [0])
    key = lambda c: (c['frames'], c['grad'], c['checkpoint'])  # noqa: E731
    assert sorted(map(key, ours['calls'])) == sorted(map(key, golden['detr_calls']))
    with_grad = {n for n, g in ours['grads'].items() if n.startswith('detector.backbone.')}
    assert with_grad  # the backbone learns from the gradient frames only (their features)


def test_id_targets_equal_official(case, golden, ours):
    if case == 'pretrain':  # ONLY_DETR: no ID targets
        assert golden['id_targets'] is None and not ours['targets']
        return
    (targets,) = ours['targets']
    official = golden['id_targets']
    assert torch.equal(targets.trajectory_id_labels, official['trajectory_id_labels'])
    assert torch.equal(targets.trajectory_masks, official['trajectory_id_masks'])
    assert torch.equal(targets.unknown_id_labels, official['unknown_id_labels'])
    assert torch.equal(targets.unknown_masks, official['unknown_id_masks'])


def test_hungarian_assignments_per_frame_and_layer_equal_official(case, golden, ours):
    """mmdet's HungarianAssigner (loss_by_feat: layer 0's frames, then layer 1's; then MOTIP's matching for the
    identity tokens, at layer id_matching_layer = -2) against the official HungarianMatcher (last layer first, then
    the auxiliary layer, whose indices the official criterion returns to prepare_for_motip)."""
    last, aux = golden['matches']
    n = len(last)  # frames in the batch
    got = ours['assignments']
    expected = [*aux, *last] + (list(aux) if case == 'clip' else [])  # the pre-training gathers no tokens
    assert len(got) == len(expected)
    if case == 'clip':
        assert last != aux  # the batch tells the two layers apart
    for mine, official in zip(got, expected):
        assert sorted(zip(*mine)) == sorted(zip(*official))
    assert n == (len(FRAMES) if case == 'clip' else len(PRETRAIN_FRAMES))


def test_detr_and_id_losses_equal_official(case, golden, ours):
    """Every DETR term (both decoder layers, weighted) and the ID loss; the DETR terms times mmdet's
    N / (N + float32 eps) (LOSS_REL above), the total accordingly."""
    official, weights = golden['detr_losses'], golden['weight_dict']
    frames = range(len(FRAMES)) if case == 'clip' else PRETRAIN_FRAMES
    num_boxes = sum(len(FRAMES[i][0]) for i in frames)
    factor = num_boxes / (num_boxes + torch.finfo(torch.float32).eps)
    expected = {}
    for key, name in LOSS_KEYS.items():
        expected[name] = weights[key] * official[key] * factor
        expected[f'd0.{name}'] = weights[f'{key}_0'] * official[f'{key}_0'] * factor
    for name, value in expected.items():
        assert ours['losses'][name] == pytest.approx(value, rel=LOSS_REL, abs=0), name
    if golden['id_loss'] is None:  # the DETR pre-training
        assert 'loss_id' not in ours['losses']
        id_loss = 0.0
    else:
        id_loss = golden['id_loss_weight'] * golden['id_loss']
        assert ours['losses']['loss_id'] == pytest.approx(id_loss, rel=LOSS_REL, abs=0)
    # the official total is the sum of its weighted terms
    assert golden['total_loss'] == pytest.approx(sum(expected.values()) / factor + id_loss, rel=LOSS_REL, abs=0)
    assert ours['total'] == pytest.approx(sum(expected.values()) + id_loss, rel=LOSS_REL, abs=0)


def _close(mine: torch.Tensor, official: torch.Tensor, name: str, rel: float, atol: float) -> None:
    scale = float(official.abs().max())
    assert float((mine.double() - official.double()).abs().max()) <= rel * scale + atol, name


def test_every_gradient_equals_official(golden, ours):
    """The gradient of every official trainable parameter (before clipping), whole or as a digest; parameters the
    official code freezes (stem, stage 1; FrozenBatchNorm2d buffers) get none in ours either."""
    names, grads = ours['names'], ours['grads']
    assert {names[n] for n in golden['grads']} == set(grads)
    for n, official in golden['grads'].items():
        mine = grads[names[n]]
        _close(record(n, mine), official, n, GRAD_REL, 1e-12)


def test_optimizer_step_equals_official(golden, ours):
    """One step of the full-size config's optim_wrapper (AdamW 1e-4, backbone x0.1, sampling_offsets /
    reference_points x0.05, weight decay 5e-4, DETR and ID parts clipped to 0.1 separately; the pre-training's: the
    same, one clipping set) against the official
    AdamW on get_param_groups with the official separate clipping: the same lr and decay per parameter, the same
    change of every parameter."""
    names, params = ours['names'], ours['params']
    for group in golden['groups']:
        for n in group['names']:
            assert ours['lr'][id(params[names[n]])] == pytest.approx((group['lr'], group['weight_decay'])), n
    changed = {names[n] for n in golden['steps']}
    for n, step in ours['steps'].items():
        if n not in changed:
            assert not step.any(), n
    # the norms clipped: DETR's, then the ID part's (the pre-training: one set; the official's ID set is empty, 0)
    official_norms = golden['clip_norms'] if len(ours['clip_norms']) == 2 else golden['clip_norms'][:1]
    assert ours['clip_norms'] == pytest.approx(official_norms, rel=GRAD_REL)
    assert len(ours['clip_norms']) == 2 or golden['clip_norms'][1:] == [0.0]
    # the lr and decay of every parameter are compared exactly above; the steps within STEP_REL (above)
    for n, official in golden['steps'].items():
        _close(record(n, ours['steps'][names[n]]), official, n, STEP_REL, 1e-12)
