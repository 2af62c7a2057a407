"""TransTrack: the network on mmdet's Deformable DETR (the official parameter count, a full-size forward pass), the
track queries built from the previous frame, the training recipe (random shift, track / detection decoder, real
pairs), and the tiny config trained, resumed and tracked end to end. The association (TransTrackTracker) has its own
tests (test_transtrack_tracker.py)."""
import copy
import glob
import json
import math
import os.path as osp

import numpy as np
import pytest
import torch
from mmengine.config import Config

from helpers.common import (REPO, build_model, set_aside_logs, tool, uninitialised_memory_filled_with_nan,
                            vastmat_scope, video_data_root_options)
from helpers.detr_samples import clip, frame_sample

CONFIGS = osp.join(REPO, 'configs', 'transtrack')
P1 = osp.join(CONFIGS, 'transtrack_r50_8xb2-20e_vastmat-p1.py')
TINY = osp.join(CONFIGS, 'transtrack_tiny_vastmat-demo.py')

# The official network's parameter count: PeizeSun/TransTrack (HEAD 91cfaa7) models/deformable_detrtrack_train.py
# and _test.py built by their build(args) with main_track.py's defaults and track_exps' flags (--with_box_refine
# --num_queries 500), instantiated outside the project with the compiled MSDeformAttn replaced by mmcv's
# MultiScaleDeformableAttention (the same four Linear layers) and torchvision's resnet50 without downloading weights:
#   backbone (ResNet-50 convolutions; FrozenBatchNorm2d holds its 53,120 affine values as buffers) 23,454,912
#   input_proj (3 x (1x1 conv + GN), 3x3 stride-2 conv + GN)                                          5,639,168
#   encoder 6 x 756,864 = 4,541,184; decoder 6 x 1,020,544 = 6,123,264; decoder_track the same 6,123,264
#   bbox_embed (6 x 3-layer MLP) 795,672; class_embed 6 x (256 * 20 + 20) = 30,840; query_embed 500 x 512 = 256,000
#   level_embed 1,024; reference_points 514; combine (1x1, 512 -> 256) 131,328
#   total 47,097,170 (main_track.py's n_parameters, requires_grad only: 46,874,770) with the official 20 logits;
#   47,067,872 with one class (class_embed 6 x 257).
# mmdet's modules differ in one place: ResNet's BN affine values are parameters (+53,120, frozen); ChannelMapper's
# convolutions have the official bias before GN (bias=True in the base config): 47,067,872 + 53,120 = 47,120,992.
OFFICIAL_PARAMETERS_ONE_CLASS = 47_067_872
EXPECTED_PARAMETERS = OFFICIAL_PARAMETERS_ONE_CLASS + 53_120


@pytest.fixture(scope='module', autouse=True)
def scope():
    vastmat_scope()


def build(cfg, seed=0):
    return build_model(cfg, seed)


@pytest.fixture(scope='module')
def tiny():
    """The tiny config's TransTrack, initialised (seed 0)."""
    model = build(Config.fromfile(TINY).model)
    model.init_weights()
    return model


