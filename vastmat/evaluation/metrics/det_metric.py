"""COCO detection metrics of the single class ``animal``, overall and per animal group (paper Tables 4, 14, 15)."""
from __future__ import annotations

import contextlib
import io
from collections import defaultdict
from typing import Sequence

import numpy as np
from mmengine.evaluator import BaseMetric
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from vastmat.datasets.categories import GROUPS
from vastmat.registry import METRICS

# COCOeval.stats order (maxDets 1, 10, 100)
COCO_STATS = ('AP', 'AP50', 'AP75', 'AP_small', 'AP_medium', 'AP_large', 'AR@1', 'AR@10', 'AR@100', 'AR_small',
              'AR_medium', 'AR_large')


def coco_detection_stats(images: list[dict]) -> dict[str, float]:
    """COCO box metrics (pycocotools) of one class.

    Args:
        images: per image ``dict(gt_bboxes=(n, 4) xyxy, gt_ignore=(n,) bool, pred_bboxes=(m, 4) xyxy,
            pred_scores=(m,))``; ignored ground truth is a COCO crowd box (matching it is neither TP nor FP).
    """
    gt = dict(images=[], annotations=[], categories=[dict(id=1, name='animal')])
    detections = []
    for image_id, image in enumerate(images, start=1):
        gt['images'].append(dict(id=image_id))
        for box, ignore in zip(np.asarray(image['gt_bboxes'], float).reshape(-1, 4),
                               np.asarray(image['gt_ignore'], bool).reshape(-1)):
            w, h = box[2] - box[0], box[3] - box[1]
            gt['annotations'].append(dict(id=len(gt['annotations']) + 1, image_id=image_id, category_id=1,
                                          bbox=[box[0], box[1], w, h], area=w * h, iscrowd=int(ignore)))
        for box, score in zip(np.asarray(image['pred_bboxes'], float).reshape(-1, 4),
                              np.asarray(image['pred_scores'], float).reshape(-1)):
            detections.append(dict(image_id=image_id, category_id=1, score=float(score),
                                   bbox=[box[0], box[1], box[2] - box[0], box[3] - box[1]]))
    if not gt['annotations']:
        return {k: float('nan') for k in COCO_STATS}  # nothing to find: AP and AR are undefined
    if not detections:
        return {k: 0.0 for k in COCO_STATS}
    with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints its progress
        coco_gt = COCO()
        coco_gt.dataset = gt
        coco_gt.createIndex()
        evaluator = COCOeval(coco_gt, coco_gt.loadRes(detections), 'bbox')
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    return {k: float(v) for k, v in zip(COCO_STATS, evaluator.stats)}


@METRICS.register_module()
class VastMATDetMetric(BaseMetric):
    """COCO AP, AP50, AP75, AR@1/10/100 of the class ``animal`` over all images and per animal group.

    The group results take the images (frames) that hold an instance of the group and every prediction on them.
    Needs ``'instances'`` among the packed meta keys (``PackDetInputs(meta_keys=(..., 'instances'))``), whose
    items carry ``bbox``, ``ignore_flag`` and ``group`` (as :class:`VastMATDataset` writes them).
    """

    default_prefix = 'det'

    def __init__(self, per_group: bool = True, collect_device: str = 'cpu', prefix: str | None = None) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.per_group = per_group

    def process(self, data_batch: dict, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            if 'instances' not in sample:
                raise KeyError("VastMATDetMetric needs the ground truth: add 'instances' to PackDetInputs' meta_keys")
            instances = sample['instances']
            pred = sample['pred_instances']
            self.results.append(dict(
                gt_bboxes=np.array([i['bbox'] for i in instances], float).reshape(-1, 4),
                gt_ignore=np.array([bool(i.get('ignore_flag', 0)) for i in instances]),
                groups={GROUPS[i['group']] for i in instances if i.get('group', -1) >= 0},
                pred_bboxes=pred['bboxes'].cpu().numpy(), pred_scores=pred['scores'].cpu().numpy()))

    def compute_metrics(self, results: list) -> dict:
        metrics = coco_detection_stats(results)
        if self.per_group:
            members = defaultdict(list)
            for image in results:
                for group in image['groups']:
                    members[group].append(image)
            for group in GROUPS:
                if members[group]:
                    for key, value in coco_detection_stats(members[group]).items():
                        metrics[f'{group}/{key}'] = value
        return metrics
