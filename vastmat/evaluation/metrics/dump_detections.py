"""``DumpTrackingDetections``: a detector's boxes written as one det.txt per video, for the trackers to read."""
from __future__ import annotations

import os.path as osp
from collections import defaultdict
from typing import Sequence

import numpy as np
from mmdet.evaluation.metrics.base_video_metric import collect_tracking_results
from mmengine.dist import broadcast_object_list, is_main_process
from mmengine.evaluator import BaseMetric
from mmengine.logging import print_log
from mmengine.structures import BaseDataElement

from vastmat.datasets.formats import Detections, write_detections
from vastmat.registry import METRICS
from vastmat.structures.bbox import xyxy_to_ltwh


@METRICS.register_module()
class DumpTrackingDetections(BaseMetric):
    """Collects the predicted boxes of every frame and writes ``<out_dir>/<video>.txt`` in the MOT det.txt form
    (``frame, -1, left, top, width, height, score, -1, -1, -1``; frames numbered as in the video's own files, i.e.
    ``source_frame``, so a file dumped at one stride pairs with the right frames when tracked at another).

    Works for detector configs (one ``DetDataSample`` per frame) and for tracking models with the detector in the
    loop (track data samples: each frame's ``pred_instances`` are the detector's boxes, with the per-detection
    ``features`` of a joint detection-and-embedding network such as FairMOT, written as extra det.txt columns that
    the cached-detection trackers read). The data samples need ``video_name`` and ``source_frame`` in their metainfo
    (``tools/test.py --dump-dets`` adds them to ``PackDetInputs``; ``PackVastMATInputs`` packs them). Each file is
    written to a temporary name and renamed. Returns no metric.

    Args:
        out_dir: the folder of the det files.
        score_thr: boxes scoring below this are not written (None: every box the detector outputs).
    """

    default_prefix = 'dump'  # it returns no metric; set so that mmengine does not warn about a missing prefix

    def __init__(self, out_dir: str, score_thr: float | None = None, collect_device: str = 'cpu',
                 prefix: str | None = None) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.out_dir, self.score_thr = out_dir, score_thr

    def process(self, data_batch: dict, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            frames = sample.get('_video_data_samples', sample.get('video_data_samples'))
            for frame in frames if frames is not None else [sample]:
                self._process_frame(frame.to_dict() if isinstance(frame, BaseDataElement) else frame)

    def _process_frame(self, sample: dict) -> None:
        for key in ('video_name', 'source_frame'):
            if key not in sample:
                raise KeyError(f'DumpTrackingDetections: the data samples have no {key!r}: use VastMATDataset, '
                               "which provides it, and add it to PackDetInputs' meta_keys (tools/test.py "
                               '--dump-dets does)')
        if 'pred_instances' not in sample:
            raise KeyError('DumpTrackingDetections: a frame has no pred_instances (a tracking model gives them when '
                           'its detector runs in the loop; with cached detections there is nothing to dump)')
        pred = sample['pred_instances']
        boxes = pred['bboxes'].cpu().double().numpy().reshape(-1, 4)
        scores = pred['scores'].cpu().double().numpy()
        features = pred.get('features')
        features = (np.zeros((len(scores), 0)) if features is None
                    else features.detach().cpu().double().numpy().reshape(len(scores), -1))
        if self.score_thr is not None:
            keep = scores >= self.score_thr
            boxes, scores, features = boxes[keep], scores[keep], features[keep]
        self.results.append(dict(video=sample['video_name'], frame=int(sample['source_frame']), boxes=boxes,
                                 scores=scores, features=features))

    def evaluate(self, size: int) -> dict:
        """Collect every process's frames and write the files. mmengine's ``BaseMetric.evaluate`` keeps the first
        ``size`` results, the dataset's length, which counts videos, not frames, for a video dataset; here every
        frame is kept (as mmdet's video metrics do) and frames seen twice (a distributed sampler's padding) once."""
        results = collect_tracking_results(self.results, self.collect_device)
        metrics = [self.compute_metrics(results) if is_main_process() else None]
        broadcast_object_list(metrics)
        self.results.clear()
        return metrics[0]

    def compute_metrics(self, results: list) -> dict:
        by_video = defaultdict(list)
        for record in {(r['video'], r['frame']): r for r in results}.values():
            by_video[record['video']].append(record)
        total = 0
        for video, records in sorted(by_video.items()):
            records.sort(key=lambda r: r['frame'])
            boxes = np.concatenate([r['boxes'] for r in records]).reshape(-1, 4)
            frames = np.concatenate([np.full(len(r['scores']), r['frame']) for r in records]).astype(np.int64)
            scores = np.concatenate([r['scores'] for r in records])
            dims = {r['features'].shape[1] for r in records if len(r['scores'])}
            if len(dims) > 1:
                raise ValueError(f'DumpTrackingDetections: video {video}: frames with different feature sizes '
                                 f'{sorted(dims)}')
            dim = dims.pop() if dims else 0
            features = np.concatenate([r['features'].reshape(len(r['scores']), dim) for r in records])
            dets = Detections(frames, xyxy_to_ltwh(boxes), scores, features, np.arange(1, len(frames) + 1))
            write_detections(osp.join(self.out_dir, f'{video}.txt'), dets, decimals=2)
            total += len(frames)
        print_log(f'DumpTrackingDetections: {total} boxes of {len(by_video)} videos written to {self.out_dir}',
                  'current')
        return {}
