"""FairMOT: the DLA-34 network (official parameter count and checkpoint names), CenterNet targets on hand-built
boxes, the losses and their uncertainty weighting, decoding, the training augmentations, and the tiny config trained,
resumed and tracked end to end."""
import copy
import glob
import json
import math
import os.path as osp
import random

import cv2
import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmengine.structures import InstanceData

from helpers.common import REPO, build_model, tool, video_data_root_options, vastmat_scope

CONFIGS = osp.join(REPO, 'configs', 'fairmot')
P1 = osp.join(CONFIGS, 'fairmot_dla34_1xb12-30e_vastmat-p1.py')
TINY = osp.join(CONFIGS, 'fairmot_tiny_vastmat-demo.py')
OFFICIAL_SHAPES = osp.join(REPO, 'tests', 'fixtures', 'fairmot_official', 'dla34_state_dict_shapes.json')

# The official network's parameter count: ifzhang/FairMOT pose_dla_dcn.get_pose_net(34, heads={'hm': 1, 'wh': 4,
# 'reg': 2, 'id': 128}, head_conv=256) instantiated outside the project (the compiled DCN replaced by a stand-in with
# DCNv2's parameters: weight, bias, conv_offset_mask), without base.fc (the ImageNet classifier that
# load_pretrained_model attaches and the network never uses, 512 * 1000 + 1000 = 513,000 more):
#   base (DLA-34 trunk) 15,270,832 + dla_up 3,515,012 + ida_up 425,324
#   + heads hm 147,969 (64*256*9 + 256 + 256*1 + 1) + wh 148,740 + reg 148,226 + id 180,608 = 19,836,711.
OFFICIAL_PARAMETERS = 19_836_711
NUM_IDENTITIES_P1 = 22_883


@pytest.fixture(scope='module', autouse=True)
def scope():
    vastmat_scope()  # register the transforms and models


def build(cfg):
    return build_model(cfg)


def small_head(**kwargs):
    from vastmat.models.dense_heads import FairMOTHead
    args = dict(in_channels=8, head_conv=8, reid_dim=4, num_identities=10)
    args.update(kwargs)
    return FairMOTHead(**args)


def instances(boxes, ids):
    return InstanceData(bboxes=torch.tensor(boxes, dtype=torch.float32),
                        labels=torch.zeros(len(boxes), dtype=torch.long), instances_ids=torch.tensor(ids))


# --------------------------------------------------------------------------------------------------- targets
def test_gaussian_radius_is_the_official_centernet_formula_not_mmdets():
    from mmdet.models.utils.gaussian_target import gaussian_radius as mmdet_radius

    from vastmat.models.dense_heads import gaussian_radius
    # 10 x 10 at IoU 0.7: the third case binds, CenterNet's (b3 + sqrt(b3^2 - 4 a3 c3)) / 2 with b3 = -2 * 0.7 * 20,
    # a3 = 2.8, c3 = -0.3 * 100
    assert gaussian_radius((10, 10)) == pytest.approx((-28 + math.sqrt(28 ** 2 + 4 * 2.8 * 30)) / 2)
    assert gaussian_radius((10, 10)) == pytest.approx(2.7332005306815113)
    assert gaussian_radius((8, 10)) == pytest.approx(2.4319659392908406)
    assert gaussian_radius((40, 20)) == pytest.approx(7.355850717012267)
    # mmdet's corrected roots ((b - sqrt(d)) / 2a, CornerNet-Lite) are smaller: not FairMOT's heatmaps
    assert mmdet_radius((10, 10), 0.7) == pytest.approx(0.8166998673296222)
    assert int(mmdet_radius((10, 10), 0.7)) == 0 and int(gaussian_radius((10, 10))) == 2