# ------------------------------------------------------------------------------------------- full-size network
def test_full_size_model_has_the_official_parameter_count_and_runs():
    cfg = Config.fromfile(P1)
    cfg.model.detector.backbone.init_cfg = None  # no ImageNet download
    torch.manual_seed(0)  # PyTorch's default initialisation, seeded (the official one gives zero box deltas)
    model = build(cfg.model)
    net = model.detector
    count = sum(p.numel() for p in model.parameters())
    assert count == EXPECTED_PARAMETERS == 47_120_992
    assert abs(count - OFFICIAL_PARAMETERS_ONE_CLASS) / OFFICIAL_PARAMETERS_ONE_CLASS < 0.01
    size = {name: sum(p.numel() for p in getattr(net, name).parameters())
            for name in ('decoder', 'decoder_track', 'encoder', 'combine', 'bbox_head')}
    assert size['decoder'] == size['decoder_track'] == 6 * 1_020_544
    assert size['encoder'] == 6 * 756_864 and size['combine'] == 512 * 256 + 256
    assert size['bbox_head'] == 795_672 + 6 * 257  # per-layer (refinement) box MLPs and class logits
    assert tuple(net.query_embedding.weight.shape) == (500, 512)
    assert net.with_box_refine and not net.as_two_stage and not net.query_pos_in_decoder
    assert model.previous_frame == 'shift' and model.max_shift == 100 and model.track_prob == 0.5
    assert (model.tracker.track_thresh, model.tracker.min_similarity, model.tracker.max_age) == (0.4, 0.4, 11)

    # two frames at 64 x 96 on the CPU: the second one runs the track decoder
    model.eval()
    image = torch.randn(1, 3, 64, 96, generator=torch.Generator().manual_seed(0))
    model.start_video()
    dets, extra = model._detect(image, frame_sample(0, 64, 96))
    assert len(dets) == len(extra['tracking']) == 500
    np.testing.assert_array_equal(extra['tracking'].bboxes, dets.bboxes)  # first frame: tracking = detections
    dets2, extra2 = model._detect(image, frame_sample(1, 64, 96))
    assert len(dets2) == len(extra2['tracking']) == 500
    assert np.isfinite(extra2['tracking'].bboxes).all() and (dets2.scores > 0).all() and (dets2.scores < 1).all()
    assert not np.array_equal(extra2['tracking'].bboxes, dets2.bboxes)

    # an official full-size checkpoint (crowdhuman_final.pth's keys and shapes: 20-row class heads, 500 queries,
    # input projections with a bias) converts and loads with no missing or unexpected key
    from helpers.transtrack_train_inputs import SHAPES
    from vastmat.models.mot.transtrack_conversion import official_transtrack_state_dict
    with open(SHAPES) as f:
        shapes = json.load(f)['full']
    assert shapes['class_embed.0.weight'] == [20, 256] and shapes['input_proj.0.0.bias'] == [256]
    converted = official_transtrack_state_dict({k: torch.zeros(s) for k, s in shapes.items()})
    assert model.load_state_dict(converted, strict=True)
    assert len(converted) == len(model.state_dict())


def test_a_model_without_init_weights_reads_no_uninitialised_memory():
    """mmdet's DeformableDETR creates level_embed uninitialised (torch.Tensor) until init_weights(); a model run
    without init_weights or a checkpoint read garbage, occasionally NaN (seen once in CI). With PyTorch filling
    uninitialised memory with NaN, the built model's outputs are finite."""
    with uninitialised_memory_filled_with_nan():
        model = build(Config.fromfile(TINY).model)
        model.eval()
        model.start_video()
        image = torch.randn(1, 3, 64, 96, generator=torch.Generator().manual_seed(0))
        dets, _ = model._detect(image, frame_sample(0, 64, 96))
        dets2, extra2 = model._detect(image, frame_sample(1, 64, 96))
    assert torch.isfinite(model.detector.level_embed).all()
    assert np.isfinite(dets.bboxes).all() and np.isfinite(dets2.bboxes).all()
    assert np.isfinite(extra2['tracking'].bboxes).all()


def test_other_configs_differ_only_where_they_say():
    p1 = Config.fromfile(P1)
    p2 = Config.fromfile(osp.join(CONFIGS, 'transtrack_r50_8xb2-20e_vastmat-p2.py'))
    pairs = Config.fromfile(osp.join(CONFIGS, 'transtrack_r50_8xb2-20e_vastmat-p1_pairs.py'))
    assert p2.train_dataloader.dataset.protocol == p2.test_dataloader.dataset.protocol == 'protocol2'
    assert p2.model == p1.model
    assert pairs.model.previous_frame == 'reference' and p1.model.previous_frame == 'shift'
    sampler = pairs.train_dataloader.dataset.pipeline[0]
    assert sampler.type == 'VastMATRefFrameSample' and sampler.num_ref_imgs == 1
    assert sampler.frame_range_seconds == 0.1 and sampler.direction == 'past'  # the previous frame
    assert p1.train_dataloader.dataset.pipeline[0].num_ref_imgs == 0
    assert pairs.train_dataloader.dataset.pipeline[1] == p1.train_dataloader.dataset.pipeline[1]
    custom = p1.optim_wrapper.paramwise_cfg.custom_keys
    assert custom == dict(backbone=dict(lr_mult=0.1), sampling_offsets=dict(lr_mult=0.1),
                          reference_points=dict(lr_mult=0.1))
    assert p1.optim_wrapper.optimizer == dict(type='AdamW', lr=2e-4, weight_decay=1e-4)
    assert p1.optim_wrapper.clip_grad.max_norm == 0.1 and p1.param_scheduler[0].milestones == [10]
    assert p1.train_dataloader.dataset.min_visibility == p2.train_dataloader.dataset.min_visibility == 0.25
    assert pairs.train_dataloader.dataset.min_visibility == 0.25 and 'min_visibility' not in p1.test_dataloader.dataset


