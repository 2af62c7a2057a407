"""The official COCO Deformable DETR as MOTIP's starting point: tools/model_converters/deformable_detr_official.py
(vastmat.models.mot.official_detr) against the official model after the official load_detr_pretrain (MCG-NJU/MOTIP
5cfbcd4; its forward recorded by tests/fixtures/motip_train_official/make_golden.py, converter_forward.pt), from
the same seeded weights in the official naming; and the full-size configs' starting points."""
import argparse
import os.path as osp

import pytest
import torch
from mmengine.config import Config

from helpers.common import REPO, build_model, tool, vastmat_scope
from helpers.detr_official_weights import official_detr_weights, read_shapes
from helpers.detr_samples import frame_sample
from helpers.motip_train_inputs import HEIGHT, WEIGHT_SEED, WIDTH, clip_images, narrow_model_cfg, normalized

FIXTURES = osp.join(REPO, 'tests', 'fixtures', 'motip_train_official')
CONFIGS = osp.join(REPO, 'configs', 'motip')
P1 = osp.join(CONFIGS, 'motip_r50_8xb1-10e_vastmat-p1.py')
CONVERTER = 'tools/model_converters/deformable_detr_official.py'


@pytest.fixture(scope='module', autouse=True)
def scope():
    vastmat_scope('vastmat.engine')


@pytest.fixture(scope='module')
def official_checkpoint(tmp_path_factory):
    """An official-format COCO checkpoint (91-row class heads, the official keys; args as a Namespace)."""
    shapes = read_shapes(osp.join(FIXTURES, 'detr_shapes.json'))
    path = tmp_path_factory.mktemp('coco') / 'r50_deformable_detr_plus_iterative_bbox_refinement-checkpoint.pth'
    torch.save(dict(model=official_detr_weights(shapes, WEIGHT_SEED), epoch=49,
                    args=argparse.Namespace(with_box_refine=True)), path)
    return path


@pytest.mark.parametrize('coco_class', ['person', 'bird'])
def test_converted_coco_detr_gives_the_official_forward(official_checkpoint, tmp_path, coco_class):
    """The converted checkpoint, loaded as load_from loads it into the narrow MOTIP (full-size neck with the conv
    bias), gives the official one-class DETR's logits and boxes of every decoder layer and its hs[-1]."""
    target = tmp_path / 'converted.pth'
    tool(CONVERTER, official_checkpoint, target, '--coco-class', coco_class)
    assert not list(tmp_path.glob('*.tmp'))
    checkpoint = torch.load(target, weights_only=True)
    assert checkpoint['meta'] == dict(converted_from=official_checkpoint.name,
                                      coco_class={'person': 1, 'bird': 16}[coco_class], official_epoch=49)
    model = build_model(narrow_model_cfg(Config.fromfile(P1)), seed=0)
    result = model.load_state_dict(checkpoint['state_dict'], strict=False)
    assert result.unexpected_keys == []
    assert result.missing_keys and all(k.startswith('tracker.') for k in result.missing_keys)
    detector = model.detector.eval()
    with torch.no_grad():
        out = detector.forward_transformer(detector.extract_feat(normalized(clip_images()[:1])),
                                           [frame_sample(0, HEIGHT, WIDTH)])
        logits, boxes = detector.bbox_head(out['hidden_states'], out['references'])
    official = torch.load(osp.join(FIXTURES, 'converter_forward.pt'), weights_only=True)[coco_class]
    torch.testing.assert_close(logits, official['logits'], rtol=0, atol=2e-5)
    torch.testing.assert_close(boxes, official['boxes'], rtol=0, atol=2e-6)
    torch.testing.assert_close(out['hidden_states'][-1], official['outputs'], rtol=0, atol=2e-5)


def test_converter_refuses_what_it_cannot_convert(tmp_path, official_checkpoint):
    from vastmat.models.mot import official_deformable_detr_state_dict, official_one_class_head
    torch.save(dict(epoch=1), tmp_path / 'empty.pth')
    with pytest.raises(ValueError, match="no state dict of tensors under 'model'"):
        tool(CONVERTER, tmp_path / 'empty.pth', tmp_path / 'x.pth')
    with pytest.raises(SystemExit):
        tool(CONVERTER, official_checkpoint, tmp_path / 'x.pth', '--coco-class', 'unicorn')
    with pytest.raises(KeyError, match='transformer.unknown.weight'):
        official_deformable_detr_state_dict({'transformer.unknown.weight': torch.zeros(1)})
    with pytest.raises(ValueError, match='class_embed.0.bias.*20 rows'):
        official_one_class_head({'class_embed.0.bias': torch.zeros(20)})


def test_full_size_configs_name_their_starting_points():
    """The DETR pre-training starts from the converted COCO Deformable DETR, MOTIP from the pre-training's last
    checkpoint (the official DETR_PRETRAIN chain); the tiny demo configs start from nothing."""
    pretrain = 'checkpoints/deformable_detr_r50_refine_coco_person_vastmat.pth'
    for protocol in ('p1', 'p2'):
        assert Config.fromfile(osp.join(CONFIGS, f'motip_r50_8xb2-20e_vastmat-{protocol}_detr-pretrain.py')
                               ).load_from == pretrain
        assert Config.fromfile(osp.join(CONFIGS, f'motip_r50_8xb1-10e_vastmat-{protocol}.py')).load_from == (
            f'work_dirs/motip_r50_8xb2-20e_vastmat-{protocol}_detr-pretrain/epoch_20.pth')
    for name in ('motip_tiny_vastmat-demo.py', 'motip_tiny_zoo_vastmat-demo.py'):
        assert Config.fromfile(osp.join(CONFIGS, name)).load_from is None