def test_targets_on_hand_built_boxes():
    head = small_head()
    # input 64 x 96 (h x w), stride 4: a 16 x 24 map
    boxes = [[10, 12, 50, 44],      # centre (7.5, 7.0), size 10 x 8 on the map
             [-30, 40, -2, 72],     # centre x -4: clipped to 0, the sizes measured from the clipped centre
             [60, 20, 60, 40],      # zero width: no target
             [80, 8, 92, 20]]       # no identity (-1)
    targets = head.get_targets([instances(boxes, [3, 7, 5, -1])], (16, 24), (64, 96))
    hm, mask = targets['hm'][0, 0], targets['reg_mask'][0]
    assert mask.tolist() == [1, 1, 0, 1]
    assert targets['ind'][0].tolist()[:2] == [7 * 24 + 7, 14 * 24 + 0] and targets['ind'][0, 3] == 3 * 24 + 21
    # peaks exactly 1 at the integer centres, nowhere else
    assert hm[7, 7] == 1 and hm[14, 0] == 1 and hm[3, 21] == 1 and int((hm == 1).sum()) == 3
    # box 0: radius int(gaussian_radius((8, 10))) = 2, sigma = (2 * 2 + 1) / 6
    sigma = 5 / 6
    assert hm[7, 8] == pytest.approx(math.exp(-1 / (2 * sigma ** 2)), rel=1e-6)
    assert hm[8, 8] == pytest.approx(math.exp(-2 / (2 * sigma ** 2)), rel=1e-6)
    assert hm[7, 10] == 0 and hm[10, 7] == 0  # beyond the radius
    # ltrb from the (clipped) centre to the box sides, offsets ct - int(ct)
    np.testing.assert_allclose(targets['wh'][0, 0].numpy(), [5, 4, 5, 4])
    np.testing.assert_allclose(targets['reg'][0, 0].numpy(), [0.5, 0.0])
    np.testing.assert_allclose(targets['wh'][0, 1].numpy(), [7.5, 4, -0.5, 4])  # centre clipped from -4 to 0
    np.testing.assert_allclose(targets['reg'][0, 1].numpy(), [0, 0])
    np.testing.assert_allclose(targets['wh'][0, 3].numpy(), [1.5, 1.5, 1.5, 1.5])
    np.testing.assert_allclose(targets['reg'][0, 3].numpy(), [0.5, 0.5])
    assert targets['ids'][0].tolist() == [3, 7, 0, -1]
    # width / height targets instead of ltrb
    wh = small_head(ltrb=False).get_targets([instances(boxes[:1], [3])], (16, 24), (64, 96))['wh']
    np.testing.assert_allclose(wh[0, 0].numpy(), [10, 8])


def test_an_identity_beyond_num_identities_names_the_config_key():
    with pytest.raises(ValueError, match=r'identity 10 >= model\.detector\.bbox_head\.num_identities=10'):
        small_head().get_targets([instances([[0, 0, 8, 8]], [10])], (16, 24), (64, 96))
    with pytest.raises(ValueError, match='num_identities'):
        small_head(num_identities=2)


# ------------------------------------------------------------------------------------------------------ losses
def test_uncertainty_weighting_value_and_gradients():
    from vastmat.models.dense_heads import uncertainty_loss
    s_det = torch.tensor([-1.85], requires_grad=True)
    s_id = torch.tensor([-1.05], requires_grad=True)
    det, ident = uncertainty_loss(torch.tensor(2.0), torch.tensor(3.0), s_det, s_id)
    total = det + ident
    # official MotLoss: 0.5 * (exp(-s_det) * L_det + exp(-s_id) * L_id + s_det + s_id)
    expected = 0.5 * (math.exp(1.85) * 2 + math.exp(1.05) * 3 - 1.85 - 1.05)
    assert float(total.detach()) == pytest.approx(expected, rel=1e-6)
    total.backward()
    assert float(s_det.grad) == pytest.approx(0.5 * (1 - math.exp(1.85) * 2), rel=1e-6)
    assert float(s_id.grad) == pytest.approx(0.5 * (1 - math.exp(1.05) * 3), rel=1e-6)