def test_min_visibility_leaves_less_visible_boxes_unannotated(tmp_path):
    """As the official MOT -> COCO conversion (visibility >= 0.25 kept): a box of known visibility below
    ``min_visibility`` is not an instance at all (neither a target nor an ignored box), unknown (-1) is kept, the
    threshold itself is kept, and the frame stays (empty if nothing is left)."""
    from vastmat.datasets.formats import write_seqinfo
    from vastmat.datasets.vastmat_dataset import VastMATDataset
    gt = tmp_path / 'seq' / 'gt'
    gt.mkdir(parents=True)
    # frame 1: visibility 0.1 (dropped), 0.25 (kept), -1 (unknown, kept), ignored 0.2 (dropped); frame 2: only 0.2
    gt.joinpath('gt.txt').write_text('1,1,0,0,5,5,1,1,0.1\n1,2,10,0,5,5,1,1,0.25\n1,3,20,0,5,5,1,1,-1\n'
                                     '1,4,30,0,5,5,0,1,0.2\n2,1,0,0,5,5,1,1,0.2\n')
    write_seqinfo(str(tmp_path / 'seq' / 'seqinfo.ini'), dict(name='seq', imDir='img1', frameRate=10, seqLength=2,
                                                             imWidth=64, imHeight=48, imExt='.jpg'))

    def instances(**kwargs):
        data = VastMATDataset(data_root=str(tmp_path), load_as='image', **kwargs)
        return [[(i['instance_id'], i['ignore_flag'], i['visibility']) for i in data.get_data_info(k)['instances']]
                for k in range(len(data))]

    assert instances() == [[(1, 0, 0.1), (2, 0, 0.25), (3, 0, -1.0), (4, 1, 0.2)], [(1, 0, 0.2)]]
    assert instances(min_visibility=0.25) == [[(2, 0, 0.25), (3, 0, -1.0)], []]
    assert instances(min_visibility=0.0) == instances()
    with pytest.raises(ValueError, match='min_visibility must be in'):
        VastMATDataset(data_root=str(tmp_path), min_visibility=25)


