"""Association apart from detection (vastmat/benchmarks/association_split.py) and the overfit benchmark's root and
recipe (vastmat/benchmarks/overfit.py)."""
import json
import os.path as osp

import numpy as np
import pytest
from mmengine.config import Config

from helpers.common import REPO, SHARED_DATA
from vastmat.benchmarks.association_split import association_split
from vastmat.datasets.formats import GroundTruth, TrackResults, read_gt, read_results
from vastmat.evaluation.oracle_association import truth_identities
from vastmat.benchmarks.overfit import make_overfit_root, overfit_recipe
from vastmat.structures.bbox import ltwh_to_xyxy, paired_iou

AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')


def _results(frames, boxes):
    n = len(frames)
    return TrackResults(np.asarray(frames), np.arange(100, 100 + n), np.asarray(boxes, float), np.full(n, 0.9),
                        np.arange(1, n + 1))


def test_truth_identities_one_to_one_at_iou_half():
    gt_frames = np.array([1, 1, 2])
    gt_ids = np.array([7, 8, 7])
    gt_boxes = np.array([[0, 0, 10, 10], [20, 0, 10, 10], [2, 0, 10, 10]], float)
    # frame 1: two boxes on gt 7 (the better one takes it), one on gt 8 at IoU 1/3 (dropped); frame 2: one match;
    # frame 3: no ground truth
    results = _results([1, 1, 1, 2, 3], [[0, 0, 10, 10], [1, 0, 10, 10], [25, 0, 10, 10], [2, 0, 10, 10],
                                         [0, 0, 10, 10]])
    gt = GroundTruth(gt_frames, gt_ids, gt_boxes, np.ones(3, np.int64), np.full(3, -1), np.full(3, -1.0), np.arange(3))
    out = truth_identities(results, gt)
    assert out.frames.tolist() == [1, 2]
    assert out.ids.tolist() == [7, 7]
    assert out.boxes.tolist() == [[0, 0, 10, 10], [2, 0, 10, 10]]


@pytest.mark.skipif(not osp.isdir(osp.join(AT10, 'trackers', 'ByteTrack')),
                    reason=f'{AT10}: not found (../shared/data beside the clone)')
def test_association_split_on_the_official_bytetrack_outputs(tmp_path):
    """The official ByteTrack's outputs on AnimalTrack at 10 FPS: its own identities score the reference metrics,
    truth identities keep only boxes at IoU >= 0.5 with their ground-truth box and associate at least as well."""
    videos = ['chicken_3', 'deer_4']
    data_root, results = osp.join(AT10, 'gt'), osp.join(AT10, 'trackers', 'ByteTrack')
    ways = association_split(data_root, results, videos, str(tmp_path))
    reference = json.load(open(osp.join(AT10, 'reference_metrics_trackeval.json')))['ByteTrack']
    per_video = json.load(open(tmp_path / 'own_metrics.json'))
    for video in videos:
        assert per_video[video]['HOTA'] == pytest.approx(reference[video]['HOTA'], abs=1e-6)
        assert per_video[video]['IDSW'] == reference[video]['IDSW']
    assert ways['truth']['AssA'] > ways['own']['AssA']
    assert ways['truth']['IDSW'] == 0
    for way in ways.values():
        assert 0 < way['HOTA'] <= 1
    for video in videos:
        truth = read_results(str(tmp_path / 'truth' / 'results' / f'{video}.txt'))
        gt = read_gt(osp.join(data_root, video, 'gt', 'gt.txt'))
        index = {(f, i): k for k, (f, i) in enumerate(zip(gt.frames.tolist(), gt.ids.tolist()))}
        rows = [index[(f, i)] for f, i in zip(truth.frames.tolist(), truth.ids.tolist())]
        assert paired_iou(ltwh_to_xyxy(truth.boxes), ltwh_to_xyxy(gt.boxes[rows])).min() >= 0.5 - 1e-3
        assert len(truth) > 0.8 * len(read_results(osp.join(results, f'{video}.txt')))