def test_head_losses_on_fixed_outputs():
    """Zero outputs: heatmap p = 0.5 everywhere, sizes and offsets 0, embeddings 0 (so the logits are the
    classifier's bias, set to 0: cross-entropy ln(num_identities))."""
    head = small_head()
    torch.nn.init.zeros_(head.classifier.weight)
    torch.nn.init.zeros_(head.classifier.bias)
    zeros = [torch.zeros(1, c, 16, 24) for c in (1, 4, 2, 4)]
    gt = [instances([[10, 12, 50, 44], [80, 8, 92, 20]], [3, -1])]
    losses = head.loss_by_feat(*[[z] for z in zeros], gt, [dict(batch_input_shape=(64, 96))])
    # RegL1Loss: sum |target| / (boxes * channels + 1e-4), weighted 0.1 (wh) and 1 (offset)
    assert float(losses['det_wh']) == pytest.approx(0.1 * (18 + 6) / (8 + 1e-4), rel=1e-5)
    assert float(losses['det_off']) == pytest.approx((0.5 + 0.5 + 0.5) / (4 + 1e-4), rel=1e-5)
    assert float(losses['id_ce']) == pytest.approx(math.log(10), rel=1e-5)  # the box without identity is left out
    # focal loss: the positives' -log(0.5) * 0.5^2 and the negatives' -log(0.5) * 0.5^2 * (1 - gt)^4, over 2
    targets = head.get_targets(gt, (16, 24), (64, 96))['hm']
    expected = (math.log(2) * 0.25 * (2 + float(((1 - targets) ** 4 * (targets < 1)).sum()))) / 2
    assert float(losses['det_hm']) == pytest.approx(expected, rel=1e-5)
    det = float(losses['det_hm'] + losses['det_wh'] + losses['det_off'])
    assert float((losses['loss_det'] + losses['loss_id']).detach()) == pytest.approx(
        0.5 * (math.exp(1.85) * det + math.exp(1.05) * math.log(10) - 2.9), rel=1e-5)
    # gradients reach the uncertainty weights
    (losses['loss_det'] + losses['loss_id']).backward()
    assert float(head.s_det.grad) == pytest.approx(0.5 * (1 - math.exp(1.85) * det), rel=1e-5)
    # no identity at all: the ID loss is 0, not NaN
    losses = head.loss_by_feat(*[[z] for z in zeros], [instances([[10, 12, 50, 44]], [-1])],
                               [dict(batch_input_shape=(64, 96))])
    assert float(losses['id_ce']) == 0


# ---------------------------------------------------------------------------------------------------- decoding
def test_decoding_on_a_hand_built_heatmap():
    head = small_head()
    hm = torch.full((1, 1, 16, 24), -10.0)
    hm[0, 0, 3, 5] = 2.0     # a peak
    hm[0, 0, 3, 6] = 1.0     # its neighbour: not a 3x3 maximum
    hm[0, 0, 10, 20] = 0.0   # p = 0.5 > 0.4
    hm[0, 0, 12, 2] = -1.0   # p = 0.27 < 0.4
    wh, reg, emb = torch.zeros(1, 4, 16, 24), torch.zeros(1, 2, 16, 24), torch.zeros(1, 4, 16, 24)
    wh[0, :, 3, 5] = torch.tensor([2.0, 1.0, 3.0, 4.0])
    reg[0, :, 3, 5] = torch.tensor([0.25, 0.5])
    emb[0, :2, 3, 5] = torch.tensor([3.0, 4.0])
    emb[0, 3, 10, 20] = -2.0
    meta = dict(batch_input_shape=(64, 96), img_shape=(64, 96), scale_factor=(0.5, 0.5))
    result = head.predict_by_feat([hm], [wh], [reg], [emb], [meta], rescale=True)[0]
    assert torch.allclose(result.scores, torch.sigmoid(torch.tensor([2.0, 0.0])))
    # centre (5.25, 3.5) -/+ (2, 1, 3, 4) on the map, x4 to the input, / 0.5 to the original frame
    np.testing.assert_allclose(result.bboxes.numpy(), [[26, 20, 66, 60], [160, 80, 160, 80]], atol=1e-5)
    np.testing.assert_allclose(result.features.numpy(), [[0.6, 0.8, 0, 0], [0, 0, 0, -1]], atol=1e-6)
    assert result.labels.tolist() == [0, 0]
    unscaled = head.predict_by_feat([hm], [wh], [reg], [emb], [meta], rescale=False)[0]
    np.testing.assert_allclose(unscaled.bboxes.numpy()[0], [13, 10, 33, 30], atol=1e-5)
    # test_cfg: conf_thres and topk
    assert len(head.predict_by_feat([hm], [wh], [reg], [emb], [meta], cfg=dict(conf_thres=0.2))[0]) == 3
    assert len(head.predict_by_feat([hm], [wh], [reg], [emb], [meta], cfg=dict(topk=1, conf_thres=0.4))[0]) == 1


# ------------------------------------------------------------------------------------- full-size network, names
@pytest.fixture(scope='module')
def p1_detector():
    cfg = Config.fromfile(P1)
    return build(cfg.model.detector)


