"""MOTIP: the model on mmdet's Deformable DETR (the official parameter count, a full-size forward pass), its training
step (matched query outputs as identity tokens, gradients on part of the frames, the ID loss), separate gradient
clipping, and the tiny config trained, resumed and tracked end to end, then re-tracked with TCEI's calibration on the
same checkpoint. The ID decoder and targets (test_motip_modules.py), the runtime tracker (test_motip_tracker.py), the
training clips and crop (test_motip_training_data.py) and TCEI (test_tcei.py) have their own tests."""
import copy
import glob
import json
import math
import os.path as osp
import random

import numpy as np
import pytest
import torch
from mmengine.config import Config

from helpers.common import (REPO, build_model, set_aside_logs, tool, uninitialised_memory_filled_with_nan,
                            vastmat_scope, video_data_root_options)
from helpers.detr_samples import clip, frame_sample
from helpers.motip_weights import record_id_logits

CONFIGS = osp.join(REPO, 'configs', 'motip')
P1 = osp.join(CONFIGS, 'motip_r50_8xb1-10e_vastmat-p1.py')
TINY = osp.join(CONFIGS, 'motip_tiny_vastmat-demo.py')
TCEI_TINY = osp.join(REPO, 'configs', 'tcei', 'tcei_motip_tiny_vastmat-demo.py')

# The official model's parameter count (MCG-NJU/MOTIP 5cfbcd4, configs/r50_deformable_detr_motip_dancetrack.yaml),
# derived from its architecture:
# - the Deformable DETR (models/deformable_detr, the original Deformable DETR code; R50, 4 levels, box refine, d 256,
#   FFN 1024, 300 queries, NUM_CLASSES 1), with the module sizes measured on the same code for TransTrack
#   (tests/models/mot/test_transtrack.py): backbone 23,454,912 (FrozenBatchNorm2d affine values are buffers), input_proj
#   5,639,168, encoder 6 x 756,864 = 4,541,184, decoder 6 x 1,020,544 = 6,123,264, bbox_embed 795,672, class_embed
#   6 x (256 + 1) = 1,542, query_embed 300 x 512 = 153,600, level_embed 1,024, reference_points 514:
#   40,710,880;
# - trajectory modelling: two FFNs 256 -> 512 -> 256 (2 x 262,912) and two LayerNorm(256) (2 x 512): 526,848;
# - ID decoder (tokens of 512 = feature 256 + ID 256): word_to_embed 51 x 256 = 13,056, embed_to_word 256 x 51 =
#   13,056 (one module shared by the 6 layers), rel_pos_embeds 6 x 30 x 16 = 2,880, 5 self-attention blocks
#   (nn.MultiheadAttention 4 x 512 x 512 + 4 x 512 = 1,050,624, LayerNorm 1,024) 5,258,240, 6 cross-attention
#   blocks 6,309,888, 6 FFN blocks (512 -> 1024 -> 512 = 1,050,112, LayerNorm 1,024) 6,306,816: 17,903,936;
#   total 59,141,664 (the official TrajectoryModeling and IDDecoder instantiated outside the project count 526,848 and
#   17,903,936: tests/fixtures/motip_official/README.md).
# mmdet's modules differ as for TransTrack: ResNet's BN affine values are parameters (+53,120, frozen); ChannelMapper's
# convolutions have the official bias before GN (bias=True in the base config): 59,141,664 + 53,120 = 59,194,784.
OFFICIAL_DETR = 40_710_880
OFFICIAL_TRAJECTORY_MODELING = 526_848
OFFICIAL_ID_DECODER = 17_903_936
OFFICIAL_PARAMETERS = OFFICIAL_DETR + OFFICIAL_TRAJECTORY_MODELING + OFFICIAL_ID_DECODER
EXPECTED_PARAMETERS = OFFICIAL_PARAMETERS + 53_120


@pytest.fixture(scope='module', autouse=True)
def scope():
    vastmat_scope('vastmat.engine')


def build(cfg, seed=0):
    return build_model(cfg, seed)


