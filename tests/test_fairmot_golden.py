"""FairMOT training against the official code (ifzhang/FairMOT 4aa6297), one batch (issue 39): the targets built from
the same boxes, every loss term, the uncertainty weights, the gradient of every parameter and the parameters after one
step of the full-size config's optimizer (built by mmengine) equal the official ones; so do the official letterbox,
the mapping of test boxes back to the frame, and a CenterNet COCO checkpoint loaded as the official ``load_model``
loads it (tests/fixtures/fairmot_train_official: how they were made).

The network is the full-size DLA-34 (the official one is fixed size) on four 64x96 images. Two cases:
* ``single``: one process, one mean over the batch (``batch_chunks=1``, ``loss_chunks=1``);
* ``chunks``: the full-size config as it is: the official default of two GPUs under nn.DataParallel (BatchNorm and
  ``MotLoss`` per chunk of two images, the mean of the two losses).
"""
import copy
import os.path as osp

import numpy as np
import pytest
import torch
from mmdet.structures import DetDataSample
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.structures import InstanceData

from conftest import REPO, vastmat_scope
from helpers.fairmot_train_inputs import (BATCH, HEIGHT, LETTERBOX_CASES, NUM_IDENTITIES, WIDTH, fingerprint,
                                          letterbox_images, loss_weights, official_weights, train_batch)

from vastmat.registry import MODELS

FIXTURE = osp.join(REPO, 'tests', 'fixtures', 'fairmot_train_official', 'golden.npz')
CONFIG = osp.join(REPO, 'configs', 'fairmot', 'fairmot_dla34_1xb12-30e_vastmat-p1.py')
# float32 through a 19.8M-parameter network whose deformable convolutions are mmcv's here and torchvision's in the
# official run (same math, different summation order)
RTOL, ATOL = 1e-4, 1e-6
# Gradients: float32 gradients of this randomly weighted DLA-34 on 64x96 images are ill-conditioned (a ReLU or a
# bilinear cell flipped by float32 noise moves an entry of a large cancelling sum): our float32 gradients differ from
# our own float64 ones by up to 3% in the trunk, 0.6% in hm.0. Both sides run the same PyTorch CPU kernels except the
# deformable convolutions, so ours and the official float32 ones agree much better: within GRAD_RTOL of the
# parameter's largest gradient entry (measured: at most 2e-3), with a floor of GRAD_FLOOR times the largest gradient
# of the network for the biases in front of BatchNorm, whose true gradient is 0 (both sides give noise of 1e-7).
GRAD_RTOL, GRAD_FLOOR = 5e-3, 1e-3
LR = 1e-4  # the official and the config's Adam learning rate


@pytest.fixture(scope='module', autouse=True)
def scope():
    vastmat_scope()


@pytest.fixture(scope='module')
def golden():
    with np.load(FIXTURE) as data:
        return {key: data[key] for key in data.files}


def close(actual, expected, what, rtol=RTOL, atol=ATOL):
    torch.testing.assert_close(torch.as_tensor(np.asarray(actual, np.float64)),
                               torch.as_tensor(np.asarray(expected, np.float64)), rtol=rtol, atol=atol,
                               msg=lambda m: f'{what}: {m}')


def our_name(official: str) -> str:
    """An official parameter name (network, or ``loss.*`` of MotLoss) as ours in the tracking model."""
    if official.startswith('loss.'):
        return 'detector.bbox_head.' + official[len('loss.'):]
    if official.split('.', 1)[0] in ('hm', 'wh', 'reg', 'id'):
        return 'detector.bbox_head.' + official
    return 'detector.backbone.' + official.replace('.conv_offset_mask.', '.conv_offset.')