def test_full_size_network_matches_the_official_parameter_count_and_runs(p1_detector):
    head = p1_detector.bbox_head
    extra = {'bbox_head.classifier.weight', 'bbox_head.classifier.bias', 'bbox_head.s_det', 'bbox_head.s_id'}
    network = sum(p.numel() for n, p in p1_detector.named_parameters() if n not in extra)
    assert network == OFFICIAL_PARAMETERS  # the same architecture: exact (the issue asks for 1 percent)
    # the identity classifier (in the official MotLoss, not the network file) and the two uncertainty weights
    assert sum(p.numel() for p in head.classifier.parameters()) == 128 * NUM_IDENTITIES_P1 + NUM_IDENTITIES_P1
    assert head.emb_scale == pytest.approx(math.sqrt(2) * math.log(NUM_IDENTITIES_P1 - 1))
    p1_detector.eval()
    with torch.no_grad():
        feats = p1_detector.extract_feat(torch.rand(1, 3, 64, 96))
        hm, wh, reg, emb = (o[0] for o in head(feats))
    assert feats[0].shape == (1, 64, 16, 24)
    assert (hm.shape, wh.shape, reg.shape, emb.shape) == ((1, 1, 16, 24), (1, 4, 16, 24), (1, 2, 16, 24),
                                                          (1, 128, 16, 24))
    # official head init: heatmap prior -2.19, zero biases elsewhere
    assert torch.all(head.hm[-1].bias == -2.19) and torch.all(head.wh[0].bias == 0)


def test_official_checkpoint_names_load(p1_detector):
    """A state dict with the official names and shapes (DCNv2's conv_offset_mask, base.fc) loads into the network."""
    from vastmat.models.dense_heads import official_fairmot_state_dict
    shapes = json.load(open(OFFICIAL_SHAPES))['state_dict']
    generator = torch.Generator().manual_seed(0)
    official = {k: torch.rand(v, generator=generator) if v else torch.tensor(7) for k, v in shapes.items()}
    official = {k: v.long() if k.endswith('num_batches_tracked') else v for k, v in official.items()}
    detector = copy.deepcopy(p1_detector)
    result = detector.load_state_dict(official_fairmot_state_dict({f'module.{k}': v for k, v in official.items()}),
                                      strict=False)
    assert set(result.missing_keys) == {'bbox_head.classifier.weight', 'bbox_head.classifier.bias',
                                        'bbox_head.s_det', 'bbox_head.s_id'}
    assert result.unexpected_keys == []
    state = detector.state_dict()
    name = 'dla_up.ida_0.proj_1.conv.conv_offset_mask.weight'
    assert torch.equal(state['backbone.' + name.replace('conv_offset_mask', 'conv_offset')], official[name])
    assert torch.equal(state['bbox_head.id.2.bias'], official['id.2.bias'])
    # the backbone alone, strictly
    backbone = {k: v for k, v in official.items() if k.split('.')[0] in ('base', 'dla_up', 'ida_up')}
    copy.deepcopy(p1_detector.backbone).load_state_dict(backbone, strict=True)


def test_imagenet_dla_checkpoint_loads_into_the_trunk_through_init_cfg(tmp_path):
    """init_cfg=Pretrained with a plain DLA checkpoint (keys base_layer.*, level*.*, fc.*): loads into base."""
    from vastmat.models.backbones import DLASeg
    tiny = dict(levels=(1, 1, 1, 1, 1, 1), channels=(4, 4, 8, 8, 8, 8))
    source = DLASeg(**tiny)
    for p in source.parameters():
        p.data.uniform_()
    plain = {k[len('base.'):]: v for k, v in source.state_dict().items() if k.startswith('base.')}
    plain.update({'fc.weight': torch.zeros(1000, 8, 1, 1), 'fc.bias': torch.zeros(1000)})
    torch.save(plain, tmp_path / 'dla.pth')
    model = DLASeg(**tiny, init_cfg=dict(type='Pretrained', checkpoint=str(tmp_path / 'dla.pth')))
    model.init_weights()
    for key, value in source.state_dict().items():
        if key.startswith('base.'):
            assert torch.equal(model.state_dict()[key], value), key