# ------------------------------------------------------------------------------------------ track queries
@torch.no_grad()
def test_track_queries_are_the_previous_frames_outputs(tiny):
    """Frame 1 fuses the frame with itself and its 'tracking' rows are its detections; frame 2's track decoder
    takes exactly frame 1's last decoder layer outputs and final boxes, keeps those boxes as reference points in
    every layer (no refinement), and shares the heads; a new video starts over."""
    from mmdet.models.layers import inverse_sigmoid
    model, net = tiny, tiny.detector
    model.eval()
    seen = dict(combine=[], decoder=[], decoder_out=[], track=[], track_out=[])
    hooks = [
        net.combine.register_forward_pre_hook(lambda m, args: seen['combine'].append(args[0].clone())),
        net.decoder.register_forward_pre_hook(lambda m, args, kw: seen['decoder'].append(kw), with_kwargs=True),
        net.decoder.register_forward_hook(lambda m, args, out: seen['decoder_out'].append(out)),
        net.decoder_track.register_forward_pre_hook(lambda m, args, kw: seen['track'].append(kw), with_kwargs=True),
        net.decoder_track.register_forward_hook(lambda m, args, out: seen['track_out'].append(out))]
    try:
        torch.manual_seed(1)
        images = torch.randn(2, 1, 3, 48, 64)
        model.start_video()
        dets1, extra1 = model._detect(images[0], frame_sample(0, 48, 64))
        levels = len(seen['combine'])
        assert levels == 4 and not seen['track']
        for fused in seen['combine']:  # prev = cur
            assert torch.equal(fused[:, :32], fused[:, 32:])
        np.testing.assert_array_equal(extra1['tracking'].bboxes, dets1.bboxes)
        np.testing.assert_array_equal(extra1['tracking'].scores, dets1.scores)
        assert seen['decoder'][0]['query_pos'] is None  # TransTrack: no positional query in the decoder

        dets2, extra2 = model._detect(images[1], frame_sample(1, 48, 64))
        for level in range(levels):  # the previous frame's projected features
            assert torch.equal(seen['combine'][levels + level][:, 32:], seen['combine'][level][:, :32])
        hidden1, refs1 = seen['decoder_out'][0]
        queries = hidden1[-1]
        initial = seen['decoder'][0]['reference_points']
        boxes1 = (net.bbox_head.reg_branches[-1](queries) + inverse_sigmoid(refs1[-2])).sigmoid()
        assert torch.equal(seen['track'][0]['query'], queries)  # hs[-1] of frame 1, all 20 queries
        torch.testing.assert_close(seen['track'][0]['reference_points'], boxes1, rtol=0, atol=1e-7)
        assert seen['track'][0]['query_pos'] is None and seen['track'][0]['reg_branches'] is None
        assert initial.shape[-1] == 2 and seen['track'][0]['reference_points'].shape == (1, 20, 4)
        # frame 1's boxes in pixels of the original frame (96 x 128): x1 y1 x2 y2 of the normalised cx cy w h
        cx, cy, w, h = boxes1[0].double().unbind(-1)
        np.testing.assert_allclose(dets1.bboxes, torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2],
                                                             -1).numpy() * [128, 96, 128, 96], atol=1e-4)
        # the track decoder's references stay frame 1's boxes; its boxes use the shared per-layer heads
        track_hidden, track_refs = seen['track_out'][0]
        assert all(torch.equal(r, seen['track'][0]['reference_points']) for r in track_refs)
        relocated = (net.bbox_head.reg_branches[-1](track_hidden[-1])
                     + inverse_sigmoid(seen['track'][0]['reference_points'])).sigmoid()
        cx, cy, w, h = relocated[0].double().unbind(-1)
        np.testing.assert_allclose(extra2['tracking'].bboxes, torch.stack(
            [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1).numpy() * [128, 96, 128, 96], atol=1e-4)
        np.testing.assert_allclose(extra2['tracking'].scores,
                                   net.bbox_head.cls_branches[-1](track_hidden[-1])[0, :, 0].sigmoid().numpy(),
                                   rtol=1e-6)
        assert len(dets2) == 20 and (dets2.labels == 0).all()

        model.start_video()  # a new video: its first frame is its own previous frame again
        model._detect(images[1], frame_sample(0, 48, 64, video='w'))
        assert len(seen['track']) == 1
        assert all(torch.equal(f[:, :32], f[:, 32:]) for f in seen['combine'][-levels:])
        with pytest.raises(ValueError, match='input size .* unlike the previous frame'):
            model._detect(torch.randn(1, 3, 64, 64), frame_sample(1, 64, 64, video='w'))
    finally:
        for hook in hooks:
            hook.remove()


def test_degenerate_query_boxes_keep_their_rows():
    """A query whose box has zero size (sigmoid underflow) keeps a tiny positive size: the frame's checks would
    otherwise drop it and shift every later row (the tracker relies on row i = query i)."""
    from vastmat.models.mot.detr_outputs import queries_to_detections
    logits = torch.tensor([[0.0], [-3.0], [2.0]])
    boxes = torch.tensor([[0.5, 0.5, 0.2, 0.4], [0.1, 0.2, 0.0, 0.0], [0.9, 0.5, 0.4, 0.2]])
    dets = queries_to_detections(logits, boxes, (100, 200))
    np.testing.assert_allclose(dets.bboxes[[0, 2]], [[80, 30, 120, 70], [140, 40, 220, 60]], atol=1e-5)
    assert (dets.bboxes[1, 2:] > dets.bboxes[1, :2]).all() and np.allclose(dets.bboxes[1], [20, 20, 20, 20])
    np.testing.assert_allclose(dets.scores, torch.sigmoid(logits[:, 0]).numpy(), rtol=1e-6)
    from vastmat.structures.tracking import TrackingFrame
    assert TrackingFrame(dets, frame_id=1).num_dropped == 0


# ---------------------------------------------------------------------------------------------- random shift
def test_random_shift_is_the_official_randshift():
    from vastmat.models.mot import random_shift, shift_boxes
    h, w, pad_w = 40, 60, 70
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                            indexing='ij')
    image = torch.full((2, 1, h, pad_w), -1.0)  # the padding (columns 60..69) holds -1
    image[:, 0, :, :w] = xs + 1000 * ys  # each pixel's value names its position
    image[1, 0, :, :w] += 0.5
    for seed in range(20):
        torch.manual_seed(seed)  # the official draws: rand, randn (sign), rand, randn, for x then y
        dx = (10 * torch.rand(2)).int() * ((torch.randn(2) > 0).int() * 2 - 1)
        dy = (10 * torch.rand(2)).int() * ((torch.randn(2) > 0).int() * 2 - 1)
        torch.manual_seed(seed)
        shifted, windows = random_shift(image, [(h, w), (h, w)], max_shift=10)
        for i in range(2):
            x0, x1 = max(0, -int(dx[i])), min(pad_w, pad_w - int(dx[i]))  # the padded width, as official
            x1 = min(x1, w)  # a slice of the unpadded image ends there
            y0, y1 = max(0, -int(dy[i])), min(h, h - int(dy[i]))
            assert windows[i].tolist() == [x0, y0, x1, y1]
            # nearest-neighbour resize of the window: output pixel (r, c) reads (y0 + floor(r * ph / h), ...)
            src_y = y0 + torch.floor(torch.arange(h) * ((y1 - y0) / h)).long()
            src_x = x0 + torch.floor(torch.arange(w) * ((x1 - x0) / w)).long()
            expected = src_x[None, :].float() + 1000 * src_y[:, None].float() + 0.5 * i
            assert torch.equal(shifted[i, 0, :, :w], expected)
            assert (shifted[i, 0, :, w:] == -1).all()  # padding untouched
            # a box follows its content
            box = torch.tensor([[20.0, 10.0, 30.0, 25.0]])
            moved = shift_boxes(box, windows[i], (h, w))[0]
            sx, sy = (x1 - x0) / w, (y1 - y0) / h
            torch.testing.assert_close(moved, torch.tensor([(20 - x0) / sx, (10 - y0) / sy, (30 - x0) / sx,
                                                            (25 - y0) / sy]))
    torch.manual_seed(0)
    with pytest.raises(ValueError, match='max_shift=100 must be smaller than the input'):
        for _ in range(50):
            random_shift(torch.zeros(1, 1, 8, 8), [(8, 8)], max_shift=100)


