"""FairMOT training against the official code (ifzhang/FairMOT 4aa6297), one batch (issue 39): the targets built from
the same boxes, every loss term, the uncertainty weights, the gradient of every parameter and the parameters after one
step of the full-size config's optimizer (built by mmengine) equal the official ones; so do the official letterbox,
the mapping of test boxes back to the frame, and a CenterNet COCO checkpoint loaded as the official ``load_model``
loads it (tests/fixtures/fairmot_train_official: how they were made).

The network is the full-size DLA-34 (the official one is fixed size) on four 64x96 images. Two cases:
* ``single``: one process, one mean over the batch (``batch_chunks=1``, ``loss_chunks=1``);
* ``chunks``: the full-size config as it is: the official default of two GPUs under nn.DataParallel (BatchNorm and
  ``MotLoss`` per chunk of two images, the mean of the two losses).
The training step runs in float64 on both sides (the fixture's official run and ours; the weights drawn in float64,
``official_weights(float64_draws=True)``): in float32, kernel rounding, which differs between CPUs, decides the
gradients of this network.
"""
import contextlib
import copy
import os.path as osp
import random
import re

import numpy as np
import pytest
import torch
from mmdet.structures import DetDataSample
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.structures import InstanceData

from helpers.common import REPO, npz_arrays, vastmat_scope
from helpers.fairmot_train_inputs import (AUGMENT_LABELS, AUGMENT_SEEDS, BATCH, HEIGHT, LETTERBOX_CASES,
                                          LETTERBOX_LABELS, NUM_IDENTITIES, WIDTH, augment_image,
                                          fingerprint, letterbox_images, loss_weights, official_weights,
                                          train_batch)

from vastmat.registry import MODELS

FIXTURE = osp.join(REPO, 'tests', 'fixtures', 'fairmot_train_official', 'golden.npz')
CONFIG = osp.join(REPO, 'configs', 'fairmot', 'fairmot_dla34_1xb12-30e_vastmat-p1.py')
# The training step in float64. Float32 gradients of this randomly weighted DLA-34 on 64x96 images are ill-conditioned
# (a ReLU or a bilinear cell flipped by rounding moves an entry of a large cancelling sum: our float32 and float64
# gradients differ by up to 6% of a parameter's largest entry, and float32 rounding differs between CPUs' kernels),
# so both sides run in float64. What stays float32: the targets (float32 in both codes; the official computes them in
# float32 from float32 label rows, ours in float64: up to 2e-6 px apart), the official RegL1Loss's denominator
# `mask.sum() + 1e-4` (float32: 4.1e-8 relative, which scales the gradients of reg.* by 4.7e-8) and our focal loss's
# (1 - target)^4 (mmdet computes it in the targets' float32: 1.8e-9 of any gradient against float64 targets).
# Measured, ours against the fixture, alike under ATEN_CPU_CAPABILITY default / avx2 / avx512 and
# ONEDNN_MAX_CPU_ISA=AVX2: loss terms within 3.3e-7 relative (det_off; LOSS_RTOL 6x that), gradients within 7.1e-8 of
# each parameter's largest entry (GRAD_RTOL 14x), BatchNorm buffers within 6e-15 of the tensor's largest entry.
LOSS_RTOL, GRAD_RTOL, BUFFER_RTOL = 2e-6, 1e-6, 1e-10
# The biases of the 16 deformable convolutions, each followed by BatchNorm in training mode, have the true gradient 0;
# float64 gives noise of at most 7e-17 of the network's largest gradient entry on both sides. Bound: ZERO_GRAD of it
# on each side (the smallest real gradient scale, of any other parameter, is 2e-4 of it).
ZERO_GRAD = 1e-13
ZERO_GRAD_PARAMS = re.compile(r'^(dla_up\.ida_\d|ida_up)\.(proj|node)_\d\.conv\.bias$')  # official names
LR, EPS = 1e-4, 1e-8  # the official and the config's Adam learning rate, and Adam's eps (the default of both)
# Adam's first step is -lr g / (|g| + eps): a gradient entry within tol of the official g moves it by at most
# lr tol eps / (max(|g| - tol, 0) + eps)^2. Beyond that bound: the float64 rounding of "parameter after minus before"
# (measured 1.4e-12 lr).
STEP_ATOL = 1e-9 * LR