def test_tracking_model_builds_from_both_protocol_configs():
    for protocol in ('p1', 'p2'):
        cfg = Config.fromfile(osp.join(CONFIGS, f'fairmot_dla34_1xb12-30e_vastmat-{protocol}.py'))
        assert cfg.train_dataloader.dataset.protocol == cfg.test_dataloader.dataset.protocol == f'protocol{protocol[1]}'
        assert cfg.train_dataloader.dataset.instance_ids == 'global'
    model = build(cfg.model)
    assert type(model).__name__ == 'TrackingByDetection' and type(model.tracker).__name__ == 'JDETracker'
    assert model.tracker.conf_thres == 0.4 and model.tracker.aspect_ratio_thresh is None
    preprocessor = model.data_preprocessor
    assert preprocessor.mean.flatten().tolist() == [0, 0, 0] and preprocessor.std.flatten().tolist() == [255] * 3


# -------------------------------------------------------------------------------------------- augmentations
def frame_results(boxes, ids, width=100, height=60):
    from mmdet.structures.bbox import HorizontalBoxes
    n = len(boxes)
    return dict(img=np.full((height, width, 3), 90, np.uint8), img_shape=(height, width),
                gt_bboxes=HorizontalBoxes(np.asarray(boxes, np.float32)),
                gt_bboxes_labels=np.zeros(n, np.int64), gt_ignore_flags=np.zeros(n, bool),
                gt_instances_ids=np.asarray(ids, np.int64), gt_categories=np.asarray(ids, np.int64) + 100,
                gt_groups=np.arange(n, dtype=np.int64))


def test_align_instance_fields_keeps_ids_with_their_boxes_through_mmdet_transforms():
    from vastmat.registry import TRANSFORMS
    # FilterAnnotations drops the 2-px box: its id, category and group go too
    drop = TRANSFORMS.build(dict(type='AlignInstanceFields', transform=dict(type='FilterAnnotations',
                                                                             min_gt_bbox_wh=(3, 3))))
    out = drop(frame_results([[0, 0, 10, 10], [20, 20, 22, 22], [30, 5, 50, 25]], [4, 5, 6]))
    assert out['gt_instances_ids'].tolist() == [4, 6] and out['gt_categories'].tolist() == [104, 106]
    assert out['gt_groups'].tolist() == [0, 2] and out['gt_bboxes_labels'].tolist() == [0, 0]
    # mmdet's RandomAffine, a pure translation that pushes some boxes out: each survivor keeps its own id
    affine = TRANSFORMS.build(dict(type='AlignInstanceFields', transform=dict(
        type='RandomAffine', max_rotate_degree=0, max_shear_degree=0, scaling_ratio_range=(1, 1),
        max_translate_ratio=0.5, bbox_clip_border=False)))
    x1 = np.array([2.0, 25.0, 48.0, 71.0, 90.0])
    seen = set()
    for seed in range(6):
        random.seed(seed)
        np.random.seed(seed)
        out = affine(frame_results([[x, 20, x + 8, 30] for x in x1], [10, 11, 12, 13, 14]))
        boxes = out['gt_bboxes'].numpy()
        shift = boxes[0, 0] - x1[out['gt_instances_ids'][0] - 10] if len(boxes) else 0
        np.testing.assert_allclose(boxes[:, 0], x1[out['gt_instances_ids'] - 10] + shift, atol=1e-3)
        assert (out['gt_categories'] == out['gt_instances_ids'] + 100).all()
        seen.add(len(boxes))
    assert min(seen) < 5  # some draws dropped boxes


def test_fairmot_random_affine_rotates_about_the_centre_and_filters_every_field():
    from vastmat.registry import TRANSFORMS
    affine = TRANSFORMS.build(dict(type='FairMOTRandomAffine'))
    # 90 degrees about (50, 30) of a 100 x 60 image, scale 1, no translation or shear: x' = y + 20, y' = 80 - x;
    # the angle reduction sqrt(max(|sin|, |cos|)) is 1
    affine._random_params = lambda: (90.0, 1.0, 0.0, 0.0, 0.0, 0.0)
    out = affine(frame_results([[40, 20, 60, 30], [0, 0, 10, 10]], [1, 2]))
    np.testing.assert_allclose(out['gt_bboxes'].numpy(), [[40, 20, 50, 40]], atol=1e-4)  # the second left
    assert out['gt_instances_ids'].tolist() == [1] and out['gt_categories'].tolist() == [101]
    assert out['img'].shape == (60, 100, 3)
    # scale 0.5 about the centre; a box that becomes 4 px wide is dropped (official: w > 4 and h > 4)
    affine._random_params = lambda: (0.0, 0.5, 0.0, 0.0, 0.0, 0.0)
    out = affine(frame_results([[30, 10, 70, 50], [10, 10, 18, 40]], [1, 2]))
    np.testing.assert_allclose(out['gt_bboxes'].numpy(), [[40, 20, 60, 40]], atol=1e-4)
    assert out['gt_groups'].tolist() == [0]
    # the warped border is the letterbox grey (127.5 rounds to 128 in uint8)
    assert out['img'][0, 0].tolist() == [128, 128, 128]