@pytest.fixture(scope='module')
def tiny():
    """The tiny config's MOTIP, initialised (seed 0)."""
    model = build(Config.fromfile(TINY).model)
    model.init_weights()
    return model


# ------------------------------------------------------------------------------------------- full-size network
def test_full_size_model_has_the_official_parameter_count_and_runs():
    cfg = Config.fromfile(P1)
    cfg.model.detector.backbone.init_cfg = None  # no ImageNet download
    model = build(cfg.model)
    count = sum(p.numel() for p in model.parameters())
    assert count == EXPECTED_PARAMETERS == 59_194_784
    assert abs(count - OFFICIAL_PARAMETERS) / OFFICIAL_PARAMETERS < 0.01
    parts = {name: sum(p.numel() for p in getattr(model.tracker, name).parameters())
             for name in ('trajectory_modeling', 'id_decoder')}
    assert parts == dict(trajectory_modeling=OFFICIAL_TRAJECTORY_MODELING, id_decoder=OFFICIAL_ID_DECODER)
    net = model.detector
    assert net.num_queries == 300 and net.with_box_refine and not net.as_two_stage
    tracker = model.tracker
    assert (tracker.det_thresh, tracker.newborn_thresh, tracker.id_thresh, tracker.miss_tolerance,
            tracker.assignment_protocol) == (0.3, 0.6, 0.2, 30, 'object-max')
    assert tracker.id_decoder.num_id_vocabulary == 50 and tracker.id_decoder.rel_pe_length == 30

    # two frames at 64 x 96 on the CPU: every query a detection with its 256-d output; the tracker runs on them
    model.eval()
    model.tracker.det_thresh = 0.0  # untrained scores: keep every query
    model.tracker.newborn_thresh = 0.0
    image = torch.randn(1, 3, 64, 96, generator=torch.Generator().manual_seed(0))
    model.start_video()
    for frame_id in range(2):
        sample = frame_sample(frame_id, 64, 96)
        dets, extra = model._detect(image, sample)
        assert len(dets) == 300 and dets.features.shape == (300, 256) and extra == {}
        assert np.isfinite(dets.features).all() and ((dets.scores > 0) & (dets.scores < 1)).all()
        out = model.track_frame(model.tracking_frame(image[None], 0, sample))
        assert len(out) == 50 and len(set(out.ids.tolist())) == 50  # 300 newborns, the 50 ID labels


def test_a_model_without_init_weights_reads_no_uninitialised_memory():
    """mmdet's DeformableDETR creates level_embed uninitialised (torch.Tensor) until init_weights(); a model run
    without init_weights or a checkpoint read garbage, occasionally NaN (seen once in CI, as with TransTrack). With
    PyTorch filling uninitialised memory with NaN, the built model's outputs are finite."""
    with uninitialised_memory_filled_with_nan():
        model = build(Config.fromfile(TINY).model)
        model.eval()
        image = torch.randn(1, 3, 64, 96, generator=torch.Generator().manual_seed(0))
        dets, _ = model._detect(image, frame_sample(0, 64, 96))
    assert torch.isfinite(model.detector.level_embed).all()
    assert np.isfinite(dets.bboxes).all() and np.isfinite(dets.features).all() and np.isfinite(dets.scores).all()