@pytest.fixture(scope='module', autouse=True)
def scope():
    vastmat_scope()


@pytest.fixture(scope='module')
def golden():
    return npz_arrays(FIXTURE)


def close(actual, expected, what, rtol, atol):
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


def build(chunks: int | None, weights: dict | None = None, double: bool = False):
    """Our tracking model from the full-size P1 config (``chunks``: override the per-GPU chunks; None: as the config
    says), with the golden weights (``weights`` in the official names, default ``official_weights()``; ``double``:
    then converted to float64), and the config's optimizer wrapper built by mmengine."""
    from vastmat.models.dense_heads import official_fairmot_state_dict
    cfg = Config.fromfile(CONFIG)
    detector = cfg.model.detector
    detector.backbone.init_cfg = None
    detector.bbox_head.num_identities = NUM_IDENTITIES
    if chunks is not None:
        detector.backbone.batch_chunks = detector.bbox_head.loss_chunks = chunks
    model = MODELS.build(cfg.model)
    state = official_fairmot_state_dict(dict(official_weights() if weights is None else weights))
    state.update({f'bbox_head.{k}': v for k, v in loss_weights().items()})
    result = model.detector.load_state_dict(state, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    if double:
        model.double()
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


@contextlib.contextmanager
def mmcv_cell_flips(model):
    """Counts, per call of the model's deformable convolutions, the float64 sampling coordinates whose bilinear cell
    mmcv's CPU kernel (mmcv 2.1 ``modulated_deform_conv.cpp``) does not take from the coordinate: it takes the cell's
    corner with ``floorf``, which rounds a double to float32 first, so a coordinate within float32 rounding below an
    integer gets the next cell and its offset gradient that cell's slope (a discrete change). torchvision's
    ``deform_conv2d``, in the official run, uses ``floor``. The golden inputs have none (the nearest coordinate 5
    float32 half-ulps from its integer); a change of them may."""
    from mmcv.ops import ModulatedDeformConv2dPack
    counts = []

    def count(module, args):
        with torch.no_grad():
            o1, o2, _ = torch.chunk(module.conv_offset(args[0]), 3, dim=1)
        offset = torch.cat((o1, o2), dim=1)
        n, _, height, width = offset.shape
        kh, kw = module.kernel_size
        offset = offset.view(n, kh * kw, 2, height, width)  # per kernel tap (dy, dx): DCNv2's layout
        tap_y = torch.arange(kh, dtype=offset.dtype).repeat_interleave(kw).view(-1, 1, 1)
        tap_x = torch.arange(kw, dtype=offset.dtype).repeat(kh).view(-1, 1, 1)
        y = (torch.arange(height, dtype=offset.dtype).view(-1, 1) * module.stride[0] - module.padding[0]
             + tap_y * module.dilation[0] + offset[:, :, 0])
        x = (torch.arange(width, dtype=offset.dtype) * module.stride[1] - module.padding[1]
             + tap_x * module.dilation[1] + offset[:, :, 1])
        counts.append(sum(int((c.float().double().floor() != c.floor()).sum()) for c in (y, x)))

    handles = [m.register_forward_pre_hook(count) for m in model.modules()
               if isinstance(m, ModulatedDeformConv2dPack)]
    try:
        yield counts
    finally:
        for handle in handles:
            handle.remove()


@pytest.mark.parametrize('case', ['single', 'chunks'])
def test_one_training_step_equals_the_official(golden, case):
    """One iteration in float64 (the fixture's official run too): loss terms, uncertainty weights, the gradient of
    every parameter, the Adam step of every parameter, the BatchNorm running statistics."""
    model, optim_wrapper = build(1 if case == 'single' else None, official_weights(float64_draws=True), double=True)
    detector = model.detector
    params = dict(model.named_parameters())
    assert all(v.dtype == torch.float64 for v in params.values())
    before = {k: v.detach().clone() for k, v in params.items()}
    images, batch = samples()
    with mmcv_cell_flips(model) as flips:
        losses = detector.loss(images.double(), batch)
    assert len(flips) == 16 * (1 if case == 'single' else 2) and not any(flips), \
        f'sampling coordinates in mmcv\'s float32 floor window per deformable convolution call: {flips}'
    loss, log_vars = model.parse_losses(losses)
    # every loss term (the mean over the chunks, as the official log) and the total
    chunks = 1 if case == 'single' else 2
    official = {term: np.mean([golden[f'{case}/chunk{c}/{term}'] for c in range(chunks)])
                for term in ('loss', 'hm_loss', 'wh_loss', 'off_loss', 'id_loss')}
    close(loss.item(), golden[f'{case}/loss'], 'loss', rtol=LOSS_RTOL, atol=0)
    close(loss.item(), official['loss'], 'loss (mean of the chunks)', rtol=LOSS_RTOL, atol=0)
    # ours log the weighted terms (official hm_weight 1, wh_weight 0.1, off_weight 1, id_weight 1)
    for ours, theirs, weight in (('det_hm', 'hm_loss', 1), ('det_wh', 'wh_loss', 0.1), ('det_off', 'off_loss', 1),
                                 ('id_ce', 'id_loss', 1)):
        close(log_vars[ours], weight * official[theirs], ours, rtol=LOSS_RTOL, atol=0)
    # the uncertainty weighting of each chunk's terms
    for name in ('s_det', 's_id'):
        close(log_vars[name], loss_weights()[name].item(), name, rtol=0, atol=0)
    optim_wrapper.backward(loss)
    no_grad = {our_name(n) for n in golden[f'{case}/no_grad']}
    assert no_grad == {k for k, v in params.items() if v.grad is None}
    grads = {k[len(f'{case}/grad/'):]: v for k, v in golden.items() if k.startswith(f'{case}/grad/')}
    assert {our_name(n) for n in grads} | no_grad == set(params)
    # each official gradient's largest entry (a fingerprint's norm bounds its entries)
    scales = {name: float(np.abs(entries(value, params[our_name(name)].numel())).max())
              for name, value in grads.items()}
    largest = max(scales.values())
    bounds = {name: float(value[1] if params[our_name(name)].numel() > 64 else np.abs(value).max())
              for name, value in grads.items()}
    zero = {name for name in grads if bounds[name] <= ZERO_GRAD * largest}
    assert zero == {name for name in grads if ZERO_GRAD_PARAMS.match(name)} and len(zero) == 16, sorted(zero)
    tolerance = {name: ZERO_GRAD * largest if name in zero else GRAD_RTOL * scales[name] for name in grads}
    for name, expected in grads.items():
        grad = params[our_name(name)].grad
        if name in zero:  # noise around the true 0 on both sides
            assert float(grad.abs().max()) <= tolerance[name], f'grad {name}: {float(grad.abs().max())}'
        else:
            close_summary(grad, expected, tolerance[name], f'grad {name}')
    optim_wrapper.step()
    for name, expected in ((k[len(f'{case}/step/'):], v) for k, v in golden.items() if k.startswith(f'{case}/step/')):
        ours = our_name(name)
        step = summary(params[ours].detach() - before[ours])
        numel = params[ours].numel()
        if name not in grads:  # no gradient: Adam leaves it, on both sides
            assert not step.any() and not expected.any(), name
            continue
        tol, g = tolerance[name], np.abs(entries(grads[name], numel))
        allowed = LR * tol * EPS / (np.maximum(g - tol, 0) + EPS) ** 2 + STEP_ATOL
        difference = np.abs(entries(step, numel) - entries(expected, numel))
        assert (difference <= allowed).all(), \
            f'step {name}: {difference.max() / LR:.3g} lr apart, allowed {allowed[difference.argmax()] / LR:.3g} lr'
        if numel > 64 and name not in zero:  # the step's norm (about lr sqrt(number of entries)); measured 3e-7
            close(step[1], expected[1], f'step norm {name}', rtol=1e-5, atol=0)
    buffers = dict(model.named_buffers())
    for name in (k[len(f'{case}/buffer/'):] for k in golden if k.startswith(f'{case}/buffer/')):
        buffer, expected = buffers[our_name(name)], golden[f'{case}/buffer/{name}']
        close_summary(buffer, expected, BUFFER_RTOL * float(np.abs(entries(expected, buffer.numel())).max()),
                      f'buffer {name}')


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


def test_data_parallel_chunk_sizes_are_the_official_opts():
    from vastmat.models.backbones.dla import data_parallel_chunk_sizes
    assert data_parallel_chunk_sizes(12, 2) == [6, 6]  # the official default: batch 12 on --gpus 2,3
    assert data_parallel_chunk_sizes(12, 1) == [12]
    assert data_parallel_chunk_sizes(7, 3) == [2, 3, 2]  # master 7 // 3, the rest 5 spread: 3, 2
    assert data_parallel_chunk_sizes(1, 2) == [1]  # an empty chunk is left out
    with pytest.raises(ValueError, match='chunks'):
        data_parallel_chunk_sizes(4, 0)


@pytest.mark.parametrize('index', range(len(LETTERBOX_CASES)))
def test_letterbox_pads_centred_as_the_official(golden, index):
    """FairMOTLetterbox equals the official jde.py letterbox: pixels (INTER_AREA, 127.5 rounded by OpenCV, the odd
    pixel of padding after the image), ratio and pads; boxes become box * ratio + (dw, dh) as get_data's labels."""
    from mmdet.structures.bbox import HorizontalBoxes

    from vastmat.registry import TRANSFORMS
    height, width = golden[f'letterbox/{index}/size']
    image = letterbox_images()[index]
    boxes = np.array([[1.5, 2.0, 10.25, 20.0], [0.0, 0.0, image.shape[1], image.shape[0]]], np.float32)
    transform = TRANSFORMS.build(dict(type='FairMOTLetterbox', width=int(width), height=int(height)))
    out = transform(dict(img=image.copy(), img_shape=image.shape[:2], gt_bboxes=HorizontalBoxes(boxes.copy())))
    np.testing.assert_array_equal(out['img'], golden[f'letterbox/{index}/out'])
    ratio, dw, dh = golden[f'letterbox/{index}/ratio_dw_dh']
    assert out['img_shape'] == (height, width) and out['scale_factor'] == (ratio, ratio)
    assert out['letterbox_pad'] == (dw, dh)
    close(out['gt_bboxes'].tensor, boxes * ratio + np.array([dw, dh, dw, dh]), 'boxes', rtol=0, atol=1e-5)
    plain = transform(dict(img=image.copy(), img_shape=image.shape[:2], gt_bboxes=boxes.copy()))
    close(plain['gt_bboxes'], out['gt_bboxes'].tensor, 'numpy boxes', rtol=0, atol=1e-5)


@pytest.mark.parametrize('index', range(len(LETTERBOX_CASES)))
def test_letterbox_of_a_training_image_and_its_labels_as_the_official_get_data(golden, index):
    """A training image and its label file through the official JointDataset.get_data (no augmentation): the RGB
    letterboxed image and the labels normalised by the letterboxed size, against FairMOTLetterbox on the same image
    and the boxes of the same labels."""
    from vastmat.registry import TRANSFORMS
    height, width = golden[f'letterbox/{index}/size']
    image = letterbox_images()[index]
    h, w = image.shape[:2]
    boxes = labels_to_boxes(LETTERBOX_LABELS, h, w)
    out = TRANSFORMS.build(dict(type='FairMOTLetterbox', width=int(width), height=int(height)))(
        dict(img=image.copy(), img_shape=(h, w), gt_bboxes=boxes))
    np.testing.assert_array_equal(out['img'][:, :, ::-1], golden[f'get_data/{index}/img'])
    x1, y1, x2, y2 = out['gt_bboxes'].astype(np.float64).T
    normalised = np.stack([(x1 + x2) / 2 / width, (y1 + y2) / 2 / height, (x2 - x1) / width, (y2 - y1) / height], 1)
    close(normalised, golden[f'get_data/{index}/labels'][:, 2:], 'labels', rtol=0, atol=1e-6)


def labels_to_boxes(labels: np.ndarray, height: int, width: int) -> np.ndarray:
    """Label rows (class, identity, cx, cy, w, h normalised) as x1 y1 x2 y2 pixels of a ``height x width`` image."""
    cx, cy, w, h = (labels[:, 2:].astype(np.float64) * [width, height, width, height]).T
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)