# ---------------------------------------------------------------------------------------------- training
def test_training_step_runs_one_decoder_and_the_previous_frame_without_gradients(tiny):
    """track_prob 1: the track decoder trains with queries from a no-grad pass over the shifted previous frame; the
    detection decoder gets no gradient. track_prob 0: the reverse. The neck learns through both frames."""
    model = copy.deepcopy(tiny)
    net = model.detector
    model.train()
    batch = torch.randn(2, 1, 3, 48, 64)
    samples = [clip([frame_sample(0, 48, 64)]),
               clip([frame_sample(3, 48, 64, boxes=[[5, 5, 30, 40], [30, 8, 60, 30]])])]
    calls = []
    hook = net.decoder_track.register_forward_pre_hook(
        lambda m, args, kw: calls.append((torch.is_grad_enabled(), kw['query'].requires_grad)), with_kwargs=True)
    try:
        for prob, trained, idle in ((1.0, 'decoder_track', 'decoder'), (0.0, 'decoder', 'decoder_track')):
            model.track_prob = prob
            model.zero_grad(set_to_none=True)
            calls.clear()
            torch.manual_seed(0)
            losses = model.loss(batch, copy.deepcopy(samples))
            assert set(losses) == {'loss_cls', 'loss_bbox', 'loss_iou', 'd0.loss_cls', 'd0.loss_bbox', 'd0.loss_iou'}
            sum(losses.values()).backward()
            assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in getattr(net, trained).parameters())
            assert all(p.grad is None for p in getattr(net, idle).parameters())
            assert net.combine.weight.grad is not None and net.neck.convs[0].conv.weight.grad is not None
            assert (net.query_embedding.weight.grad is not None) == (trained == 'decoder')
            assert calls == ([(True, False)] if prob == 1.0 else [])  # queries from the no-grad pass
        with pytest.raises(ValueError, match=r"previous_frame='shift'\) trains on single frames"):
            model.loss(torch.randn(1, 2, 3, 48, 64), [clip([frame_sample(0, 48, 64), frame_sample(1, 48, 64)])])
    finally:
        hook.remove()


