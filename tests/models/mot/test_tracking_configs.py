"""The full-size configs build (YOLOX-X for both protocols, ByteTrack with YOLOX-X in the loop), YOLOX-X computes its
losses on the CPU, and a detector checkpoint loads into the tracking model's detector."""
import os.path as osp

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope

from helpers.common import REPO

CONFIGS = osp.join(REPO, 'configs')


@pytest.fixture(autouse=True)
def vastmat_scope():
    import vastmat.models  # noqa: F401
    name = f'test-{id(object())}'
    DefaultScope.get_instance(name, scope_name='vastmat')
    yield


def build(config: str, **overrides):
    from vastmat.registry import MODELS
    cfg = Config.fromfile(osp.join(CONFIGS, config))
    cfg.model.update(overrides)
    return cfg, MODELS.build(cfg.model)


def test_yolox_x_config():
    """Both protocols' settings; the P1 network's size (tests/benchmarks/test_shipped_configs.py builds both whole
    runners)."""
    for protocol in ('p1', 'p2'):
        cfg = Config.fromfile(osp.join(CONFIGS, f'yolox/yolox_x_8xb4-80e_vastmat-{protocol}.py'))
        assert cfg.default_scope == 'vastmat' and cfg.runner_type == 'VastMATRunner'
        assert cfg.train_dataloader.dataset.dataset.protocol == cfg.test_dataloader.dataset.protocol == \
            f'protocol{protocol[1]}'
        assert cfg.model.bbox_head.num_classes == 1 and cfg.train_cfg.max_epochs == 80
        assert [h['type'] for h in cfg.custom_hooks] == ['YOLOXModeSwitchHook', 'SyncNormHook', 'EMAHook']
        # the loops are VastMAT-scoped: mmdet's scope would look VastMATDataset up in mmdet's registry
        assert all('_scope_' not in cfg[key] for key in ('train_cfg', 'val_cfg', 'test_cfg'))
    _, model = build('yolox/yolox_x_8xb4-80e_vastmat-p1.py')
    assert 98e6 < sum(p.numel() for p in model.parameters()) < 100e6  # YOLOX-X: 99.0M


def test_yolox_x_losses_and_backward_on_cpu():
    from mmdet.structures import DetDataSample
    from mmengine.structures import InstanceData
    _, model = build('yolox/yolox_x_8xb4-80e_vastmat-p1.py')
    sample = DetDataSample(metainfo=dict(img_shape=(128, 128), ori_shape=(128, 128), batch_input_shape=(128, 128)))
    sample.gt_instances = InstanceData(bboxes=torch.tensor([[20.0, 30.0, 90.0, 100.0]]), labels=torch.tensor([0]))
    losses = model.loss(torch.rand(1, 3, 128, 128) * 255, [sample])
    assert set(losses) == {'loss_cls', 'loss_bbox', 'loss_obj'}
    total = sum(losses.values())
    total.backward()
    assert torch.isfinite(total) and model.backbone.stem.conv.conv.weight.grad.abs().sum() > 0


def test_bytetrack_with_yolox_x_loads_a_detector_checkpoint():
    cfg, model = build('bytetrack/bytetrack_yolox-x_vastmat-p1.py')
    assert type(model).__name__ == 'TrackingByDetection' and type(model.detector).__name__ == 'YOLOX'
    assert model.tracker.first_solver.cost_limit == 0.6
    detector_state = {k: torch.full_like(v, 0.5) for k, v in model.detector.state_dict().items()
                      if v.dtype.is_floating_point}
    model.load_state_dict(detector_state, strict=False)  # keys without the 'detector.' prefix
    assert torch.all(model.detector.backbone.stem.conv.conv.weight == 0.5)
    _, p2 = build('bytetrack/bytetrack_yolox-x_vastmat-p2.py')
    assert Config.fromfile(osp.join(CONFIGS, 'bytetrack/bytetrack_yolox-x_vastmat-p2.py')
                           ).test_dataloader.dataset.protocol == 'protocol2'


def test_cached_dets_configs_select_their_matchers():
    from vastmat.apis import swap_matcher
    plain = Config.fromfile(osp.join(CONFIGS, 'bytetrack', 'bytetrack_cached-dets.py'))
    expected = {'original': 'IoU', 'diou': 'DIoU', 'cda-fixed': 'CDA', 'cda-adaptive': 'CDA',
                'cda-fixed-diou-gate': 'CDA'}
    for name, matcher in expected.items():
        assert swap_matcher(plain, name).model.tracker.matcher.type == matcher, name
    adaptive = swap_matcher(plain, 'cda-adaptive')
    assert adaptive.model.tracker.matcher.mode == 'forward' and 'plus_one' not in adaptive.model.tracker.matcher
    # the lost-track rule of the official evaluator (30 frames whatever the rate), stated in every ByteTrack config
    for name in ['bytetrack_cached-dets.py', 'bytetrack_yolox-x_vastmat-p1.py', 'bytetrack_yolox-x_vastmat-p2.py']:
        cfg = Config.fromfile(osp.join(CONFIGS, 'bytetrack', name))
        assert cfg.model.tracker.type == 'BYTETracker' and cfg.model.tracker.buffer_frame_rate == 30, name


def test_tracktrack_with_yolox_x_builds_every_input_in_the_loop():
    """TrackTrack's full-size in-loop config: YOLOX-X with the NMS-0.80 main set and an NMS-0.95 extra set, the
    ResNet-50 ReID model at 384x128, ECC camera motion, AFLink; a detector checkpoint still loads into the detector."""
    cfg, model = build('tracktrack/tracktrack_yolox-x_vastmat-p1.py',
                       reid=dict(Config.fromfile(osp.join(CONFIGS, 'tracktrack', 'tracktrack_yolox-x_vastmat-p1.py'))
                                 .model.reid, init_cfg=None),
                       post_processors=[dict(type='AFLink')])
    assert type(model.detector).__name__ == 'YOLOX' and model.detector.bbox_head.test_cfg.nms.iou_threshold == 0.8
    assert model.extra_detections == dict(nms95=dict(nms=dict(type='nms', iou_threshold=0.95)))
    assert type(model.reid).__name__ == 'BaseReID' and model.reid_input_size == (384, 128)
    tracker = model.tracker
    assert type(tracker).__name__ == 'TrackTrackTracker' and type(tracker.camera_motion).__name__ == 'ECCCameraMotion'
    assert (tracker.det_thr, tracker.max_time_lost, type(tracker.gate).__name__) == (0.6, 20, 'NormDIoUGate')
    assert set(tracker.required_inputs) >= {'extra_dets.nms95', 'image'}
    assert type(model.post_processor0).__name__ == 'AFLink'
    # a missing ReID checkpoint is named
    with pytest.raises(FileNotFoundError, match='model.reid.init_cfg.checkpoint'):
        build('tracktrack/tracktrack_yolox-x_vastmat-p1.py', post_processors=[])