def test_fairmot_hsv_scales_saturation_and_value_only():
    from vastmat.registry import TRANSFORMS
    aug = TRANSFORMS.build(dict(type='FairMOTHSVAug', fraction=0.5))
    img = np.zeros((4, 4, 3), np.uint8)
    img[:] = (40, 120, 200)  # BGR
    h0, s0, v0 = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)[0, 0].astype(int)
    aug._gains = lambda: (0.5, 1.5)
    h, s, v = cv2.cvtColor(aug(dict(img=img.copy()))['img'], cv2.COLOR_BGR2HSV)[0, 0].astype(int)
    assert abs(h - h0) <= 1 and abs(s - int(s0 * 0.5)) <= 2 and v == min(255, int(v0 * 1.5))
    random.seed(0)
    fresh = TRANSFORMS.build(dict(type='FairMOTHSVAug', fraction=0.5))
    gains = fresh._gains()
    assert all(0.5 <= g <= 1.5 for g in gains)
    with pytest.raises(TypeError, match='uint8'):
        aug(dict(img=img.astype(np.float32)))


# ---------------------------------------------------------------------------------------------- end to end
@pytest.fixture(scope='session')
def trained_fairmot(demo_root, tmp_path_factory):
    """The tiny config trained 8 iterations on the demo data (iter_4, iter_8), then resumed to 12."""
    work_dir = tmp_path_factory.mktemp('fairmot_tiny')
    tool('tools/train.py', TINY, '--work-dir', work_dir, '--cfg-options', *video_data_root_options(demo_root))
    tool('tools/train.py', TINY, '--work-dir', work_dir, '--resume', '--cfg-options', *video_data_root_options(demo_root),
         'train_cfg.max_iters=12', 'param_scheduler.0.end=12')
    return work_dir


def fixed_batch_loss(cfg, demo_root, checkpoint=None):
    """The model's loss (sum of the 'loss' terms) on the demo's train frames 5 without augmentation, BN frozen."""
    from mmengine.dataset import pseudo_collate

    from vastmat.registry import DATASETS
    dataset_cfg = copy.deepcopy(cfg.train_dataloader.dataset)
    dataset_cfg.update(data_root=demo_root, pipeline=[
        cfg.train_pipeline[0],
        dict(type='TransformBroadcaster', transforms=[
            dict(type='LoadImageFromFile'), dict(type='LoadTrackAnnotations'), cfg.train_pipeline[1].transforms[3]]),
        dict(type='PackVastMATInputs')])
    dataset = DATASETS.build(dataset_cfg)
    batch = pseudo_collate([dataset[(v, 5)] for v in range(len(dataset))])
    torch.manual_seed(0)
    model = build(cfg.model)
    if checkpoint is not None:
        model.load_state_dict(torch.load(checkpoint, weights_only=True)['state_dict'])
    model.eval()
    with torch.no_grad():
        losses = model.loss(**model.data_preprocessor(batch, True))
    return float(sum(v for k, v in losses.items() if 'loss' in k))


@pytest.mark.slow
@pytest.mark.xdist_group('fairmot_tiny')
def test_tiny_fairmot_trains_resumes_and_its_loss_falls(trained_fairmot, demo_root):
    work_dir = trained_fairmot
    last = torch.load(work_dir / 'iter_12.pth', weights_only=True)
    assert last['meta']['iter'] == 12
    history = last['message_hub']['log_scalars']['train/loss']['log_history']
    assert len(history) == 12 and all(math.isfinite(v) for v in history)  # 8 trained + 4 after resuming
    logs = [open(f).read() for f in sorted(glob.glob(str(work_dir / '*' / '*.log')))]
    assert any('resumed epoch: 0, iter: 8' in log for log in logs)
    assert any('VastMATDataset: 30 identities in 8 videos' in log for log in logs)
    cfg = Config.fromfile(TINY)
    start = fixed_batch_loss(cfg, demo_root)
    after = fixed_batch_loss(cfg, demo_root, work_dir / 'iter_12.pth')
    assert after < start - 0.5, (start, after)
    # the uncertainty weights are trained with the network
    assert float(last['state_dict']['detector.bbox_head.s_det']) != pytest.approx(-1.85)