# -------------------------------------------------------------------------------------------- training step
def test_training_step_matches_queries_and_trains_the_id_decoder(tiny):
    """A clip of 3 frames with 3 animals (one absent from frame 1): the DETR losses of every layer and the ID loss
    are finite; the ID loss reaches the DETR only through the frames that keep gradients."""
    model = copy.deepcopy(tiny)
    model.train()
    boxes = [((10., 12., 40., 50.), (60., 20., 90., 60.), (30., 60., 70., 90.)),
             ((12., 12., 42., 50.), (32., 62., 72., 92.)),
             ((14., 13., 44., 51.), (62., 22., 92., 62.), (34., 63., 74., 94.))]
    ids = [(5, 9, 7), (5, 7), (5, 9, 7)]
    frames = [frame_sample(t, 96, 128, boxes[t], ids[t]) for t in range(3)]
    inputs = torch.randn(1, 3, 3, 96, 128, generator=torch.Generator().manual_seed(1))
    torch.manual_seed(0)
    random.seed(0)
    losses = model.loss(inputs, [clip(frames)])
    assert {'loss_cls', 'loss_bbox', 'loss_iou', 'd0.loss_cls', 'loss_id'} <= set(losses)
    assert all(math.isfinite(float(v)) for v in losses.values())
    losses['loss_id'].backward()
    decoder_grads = [p.grad for p in model.tracker.id_decoder.parameters() if p.requires_grad]
    assert any(g is not None and g.abs().sum() > 0 for g in decoder_grads)
    assert model.detector.bbox_head.reg_branches[0][0].weight.grad is None  # the last layer's outputs only
    assert model.detector.decoder.layers[-1].ffn.layers[1].weight.grad is not None

    # the matched queries are the last layer's Hungarian assignment: each ground-truth box gets its own query
    logits, boxes_out, _ = model._run_detr(inputs[0, :1], frames[:1])
    queries = model.matched_queries(logits[-1][0], boxes_out[-1][0], frames[0])
    assert len(set(queries.tolist())) == 3 and queries.min() >= 0 and queries.max() < 20

    model.only_detr = True
    assert 'loss_id' not in model.loss(inputs, [clip(frames)])
    with pytest.raises(ValueError, match=r'inputs must be \(N, T, C, H, W\)'):
        model.loss(inputs[0], [clip(frames)])


def test_detr_chunks_and_checkpointing_change_no_value(tiny):
    """num_checkpoint_frames (official DETR_NUM_CHECKPOINT_FRAMES) only saves memory: frames without gradients in
    passes of 4 c, those with gradients in checkpointed passes of c give the same losses and gradients as one pass."""
    boxes = ((10., 12., 40., 50.), (60., 20., 90., 60.))
    clips = [clip([frame_sample(t, 64, 96, boxes, (3, 4)) for t in range(4)]) for _ in range(3)]
    inputs = torch.randn(3, 4, 3, 64, 96, generator=torch.Generator().manual_seed(2))
    results = []
    for chunk in (0, 1):
        model = copy.deepcopy(tiny)
        model.train()
        for module in model.modules():  # frozen BN statistics, as the full-size ResNet's (norm_eval): the tiny
            if isinstance(module, torch.nn.BatchNorm2d):  # backbone's batch statistics depend on the pass
                module.eval()
        # 3 clips, 2 frames each with gradients: c = 1 runs them in 6 checkpointed passes, the 6 others 4 + 2
        model.num_train_frames, model.num_checkpoint_frames = 2, chunk
        torch.manual_seed(0)
        random.seed(0)
        losses = model.loss(inputs, copy.deepcopy(clips))
        sum(losses.values()).backward()
        results.append(({k: float(v) for k, v in losses.items()},
                        [p.grad.clone() for p in model.parameters() if p.grad is not None]))
    (loss_a, grads_a), (loss_b, grads_b) = results
    assert loss_a.keys() == loss_b.keys() and all(loss_a[k] == pytest.approx(loss_b[k], rel=1e-5) for k in loss_a)
    assert len(grads_a) == len(grads_b) and all(torch.allclose(a, b, atol=1e-5) for a, b in zip(grads_a, grads_b))

def test_more_ground_truth_than_queries_is_an_error(tiny):
    model = copy.deepcopy(tiny)
    boxes = [(i, i, i + 10.0, i + 10.0) for i in range(21)]
    sample = frame_sample(0, 96, 128, boxes)
    logits, out_boxes, _ = model._run_detr(torch.zeros(1, 3, 96, 128), [sample])
    with pytest.raises(ValueError, match='more than the 20 queries'):
        model.matched_queries(logits[-1][0], out_boxes[-1][0], sample)