@pytest.mark.parametrize('seed', AUGMENT_SEEDS)
def test_training_augmentation_equals_the_official_get_data(golden, seed):
    """The full-size config's augmentation (FairMOTHSVAug, FairMOTLetterbox, FairMOTRandomAffine, then the flip)
    against the official JointDataset.get_data(augment=True) after the same random.seed: the RGB image pixel for
    pixel, the surviving boxes and identities. Both draw from Python's random in the official order; the flip is
    drawn as the official (random.random() > 0.5) because mmcv's RandomFlip draws from numpy."""
    from mmdet.structures.bbox import HorizontalBoxes

    from vastmat.registry import TRANSFORMS
    cfg = Config.fromfile(CONFIG)
    steps = [dict(t, width=WIDTH, height=HEIGHT) if t['type'] == 'FairMOTLetterbox' else t
             for t in cfg.train_pipeline[1]['transforms'] if t['type'].startswith('FairMOT')]
    assert [t['type'] for t in steps] == ['FairMOTHSVAug', 'FairMOTLetterbox', 'FairMOTRandomAffine']
    assert cfg.train_pipeline[1]['transforms'][-1] == dict(type='RandomFlip', prob=0.5)
    image = augment_image()
    results = dict(img=image, img_shape=image.shape[:2],
                   gt_bboxes=HorizontalBoxes(labels_to_boxes(AUGMENT_LABELS, *image.shape[:2]).astype(np.float32)),
                   gt_bboxes_labels=np.zeros(len(AUGMENT_LABELS), np.int64),
                   gt_ignore_flags=np.zeros(len(AUGMENT_LABELS), bool),
                   gt_instances_ids=AUGMENT_LABELS[:, 1].astype(np.int64))
    random.seed(seed)
    for step in steps:
        results = TRANSFORMS.build(step)(results)
    if random.random() > 0.5:  # the official flip draw
        results = TRANSFORMS.build(dict(type='RandomFlip', prob=1.0))(results)
    official = golden[f'augment/{seed}/labels']
    np.testing.assert_array_equal(results['img'][:, :, ::-1], golden[f'augment/{seed}/img'])
    np.testing.assert_array_equal(results['gt_instances_ids'], official[:, 1].astype(np.int64))
    close(results['gt_bboxes'].tensor, labels_to_boxes(official, HEIGHT, WIDTH), 'boxes', rtol=0, atol=2e-4)


