"""The detection metric (COCO, per group) and the tracking metric used inside tools/test.py."""
import numpy as np
import pytest
import torch
from mmdet.structures import DetDataSample
from mmengine.structures import InstanceData

from vastmat.datasets.categories import GROUPS
from vastmat.datasets.sequences import list_sequences, load_sequence
from vastmat.evaluation import VastMATDetMetric, VastMATMetric
from vastmat.evaluation.metrics import coco_detection_stats


def _image(gt, pred, scores, ignore=None):
    gt = np.array(gt, float).reshape(-1, 4)
    return dict(gt_bboxes=gt, gt_ignore=np.zeros(len(gt), bool) if ignore is None else np.array(ignore),
                pred_bboxes=np.array(pred, float).reshape(-1, 4), pred_scores=np.array(scores, float))


def test_ground_truth_against_itself_is_perfect():
    rng = np.random.default_rng(0)
    images = []
    for _ in range(5):
        xy = rng.uniform(0, 500, size=(6, 2))
        boxes = np.hstack([xy, xy + rng.uniform(10, 200, size=(6, 2))])
        images.append(_image(boxes, boxes, np.linspace(0.9, 0.4, 6)))
    stats = coco_detection_stats(images)
    assert stats['AP'] == stats['AP50'] == stats['AP75'] == stats['AR@100'] == pytest.approx(1.0)


def test_hand_built_case():
    # two animals: one found exactly (score .9), one missed; one false positive (score .8) ranked second
    stats = coco_detection_stats([_image([[0, 0, 100, 100], [200, 200, 300, 300]],
                                         [[0, 0, 100, 100], [500, 500, 560, 560]], [0.9, 0.8])])
    # precision 1 up to recall 0.5, nothing beyond: 51 of COCO's 101 recall points
    assert stats['AP'] == pytest.approx(51 / 101, abs=1e-12) and stats['AP50'] == pytest.approx(51 / 101, abs=1e-12)
    assert stats['AR@1'] == stats['AR@10'] == stats['AR@100'] == pytest.approx(0.5)
    # a box on an ignored animal is not a false positive
    ignored = coco_detection_stats([_image([[0, 0, 100, 100], [200, 200, 300, 300]],
                                           [[0, 0, 100, 100], [200, 200, 300, 300]], [0.9, 0.95], [False, True])])
    assert ignored['AP'] == pytest.approx(1.0)


def test_det_metric_per_group():
    metric = VastMATDetMetric()
    samples = []
    for group, boxes in (('mammal', [[0, 0, 50, 50]]), ('fish', [[10, 10, 60, 60], [100, 100, 150, 150]])):
        instances = [dict(bbox=b, ignore_flag=0, group=GROUPS.index(group)) for b in boxes]
        pred = dict(bboxes=torch.tensor(boxes[:1], dtype=torch.float32), scores=torch.tensor([0.9]))
        samples.append(dict(instances=instances, pred_instances=pred))
    metric.process({}, samples)
    metrics = metric.compute_metrics(metric.results)
    assert metrics['mammal/AP'] == pytest.approx(1.0)
    assert metrics['fish/AR@100'] == pytest.approx(0.5) and 'bird/AP' not in metrics
    assert metrics['AR@100'] == pytest.approx(2 / 3)


def _track_samples(root, name, stride=1):
    seq = load_sequence(root, name, stride=stride)
    gt = seq.gt
    samples = []
    for frame in range(1, seq.length + 1):
        rows = gt.frames == frame
        boxes = gt.boxes[rows]
        sample = DetDataSample(metainfo=dict(img_path=seq.image_path(frame), frame_id=frame - 1,
                                             ori_video_length=seq.length))
        sample.pred_track_instances = InstanceData(
            bboxes=torch.tensor(np.hstack([boxes[:, :2], boxes[:, :2] + boxes[:, 2:]])),
            instances_id=torch.tensor(gt.ids[rows]), scores=torch.ones(int(rows.sum())))
        samples.append(sample)
    return samples


@pytest.mark.parametrize('stride', [1, 2])
def test_track_metric_scores_ground_truth_as_perfect(demo_root, tmp_path, stride):
    metric = VastMATMetric(outfile_dir=str(tmp_path))
    for name in list_sequences(demo_root)[:3]:
        metric.process_video(_track_samples(demo_root, name, stride))
    metrics = metric.evaluate(3)
    assert metrics['vastmat/HOTA'] == metrics['vastmat/MOTA'] == metrics['vastmat/IDF1'] == pytest.approx(1.0)
    assert (tmp_path / 'results' / f'{list_sequences(demo_root)[0]}.txt').exists()
    assert (tmp_path / 'metrics_per_video.json').exists()


def test_track_metric_counts_misses(demo_root):
    metric = VastMATMetric()
    name = list_sequences(demo_root)[0]
    samples = _track_samples(demo_root, name)
    for sample in samples[::2]:  # drop every prediction on odd frames
        sample.pred_track_instances = sample.pred_track_instances[:0]
    metric.process_video(samples)
    metrics = metric.evaluate(1)
    gt = load_sequence(demo_root, name).gt
    missed = int(((gt.frames % 2 == 1) & (gt.valid == 1)).sum())
    assert metrics['vastmat/CLR_FN'] == missed and metrics['vastmat/CLR_FP'] == 0