def test_model_checks_its_parts():
    from vastmat.registry import MODELS
    cfg = Config.fromfile(TINY).model
    with pytest.raises(TypeError, match='must be a MOTIPTracker'):
        MODELS.build(dict(copy.deepcopy(cfg), tracker=dict(type='BYTETracker')))
    bad = copy.deepcopy(cfg)
    bad.tracker.trajectory_modeling.detr_dim = 64
    with pytest.raises(ValueError, match='detr_dim'):
        MODELS.build(bad)


def test_separate_clipping_clips_each_part_to_the_max_norm():
    """MOTIP's SEPARATE_CLIP_NORM: the DETR's gradients and the rest's are each clipped to max_norm (mmengine's
    OptimWrapper would scale both by the same factor)."""
    from vastmat.registry import OPTIM_WRAPPER_CONSTRUCTORS
    model = torch.nn.ModuleDict(dict(detector=torch.nn.Linear(4, 4, bias=False),
                                     tracker=torch.nn.Linear(4, 4, bias=False)))
    constructor = OPTIM_WRAPPER_CONSTRUCTORS.build(dict(
        type='SeparateClipOptimWrapperConstructor',
        optim_wrapper_cfg=dict(type='SeparateClipOptimWrapper', clip_prefixes=['detector.'],
                               optimizer=dict(type='SGD', lr=1.0), clip_grad=dict(max_norm=0.1))))
    wrapper = constructor(model)
    model['detector'].weight.grad = torch.full((4, 4), 1.0)  # norm 4
    model['tracker'].weight.grad = torch.full((4, 4), 0.01)  # norm 0.04: below max_norm, left as is
    wrapper._clip_grad()
    assert model['detector'].weight.grad.norm() == pytest.approx(0.1, rel=1e-4)
    assert torch.allclose(model['tracker'].weight.grad, torch.full((4, 4), 0.01))
    with pytest.raises(ValueError, match="no trainable parameter name starts with 'backbone.'"):
        OPTIM_WRAPPER_CONSTRUCTORS.build(dict(
            type='SeparateClipOptimWrapperConstructor',
            optim_wrapper_cfg=dict(type='SeparateClipOptimWrapper', clip_prefixes=['backbone.'],
                                   optimizer=dict(type='SGD', lr=1.0), clip_grad=dict(max_norm=0.1))))(model)


# ---------------------------------------------------------------------------------------------- end to end
@pytest.fixture(scope='module')
def trained(demo_root, tmp_path_factory):
    """The tiny config trained 8 iterations on the demo data (iter_4, iter_8), then resumed to 12."""
    work_dir = tmp_path_factory.mktemp('motip_tiny')
    tool('tools/train.py', TINY, '--work-dir', work_dir, '--cfg-options', *video_data_root_options(demo_root))
    set_aside_logs(work_dir)  # the resumed run's log folder: its own
    tool('tools/train.py', TINY, '--work-dir', work_dir, '--resume', '--cfg-options', *video_data_root_options(demo_root),
         'train_cfg.max_iters=12', 'param_scheduler.0.end=12')
    return work_dir


def fixed_batch_loss(demo_root, checkpoint=None):
    """The loss on the first 4 frames of every demo training video, resized without augmentation, in eval mode,
    with the same random draws (ID labels, augmentation, gradient frames)."""
    from mmengine.dataset import pseudo_collate

    from vastmat.registry import DATASETS
    cfg = Config.fromfile(TINY)
    dataset_cfg = copy.deepcopy(cfg.train_dataloader.dataset)
    dataset_cfg.update(data_root=demo_root, pipeline=[dict(type='VastMATClipSample', clip_length=4,
                                                           max_interval_seconds=0.1), dict(
        type='TransformBroadcaster', transforms=[dict(type='LoadImageFromFile'), dict(type='LoadTrackAnnotations'),
                                                 dict(type='Resize', scale=cfg.test_scale, keep_ratio=True)]),
        dict(type='PackVastMATInputs')])
    dataset = DATASETS.build(dataset_cfg)
    batch = pseudo_collate([dataset[(v, 0)] for v in range(len(dataset))])
    model = build(cfg.model)
    model.init_weights()
    if checkpoint is not None:
        model.load_state_dict(torch.load(checkpoint, weights_only=True)['state_dict'])
    model.eval()
    data = model.data_preprocessor(batch, True)
    torch.manual_seed(0)
    random.seed(0)
    with torch.no_grad():
        losses = model.loss(**copy.deepcopy(data))
    return float(sum(losses.values())), float(losses['loss_id'])