def test_test_boxes_map_back_to_the_frame_as_the_official_tracker(golden):
    """Boxes of a letterboxed frame map back about the centres (JDETracker.update's c, s; ctdet_post_process), in
    the head's decoding when the meta has letterbox_pad."""
    from vastmat.models.dense_heads import FairMOTHead, letterbox_to_frame
    height, width, inp_height, inp_width = golden['post/frame_input'].tolist()
    dets = torch.from_numpy(golden['post/dets'][:, :4].astype(np.float64))
    mapped = letterbox_to_frame(dets * 4, (inp_height, inp_width), (height, width))
    close(mapped, golden['post/boxes'][:, :4], 'mapped boxes', rtol=0, atol=1e-4)
    # the head's decoding: one peak at (x 3, y 2) of the 8 x 12 map, offset (0.25, 0.5), sizes 1, 2, 3, 4 (ltrb)
    head = FairMOTHead(in_channels=8, head_conv=8, reid_dim=4, num_identities=None)
    hm = torch.full((1, 1, inp_height // 4, inp_width // 4), -10.0)
    hm[0, 0, 2, 3] = 5.0
    wh = torch.tensor([1.0, 2.0, 3.0, 4.0]).view(1, 4, 1, 1).expand(1, 4, *hm.shape[-2:])
    reg = torch.tensor([0.25, 0.5]).view(1, 2, 1, 1).expand(1, 2, *hm.shape[-2:])
    emb = torch.ones(1, 4, *hm.shape[-2:])
    meta = dict(img_shape=(inp_height, inp_width), ori_shape=(height, width), batch_input_shape=(inp_height, inp_width),
                scale_factor=(0.5, 0.5), letterbox_pad=(1.0, 1.0))
    result = head.predict_by_feat([hm], [wh], [reg], [emb], batch_img_metas=[meta], rescale=True)[0]
    expected = letterbox_to_frame(torch.tensor([[2.25, 0.5, 6.25, 6.5]], dtype=torch.float64) * 4,
                                  (inp_height, inp_width), (height, width))
    close(result.bboxes, expected, 'decoded boxes', rtol=0, atol=1e-4)


def test_centernet_checkpoint_converts_and_forwards_as_the_official(golden, tmp_path):
    """A CenterNet COCO checkpoint (official names, 80 classes, 2-channel wh, no id head) through
    tools/model_converters/centernet_official.py, loaded as a config's load_from loads it (non-strict): the same
    tensors skipped as the official load_model (its messages), and the eval forward of the loaded parts equal."""
    from mmengine.runner import load_checkpoint

    from helpers.common import tool
    source, target = tmp_path / 'ctdet_coco_dla_2x.pth', tmp_path / 'converted.pth'
    weights = official_weights(centernet=True)
    torch.save({'epoch': 230, 'state_dict': {f'module.{k}': v for k, v in weights.items()}}, source)
    converted = tool('tools/model_converters/centernet_official.py', source, target)
    checkpoint = torch.load(target, weights_only=True)
    assert checkpoint['meta']['official_epoch'] == 230
    messages = [m.split(',')[0].rstrip('.') for m in checkpoint['meta']['load_messages']]
    assert messages == golden['centernet/messages'].tolist()
    assert len(converted) == len(weights) - 4  # hm.2 and wh.2 skipped
    cfg = Config.fromfile(CONFIG)
    cfg.model.detector.backbone.init_cfg = None
    model = MODELS.build(cfg.model)
    initial = copy.deepcopy(model.detector.bbox_head.state_dict())
    load_checkpoint(model, str(target), map_location='cpu', strict=False)
    head = model.detector.bbox_head
    for name in ('hm.2.weight', 'hm.2.bias', 'wh.2.weight', 'wh.2.bias', 'id.0.weight', 'id.2.bias'):
        assert torch.equal(head.state_dict()[name], initial[name]), name  # the network's own initialisation
    assert torch.equal(head.reg[2].weight, weights['reg.2.weight'])
    model.eval()
    images, _ = train_batch()
    with torch.no_grad():
        features = model.detector.extract_feat(images[:1])[0]
        close(fingerprint(features, samples=256), golden['centernet/features'], 'features', rtol=1e-4, atol=1e-5)
        close(head.reg(features), golden['centernet/reg'], 'reg', rtol=1e-4, atol=1e-5)
        for name in ('hm', 'wh'):  # the loaded hidden layer of the skipped heads (id.* is no one's: initialised)
            close(fingerprint(getattr(head, name)[:2](features)), golden[f'centernet/{name}_hidden'], name,
                  rtol=1e-4, atol=1e-4)


def test_schedule_batch_and_chunks_are_the_official_defaults(golden):
    """The full-size config's schedule, batch and per-GPU chunks against the official opts.py defaults (the official
    mix_dla34.sh run adds only --load_model ../models/ctdet_coco_dla_2x.pth: load_from)."""
    official = eval(str(golden['official_defaults']))
    cfg = Config.fromfile(CONFIG)
    assert cfg.optim_wrapper.optimizer == dict(type='Adam', lr=official['lr'])
    assert cfg.train_cfg.max_epochs == official['num_epochs']
    assert cfg.param_scheduler == [dict(type='MultiStepLR', by_epoch=True, milestones=official['lr_step'], gamma=0.1)]
    loader = cfg.train_dataloader
    assert loader.batch_size == official['batch_size'] and loader.drop_last is True  # train.py: drop_last=True
    chunks = len(official['gpus'])
    assert cfg.model.detector.backbone.batch_chunks == cfg.model.detector.bbox_head.loss_chunks == chunks
    from vastmat.models.backbones.dla import data_parallel_chunk_sizes
    assert data_parallel_chunk_sizes(loader.batch_size, chunks) == official['chunk_sizes']
    head = cfg.model.detector.bbox_head
    assert (head.reid_dim, head.head_conv, head.ltrb, head.max_objs, head.multi_loss) == (
        official['reid_dim'], official['head_conv'], official['ltrb'], official['K'], official['multi_loss'])
    assert (head.loss_wh.loss_weight, head.loss_offset.loss_weight, head.loss_hm.loss_weight,
            head.loss_id.loss_weight) == (official['wh_weight'], official['off_weight'], official['hm_weight'],
                                          official['id_weight'])
    assert cfg.load_from == 'checkpoints/fairmot_ctdet_coco_dla_2x_vastmat.pth'
    assert [t['type'] for t in cfg.test_pipeline[0]['transforms']] == ['LoadImageFromFile', 'FairMOTLetterbox']
    from vastmat.datasets.transforms import PackVastMATInputs
    packer = PackVastMATInputs(**{k: v for k, v in cfg.test_pipeline[-1].items() if k != 'type'})
    assert 'letterbox_pad' in packer.meta_keys  # packed for the head's mapping back