def test_overfit_root_lists_the_videos_in_train_and_test(tmp_path):
    from vastmat.datasets.sequences import read_split
    source = tmp_path / 'src'
    for name in ('A-1', 'B-1'):
        (source / 'videos' / name).mkdir(parents=True)
        (source / 'videos' / name / 'seqinfo.ini').write_text(f'[Sequence]\nname={name}\nseqLength=1\n')
    (source / 'meta').mkdir()
    (source / 'meta' / 'categories.tsv').write_text('id\tname\tgroup\n')
    root = make_overfit_root(str(source), ['B-1'], str(tmp_path / 'overfit'))
    assert read_split(root, 'protocol1', 'train') == read_split(root, 'protocol1', 'test') == ['B-1']
    assert osp.islink(osp.join(root, 'videos', 'B-1'))
    with pytest.raises(FileNotFoundError, match='C-1'):
        make_overfit_root(str(source), ['C-1'], str(tmp_path / 'other'))


@pytest.mark.parametrize('config', ['yolox/yolox_tiny_1xb8-1200it_vastmat-demo.py',
                                    'fairmot/fairmot_tiny_zoo_vastmat-demo.py',
                                    'transtrack/transtrack_tiny_zoo_vastmat-demo.py',
                                    'motip/motip_tiny_zoo_vastmat-demo.py', 'reid/reid_tiny_zoo_vastmat-demo.py',
                                    'motip/motip_tiny_zoo_vastmat-demo_detr-pretrain.py'])
def test_overfit_recipe_drops_random_augmentations_only(config):
    cfg = overfit_recipe(Config.fromfile(osp.join(REPO, 'configs', config)))
    dataset = cfg.train_dataloader.dataset

    def types(pipeline):
        for t in pipeline:
            yield t['type']
            yield from types(t.get('transforms') or [])

    kept = set(types(dataset.get('pipeline') or [])) | set(types(dataset.get('dataset', {}).get('pipeline') or []))
    assert not kept & {'RandomFlip', 'YOLOXHSVRandomAug', 'RandomAffine', 'FairMOTRandomAffine', 'RandomCrop',
                       'RandomChoiceResize', 'ClipColorJitter', 'RandomApply'}
    assert kept & {'Resize', 'FixShapeResize'}  # the test scale
    assert cfg.model == Config.fromfile(osp.join(REPO, 'configs', config)).model  # the model as it was


def test_overfit_recipe_samples_the_tiny_configs_without_end():
    """The learning curves' tiny configs sample finitely; on one short video the recipe makes them endless."""
    sampler = overfit_recipe(Config.fromfile(osp.join(REPO, 'configs', 'qdtrack',
                                                      'qdtrack_tiny_vastmat-demo.py'))).train_dataloader.sampler
    assert sampler.type == 'InfiniteTrackImgSampler'


def test_overfit_recipe_trains_d2mp_at_the_official_rate_for_longer():
    source = Config.fromfile(osp.join(REPO, 'configs', 'd2mp', 'd2mp_tiny_zoo_vastmat-demo.py'))
    cfg = overfit_recipe(Config.fromfile(osp.join(REPO, 'configs', 'd2mp', 'd2mp_tiny_zoo_vastmat-demo.py')))
    assert source.optim_wrapper.optimizer.lr == 1e-3 and source.train_cfg.max_iters == 100  # the zoo's
    assert cfg.optim_wrapper.optimizer.lr == 1e-4 and cfg.train_cfg.max_iters == 2000  # official rate, memorises
    assert cfg.model == source.model


@pytest.mark.parametrize('config, iters', [('motip/motip_tiny_zoo_vastmat-demo.py', 3000),
                                           ('transtrack/transtrack_tiny_zoo_vastmat-demo.py', 3000),
                                           ('qdtrack/qdtrack_tiny_zoo_vastmat-demo.py', 1500)])
def test_overfit_recipe_stretches_the_zoo_schedule_keeping_the_warm_up(config, iters):
    source = Config.fromfile(osp.join(REPO, 'configs', config))
    cfg = overfit_recipe(Config.fromfile(osp.join(REPO, 'configs', config)))
    assert cfg.train_cfg.max_iters == iters > source.train_cfg.max_iters
    warm_up, decay = cfg.param_scheduler
    assert (warm_up.type, warm_up.end) == ('LinearLR', source.param_scheduler[0].end)  # kept
    assert (decay.type, decay.begin, decay.end) == ('CosineAnnealingLR', source.param_scheduler[1].begin, iters)
    assert cfg.optim_wrapper == source.optim_wrapper and cfg.model == source.model