@pytest.mark.slow
@pytest.mark.xdist_group('motip_tiny')
def test_tiny_motip_trains_resumes_and_its_loss_falls(trained, demo_root):
    last = torch.load(trained / 'iter_12.pth', weights_only=True)
    assert last['meta']['iter'] == 12
    history = last['message_hub']['log_scalars']['train/loss']['log_history']
    assert len(history) == 12 and all(math.isfinite(v) for v in history)  # 8 trained + 4 after resuming
    logs = [open(f).read() for f in sorted(glob.glob(str(trained / '*' / '*.log')))]
    assert any('resumed epoch: 0, iter: 8' in log for log in logs)
    assert all('loss_id' in log for log in logs)
    (start, start_id), (after, after_id) = fixed_batch_loss(demo_root), fixed_batch_loss(demo_root,
                                                                                          trained / 'iter_12.pth')
    assert after < 0.85 * start, (start, after)
    assert after_id < start_id, (start_id, after_id)


def read_results(folder, videos):
    return {v: np.loadtxt(folder / 'results' / f'{v}.txt', delimiter=',', ndmin=2) for v in videos}


@pytest.fixture(scope='module')
def tracked(trained, demo_root, tmp_path_factory):
    out = tmp_path_factory.mktemp('motip_test')
    tool('tools/test.py', TINY, '--checkpoint', trained / 'iter_12.pth', '--work-dir', out, '--dump-dets',
         out / 'dets', '--cfg-options', *video_data_root_options(demo_root))
    return out


@pytest.mark.slow
@pytest.mark.xdist_group('motip_tiny')
def test_tiny_motip_tracks_the_demo_test_videos(tracked, demo_root):
    metrics = json.load(open(tracked / 'metrics.json'))
    assert 0.0 <= metrics['vastmat/HOTA'] <= 1.0 and metrics['vastmat/CLR_FP'] >= 0
    videos = open(osp.join(demo_root, 'splits', 'protocol1', 'test.txt')).read().split()
    for video_name, rows in read_results(tracked, videos).items():
        assert len(rows) and set(rows[:, 0].astype(int)) <= set(range(1, 13)) and (rows[:, 1] >= 1).all()
        for frame in np.unique(rows[:, 0]):  # one box per identity and frame, at most the 20 queries
            ids = rows[rows[:, 0] == frame, 1]
            assert len(ids) == len(set(ids)) <= 20


@pytest.mark.slow
@pytest.mark.xdist_group('motip_tiny')
def test_kept_detr_outputs_track_alike_and_run_the_detr_once_a_frame(trained, tracked, demo_root, tmp_path,
                                                                      monkeypatch):
    """The zoo's calibration keeps MOTIP's per-frame DETR outputs while it tests one checkpoint again and again
    (keep_frame_outputs): the same tracks as without, and a second test of the same frames runs no DETR."""
    from vastmat.models.mot import MOTIP
    from vastmat.models.mot.frame_outputs import keep_frame_outputs
    calls = []
    run_detr = MOTIP._run_detr
    monkeypatch.setattr(MOTIP, '_run_detr', lambda self, *args: calls.append(1) or run_detr(self, *args))
    videos = open(osp.join(demo_root, 'splits', 'protocol1', 'test.txt')).read().split()
    with keep_frame_outputs():
        for run in ('first', 'again'):
            tool('tools/test.py', TINY, '--checkpoint', trained / 'iter_12.pth', '--work-dir', tmp_path / run,
                 '--cfg-options', *video_data_root_options(demo_root))
            results = read_results(tmp_path / run, videos)
            assert all(np.array_equal(results[v], rows) for v, rows in read_results(tracked, videos).items())
            assert len(calls) == 12 * len(videos), run  # every frame's DETR once, in the first test only