def build(chunks: int | None):
    """Our tracking model from the full-size P1 config (``chunks``: override the per-GPU chunks; None: as the config
    says), with the golden weights, and the config's optimizer wrapper built by mmengine."""
    from vastmat.models.dense_heads import official_fairmot_state_dict
    cfg = Config.fromfile(CONFIG)
    detector = cfg.model.detector
    detector.backbone.init_cfg = None
    detector.bbox_head.num_identities = NUM_IDENTITIES
    if chunks is not None:
        detector.backbone.batch_chunks = detector.bbox_head.loss_chunks = chunks
    model = MODELS.build(cfg.model)
    state = official_fairmot_state_dict(dict(official_weights()))
    state.update({f'bbox_head.{k}': v for k, v in loss_weights().items()})
    result = model.detector.load_state_dict(state, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    model.train()
    return model, build_optim_wrapper(model, cfg.optim_wrapper)


def samples():
    images, annotations = train_batch()
    out = []
    for boxes, identities in annotations:
        sample = DetDataSample(metainfo=dict(batch_input_shape=(HEIGHT, WIDTH), img_shape=(HEIGHT, WIDTH),
                                             pad_shape=(HEIGHT, WIDTH)))
        sample.gt_instances = InstanceData(bboxes=torch.tensor(boxes, dtype=torch.float32),
                                           labels=torch.zeros(len(boxes), dtype=torch.long),
                                           instances_ids=torch.tensor(identities))
        out.append(sample)
    return images, out


def summary(value):
    """As make_golden.py stores a tensor: whole up to 64 entries, else its fingerprint."""
    return value.detach().numpy() if value.numel() <= 64 else fingerprint(value)


def close_summary(value, expected, atol, what):
    """``value`` against its stored summary: entries within ``atol``; a fingerprint's sum, norm and probe (sums over
    all n entries) within ``atol * sqrt(n)``."""
    actual, numel = summary(value), value.numel()
    if numel > 64:
        close(actual[:3], expected[:3], f'{what} (sum, norm, probe)', rtol=0, atol=atol * np.sqrt(numel))
    close(entries(actual, numel), entries(expected, numel), what, rtol=0, atol=atol)


def entries(stored, numel):
    """The entries of a ``numel``-entry tensor in its stored summary (a fingerprint's samples after its sum, norm and
    probe)."""
    return stored if numel <= 64 else stored[3:]


def test_targets_equal_the_official_joint_dataset(golden):
    from vastmat.models.dense_heads import FairMOTHead
    head = FairMOTHead(num_identities=NUM_IDENTITIES)
    _, batch = samples()
    targets = head.get_targets([s.gt_instances for s in batch], (HEIGHT // 4, WIDTH // 4), (HEIGHT, WIDTH))
    slots = targets['ind'].shape[1]
    assert golden['targets/reg_mask'].shape == (BATCH, 500)  # official K slots, the rest zeros
    for key in ('reg_mask', 'ind', 'ids', 'wh', 'reg'):
        official = golden[f'targets/{key}']
        assert not official[:, slots:].any(), key
        if key in ('reg_mask', 'ind', 'ids'):
            np.testing.assert_array_equal(targets[key].numpy(), official[:, :slots], err_msg=key)
        else:
            close(targets[key], official[:, :slots], key, rtol=0, atol=2e-6)  # float32 labels in the official
    close(targets['hm'], golden['targets/hm'], 'hm', rtol=0, atol=1e-6)
    assert golden['targets/reg_mask'].sum() == 10 and (golden['targets/ids'] == -1).sum() == 1


@pytest.mark.parametrize('case', ['single', 'chunks'])
def test_one_training_step_equals_the_official(golden, case):
    model, optim_wrapper = build(1 if case == 'single' else None)
    detector = model.detector
    params = dict(model.named_parameters())
    before = {k: v.detach().clone() for k, v in params.items()}
    images, batch = samples()
    losses = detector.loss(images, batch)
    loss, log_vars = model.parse_losses(losses)
    # every loss term (the mean over the chunks, as the official log) and the total
    chunks = 1 if case == 'single' else 2
    official = {term: np.mean([golden[f'{case}/chunk{c}/{term}'] for c in range(chunks)])
                for term in ('loss', 'hm_loss', 'wh_loss', 'off_loss', 'id_loss')}
    close(loss.item(), golden[f'{case}/loss'], 'loss')
    close(loss.item(), official['loss'], 'loss (mean of the chunks)')
    # ours log the weighted terms (official hm_weight 1, wh_weight 0.1, off_weight 1, id_weight 1)
    for ours, theirs, weight in (('det_hm', 'hm_loss', 1), ('det_wh', 'wh_loss', 0.1), ('det_off', 'off_loss', 1),
                                 ('id_ce', 'id_loss', 1)):
        close(log_vars[ours], weight * official[theirs], ours)
    # the uncertainty weighting of each chunk's terms
    close(log_vars['s_det'], -1.7, 's_det'), close(log_vars['s_id'], -1.2, 's_id')
    optim_wrapper.backward(loss)
    no_grad = {our_name(n) for n in golden[f'{case}/no_grad']}
    assert no_grad == {k for k, v in params.items() if v.grad is None}
    grads = {k[len(f'{case}/grad/'):]: v for k, v in golden.items() if k.startswith(f'{case}/grad/')}
    assert {our_name(n) for n in grads} | no_grad == set(params)
    scales = {name: float(np.abs(entries(value, params[our_name(name)].numel())).max()) for name, value in grads.items()}
    floor = GRAD_FLOOR * max(scales.values())
    for name, expected in grads.items():
        close_summary(params[our_name(name)].grad, expected, GRAD_RTOL * max(scales[name], floor), f'grad {name}')
    optim_wrapper.step()
    for name, expected in ((k[len(f'{case}/step/'):], v) for k, v in golden.items() if k.startswith(f'{case}/step/')):
        ours = our_name(name)
        step = summary(params[ours].detach() - before[ours])
        # Adam's first step is -lr * g / (|g| + eps): lr times the sign of the gradient where |g| >> eps. An entry
        # whose official gradient is below the float32 noise of the gradients may take either sign.
        numel = params[ours].numel()
        if name not in grads:  # no gradient: Adam leaves it, on both sides
            assert not step.any() and not expected.any(), name
            continue
        sure = np.abs(entries(grads[name], numel)) > GRAD_RTOL * max(scales[name], floor)
        close(entries(step, numel)[sure], entries(expected, numel)[sure], f'step {name}', rtol=0, atol=1e-3 * LR)
        if numel > 64 and scales[name] > floor:  # the step's norm (not of noise): lr sqrt(number of entries)
            close(step[1], expected[1], f'step norm {name}', rtol=1e-3, atol=0)
    buffers = dict(model.named_buffers())
    for name in (k[len(f'{case}/buffer/'):] for k in golden if k.startswith(f'{case}/buffer/')):
        close(summary(buffers[our_name(name)]), golden[f'{case}/buffer/{name}'], f'buffer {name}')


def test_optimizer_is_the_official_adam_over_network_and_loss_parameters(golden):
    """train.py: ``Adam(model.parameters(), opt.lr)``; BaseTrainer adds ``MotLoss``'s parameters (classifier, s_det,
    s_id) as a second group with the same defaults: one group of the same hyper-parameters over all of them."""
    model, optim_wrapper = build(None)
    official = eval(str(golden['optimizer']))  # repr of [sorted(group items) without params], one per group
    assert len(official) == 2 and official[0] == official[1]
    assert golden['optimizer_group_sizes'].tolist() == [237, 4]
    groups = optim_wrapper.optimizer.param_groups
    assert len(groups) == 1 and len(groups[0]['params']) == 237 + 4 == len(list(model.parameters()))
    ours = {k: v for k, v in groups[0].items() if k not in ('params', 'initial_lr')}
    assert sorted(ours.items()) == official[0]
    assert not optim_wrapper.clip_grad_kwargs  # no clipping, as the official