def test_real_pairs_take_the_reference_frame_as_the_previous_frame(tiny, demo_root):
    """previous_frame='reference' on key / reference pairs of the demo data (VastMATRefFrameSample): the no-grad
    pass reads the reference frame, the trained pass the key frame, the losses use the key frame's boxes."""
    from mmengine.dataset import pseudo_collate

    from vastmat.registry import DATASETS
    cfg = Config.fromfile(osp.join(CONFIGS, 'transtrack_r50_8xb2-20e_vastmat-p1_pairs.py'))
    tiny_cfg = Config.fromfile(TINY)
    pipeline = copy.deepcopy(cfg.train_pipeline)
    pipeline[1].transforms = tiny_cfg.train_transforms
    dataset = DATASETS.build(dict(type='VastMATDataset', data_root=demo_root, protocol='protocol1', split='train',
                                  load_as='video', pipeline=pipeline))
    batch = pseudo_collate([dataset[(0, 4)], dataset[(1, 7)]])
    model = copy.deepcopy(tiny)
    model.previous_frame = 'reference'
    model.train()
    data = model.data_preprocessor(batch, True)
    clips = data['data_samples']
    assert data['inputs'].shape[1] == 2
    for sample, key_frame in zip(clips, (4, 7)):
        frames = [s.frame_id for s in sample]
        key = sample.key_frames_inds[0]
        assert frames[key] == key_frame and frames[1 - key] == key_frame - 1  # the previous frame, 0.1 s at 10 FPS
    seen = []
    hook = model.detector.backbone.register_forward_pre_hook(lambda m, args: seen.append(args[0].clone()))
    try:
        torch.manual_seed(0)
        losses = model.loss(data['inputs'], clips)
    finally:
        hook.remove()
    rows = torch.arange(2)
    keys = [c.key_frames_inds[0] for c in clips]
    refs = [c.ref_frames_inds[0] for c in clips]
    assert torch.equal(seen[0], data['inputs'][rows, refs])  # the previous frame: the reference frames
    assert not torch.equal(seen[1], seen[0])  # their random shifts (the previous frame's own previous)
    assert torch.equal(seen[2], data['inputs'][rows, keys])  # the trained pass: the key frames
    assert all(math.isfinite(float(v)) for v in losses.values())
    with pytest.raises(ValueError, match="previous_frame='reference'\\) trains on key / reference pairs"):
        model.loss(data['inputs'][:, :1], [clip([c[0]]) for c in clips])
    from vastmat.registry import MODELS
    with pytest.raises(ValueError, match='previous_frame must be one of'):
        MODELS.build(dict(copy.deepcopy(tiny_cfg.model), previous_frame='pairs'))