@pytest.mark.slow
@pytest.mark.xdist_group('fairmot_tiny')
def test_tiny_fairmot_tracks_the_demo_test_videos(trained_fairmot, demo_root, tmp_path):
    """Tracking with the network in the loop, its detections and embeddings dumped on the way (--dump-dets); the
    JDE tracker on those cached detections (fairmot_cached-dets.py with the tiny config's tracker settings) gives
    the same tracks."""
    dets = tmp_path / 'dets'
    tool('tools/test.py', TINY, '--checkpoint', trained_fairmot / 'iter_12.pth', '--work-dir', tmp_path / 'loop',
         '--dump-dets', dets, '--cfg-options', *video_data_root_options(demo_root))
    videos = open(osp.join(demo_root, 'splits', 'protocol1', 'test.txt')).read().split()
    for video in videos:
        rows = np.loadtxt(tmp_path / 'loop' / 'results' / f'{video}.txt', delimiter=',', ndmin=2)
        assert len(rows) and rows[:, 0].max() <= 12 and (rows[:, 1] >= 1).all()
    metrics = json.load(open(tmp_path / 'loop' / 'metrics.json'))
    assert 0 <= metrics['vastmat/HOTA'] <= 1 and metrics['vastmat/CLR_FP'] > 0

    from helpers.common import assert_same_tracks
    from vastmat.datasets.formats import read_detections, read_results
    cached = read_detections(str(dets / f'{videos[0]}.txt'))
    assert cached.features.shape[1] == 16 and len(cached.frames)  # the tiny network's 16-d embeddings
    np.testing.assert_allclose(np.linalg.norm(cached.features, axis=1), 1, atol=1e-5)
    tool('tools/test.py', osp.join(CONFIGS, 'fairmot_cached-dets.py'), '--det-root', dets, '--data-root', demo_root,
         '--work-dir', tmp_path / 'cached', '--cfg-options', 'model.tracker.conf_thres=0.05',
         'model.tracker.min_box_area=None')  # the tiny config's tracker
    for video in videos:
        assert_same_tracks(read_results(str(tmp_path / 'cached' / 'results' / f'{video}.txt')),
                           read_results(str(tmp_path / 'loop' / 'results' / f'{video}.txt')), video, atol=0.02)


def test_official_checkpoint_converts_for_the_tracking_model(tmp_path):
    """tools/model_converters/fairmot_official.py: an official-format checkpoint (names and shapes of
    fairmot_dla34.pth, under 'module.' as the official trainer saves it) becomes a plain-data checkpoint of the
    tracking model of the P1 config; everything but the identity classifier and the uncertainty weights loads."""
    shapes = json.load(open(OFFICIAL_SHAPES))['state_dict']
    generator = torch.Generator().manual_seed(1)
    official = {f'module.{k}': (torch.rand(v, generator=generator) if v else torch.tensor(3)) for k, v in shapes.items()}
    torch.save(dict(epoch=30, state_dict=official), tmp_path / 'fairmot_dla34.pth')
    tool('tools/model_converters/fairmot_official.py', tmp_path / 'fairmot_dla34.pth', tmp_path / 'converted.pth')
    checkpoint = torch.load(tmp_path / 'converted.pth', weights_only=True)
    assert checkpoint['meta'] == dict(converted_from='fairmot_dla34.pth', official_epoch=30)
    assert not list(tmp_path.glob('*.tmp'))
    init_default_scope('vastmat')
    from vastmat.registry import MODELS
    model = MODELS.build(Config.fromfile(P1).model)
    result = model.load_state_dict(checkpoint['state_dict'], strict=False)
    assert set(result.missing_keys) == {'detector.bbox_head.classifier.weight', 'detector.bbox_head.classifier.bias',
                                        'detector.bbox_head.s_det', 'detector.bbox_head.s_id'}
    assert result.unexpected_keys == []
    assert torch.equal(model.state_dict()['detector.backbone.base.level0.0.weight'],
                       official['module.base.level0.0.weight'])
    with pytest.raises(ValueError, match="no state dict of tensors under 'state_dict'"):
        torch.save(dict(epoch=1), tmp_path / 'empty.pth')
        tool('tools/model_converters/fairmot_official.py', tmp_path / 'empty.pth', tmp_path / 'x.pth')