@pytest.mark.slow
@pytest.mark.xdist_group('motip_tiny')
def test_tcei_tracks_with_the_tiny_motip_checkpoint(trained, demo_root, tmp_path):
    """TCEI needs no training: its config tracks with the MOTIP checkpoint (the tracker's modules load unchanged),
    and on the same frames its calibrated ID logits differ from MOTIP's where it recalibrates, and stay finite."""
    from mmengine.dataset import pseudo_collate

    from vastmat.registry import DATASETS
    out = tmp_path / 'tcei'
    tool('tools/test.py', TCEI_TINY, '--checkpoint', trained / 'iter_12.pth', '--work-dir', out, '--cfg-options',
         *video_data_root_options(demo_root))
    metrics = json.load(open(out / 'metrics.json'))
    assert 0.0 <= metrics['vastmat/HOTA'] <= 1.0
    videos = open(osp.join(demo_root, 'splits', 'protocol1', 'test.txt')).read().split()
    assert all(len(rows) for rows in read_results(out, videos).values())

    cfg = Config.fromfile(TCEI_TINY)
    # TCEI recalibrates only detections first assigned a tracked label; after 12 iterations the ID words' softmax is
    # near uniform (about 1/9 each), below the official id_thresh 0.2, so whether any detection keeps a label would
    # depend on the checkpoint's noise: with 0 the initial assignment keeps the claimed tracked labels
    cfg.model.tracker.id_thresh = 0.0
    model = build(cfg.model)
    model.load_state_dict(torch.load(trained / 'iter_12.pth', weights_only=True)['state_dict'])  # strict
    model.eval()
    tracker = model.tracker
    assert type(tracker).__name__ == 'TCEITracker' and tracker.preset == 'bft'
    raw, calibrated = record_id_logits(tracker), []
    dataset_cfg = copy.deepcopy(cfg.test_dataloader.dataset)
    dataset_cfg.update(data_root=demo_root)
    dataset = DATASETS.build(dataset_cfg)
    for video_index in range(2):  # two videos: the experience caches carry over
        with torch.no_grad():
            for frame in range(12):
                data = model.data_preprocessor(pseudo_collate([dataset[(video_index, frame)]]), False)
                model.predict(data['inputs'], data['data_samples'])
                if tracker._calibrated_logits is not None:
                    calibrated.append((raw[-1], tracker._calibrated_logits))
    assert len(calibrated) >= 20 and all(torch.isfinite(c).all() for _, c in calibrated)
    assert sum(not torch.allclose(r, c) for r, c in calibrated) >= len(calibrated) // 2
    assert tracker.caches.w_pos.num_items() > 0


@pytest.mark.slow
@pytest.mark.xdist_group('motip_tiny')
def test_tiny_motip_tracks_its_dumped_detections_alike(trained, tracked, demo_root, tmp_path):
    """The cached path: every query's box, score and hs[-1] dumped by the run above (det.txt rows + 32 feature
    columns, boxes to two decimals), tracked again without the DETR (--det-root; the tracker's modules load from the
    same checkpoint), give the same tracks."""
    out = tmp_path / 'cached'
    tool('tools/test.py', TINY, '--checkpoint', trained / 'iter_12.pth', '--det-root', tracked / 'dets',
         '--work-dir', out, '--cfg-options', *video_data_root_options(demo_root))
    videos = open(osp.join(demo_root, 'splits', 'protocol1', 'test.txt')).read().split()
    dumped = np.loadtxt(tracked / 'dets' / f'{videos[0]}.txt', delimiter=',', ndmin=2)
    assert dumped.shape[1] == 10 + 32 and len(dumped) == 12 * 20  # every query of every frame
    loop, cached = read_results(tracked, videos), read_results(out, videos)
    for video_name in videos:  # the same rows and ids; boxes as det.txt's two decimals
        assert cached[video_name].shape == loop[video_name].shape
        np.testing.assert_array_equal(cached[video_name][:, :2], loop[video_name][:, :2])
        np.testing.assert_allclose(cached[video_name][:, 2:6], loop[video_name][:, 2:6], atol=0.0051)