# ---------------------------------------------------------------------------------------------- end to end
@pytest.fixture(scope='module')
def trained(demo_root, tmp_path_factory):
    """The tiny config trained 8 iterations on the demo data (iter_4, iter_8), then resumed to 12."""
    work_dir = tmp_path_factory.mktemp('transtrack_tiny')
    tool('tools/train.py', TINY, '--work-dir', work_dir, '--cfg-options', *video_data_root_options(demo_root))
    set_aside_logs(work_dir)  # the resumed run's log folder: its own
    tool('tools/train.py', TINY, '--work-dir', work_dir, '--resume', '--cfg-options', *video_data_root_options(demo_root),
         'train_cfg.max_iters=12', 'param_scheduler.0.end=12')
    return work_dir


def fixed_batch_loss(demo_root, checkpoint=None):
    """The loss on frame 5 of every demo training video, resized without augmentation, in eval mode (no dropout),
    through both decoders with the same random shifts."""
    from mmengine.dataset import pseudo_collate

    from vastmat.registry import DATASETS
    cfg = Config.fromfile(TINY)
    dataset_cfg = copy.deepcopy(cfg.train_dataloader.dataset)
    dataset_cfg.update(data_root=demo_root, pipeline=[cfg.train_pipeline[0], dict(
        type='TransformBroadcaster', transforms=[dict(type='LoadImageFromFile'), dict(type='LoadTrackAnnotations'),
                                                 dict(type='Resize', scale=cfg.test_scale, keep_ratio=True)]),
        dict(type='PackVastMATInputs')])
    dataset = DATASETS.build(dataset_cfg)
    batch = pseudo_collate([dataset[(v, 5)] for v in range(len(dataset))])
    model = build(cfg.model)
    model.init_weights()
    if checkpoint is not None:
        model.load_state_dict(torch.load(checkpoint, weights_only=True)['state_dict'])
    model.eval()
    data = model.data_preprocessor(batch, True)
    total = 0.0
    for prob in (1.0, 0.0):
        model.track_prob = prob
        torch.manual_seed(0)
        with torch.no_grad():
            total += float(sum(model.loss(**copy.deepcopy(data)).values()))
    return total


@pytest.mark.slow
@pytest.mark.xdist_group('transtrack_tiny')
def test_tiny_transtrack_trains_resumes_and_its_loss_falls(trained, demo_root):
    last = torch.load(trained / 'iter_12.pth', weights_only=True)
    assert last['meta']['iter'] == 12
    history = last['message_hub']['log_scalars']['train/loss']['log_history']
    assert len(history) == 12 and all(math.isfinite(v) for v in history)  # 8 trained + 4 after resuming
    logs = [open(f).read() for f in sorted(glob.glob(str(trained / '*' / '*.log')))]
    assert any('resumed epoch: 0, iter: 8' in log for log in logs)
    start, after = fixed_batch_loss(demo_root), fixed_batch_loss(demo_root, trained / 'iter_12.pth')
    assert after < 0.85 * start, (start, after)  # measured 26.7 -> 16.6


@pytest.mark.slow
@pytest.mark.xdist_group('transtrack_tiny')
def test_tiny_transtrack_tracks_the_demo_test_videos(trained, demo_root, tmp_path):
    out = tmp_path / 'test'
    tool('tools/test.py', TINY, '--checkpoint', trained / 'iter_12.pth', '--work-dir', out, '--cfg-options',
         *video_data_root_options(demo_root))
    metrics = json.load(open(out / 'metrics.json'))
    assert 0.0 <= metrics['vastmat/HOTA'] <= 1.0 and metrics['vastmat/CLR_FP'] >= 0
    videos = open(osp.join(demo_root, 'splits', 'protocol1', 'test.txt')).read().split()
    for video in videos:
        rows = np.loadtxt(out / 'results' / f'{video}.txt', delimiter=',', ndmin=2)
        assert len(rows) and set(rows[:, 0].astype(int)) <= set(range(1, 13)) and (rows[:, 1] >= 1).all()
        # at most one box per query and frame: the 20 queries
        assert np.unique(rows[:, 0], return_counts=True)[1].max() <= 20
