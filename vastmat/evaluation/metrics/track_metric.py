"""``VastMATMetric``: TrackEval-backed tracking metrics inside ``tools/test.py``."""
from __future__ import annotations

import logging
import os
import os.path as osp
import tempfile
from collections import defaultdict
from typing import Sequence

import numpy as np
from mmdet.evaluation.metrics.base_video_metric import BaseVideoMetric
from mmengine.logging import print_log

from vastmat.datasets.formats import read_gt, track_rows_to_results, write_gt, write_results
from vastmat.registry import METRICS
from vastmat.utils.io import write_json_atomic

from ..mot_eval import PRESETS, SUMMARY_KEYS, SequenceSpec, evaluate


@METRICS.register_module()
class VastMATMetric(BaseVideoMetric):
    """HOTA, CLEAR and Identity metrics of tracking predictions against each video's own gt.txt.

    The ground truth is read from ``<video dir>/gt/gt.txt`` with its float boxes, not rebuilt from the data samples;
    frames are identified by their number in the video's own files (``source_frame``, from VastMATDataset; other
    datasets: the image file number), so strided datasets are scored on the same frames of the ground truth. When
    the model post-processed a video (``pred_video_tracks`` on its last frame), those tracks are the results.

    Args:
        preset: ``vastmat`` (valid=0 rows ignored), ``mot15``, ``mot17`` or ``mot20``.
        outfile_dir: where ``results/<video>.txt`` and ``metrics_per_video.json`` are written (default: a temporary
            folder, removed afterwards).
        workers: processes for the per-video evaluation.
    """

    default_prefix = 'vastmat'

    def __init__(self, preset: str = 'vastmat', outfile_dir: str | None = None, workers: int = 1,
                 collect_device: str = 'cpu', prefix: str | None = None) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        if preset not in PRESETS:
            raise KeyError(f'VastMATMetric: unknown preset {preset!r}; presets are {", ".join(PRESETS)}')
        self.preset, self.outfile_dir, self.workers = preset, outfile_dir, workers

    def _frame_record(self, sample) -> dict:
        pred = sample.pred_track_instances
        meta = sample.metainfo
        img_path = meta.get('img_path')
        video_dir = meta.get('video_dir') or osp.dirname(osp.dirname(img_path))
        source_frame = meta.get('source_frame') or int(osp.splitext(osp.basename(img_path))[0])
        return dict(video_dir=video_dir, source_frame=int(source_frame), frame_id=int(sample.frame_id),
                    video_length=int(sample.ori_video_length), bboxes=pred.bboxes.cpu().numpy(),
                    ids=pred.instances_id.cpu().numpy(), scores=pred.scores.cpu().numpy(),
                    video_tracks=sample.get('pred_video_tracks'))

    def process_video(self, data_samples: Sequence) -> None:
        self.results.extend(self._frame_record(s) for s in data_samples)

    def process_image(self, data_samples: Sequence, ori_video_len: int) -> None:
        self.results.extend(self._frame_record(s) for s in data_samples)

    def compute_metrics(self, results: list) -> dict:
        by_video = defaultdict(list)
        for record in results:
            by_video[record['video_dir']].append(record)
        with tempfile.TemporaryDirectory() as tmp:
            out_dir = self.outfile_dir or tmp
            specs = [self._write_video(video_dir, records, out_dir, tmp)
                     for video_dir, records in sorted(by_video.items())]
            without_gt = [osp.basename(d) for d, spec in zip(sorted(by_video), specs) if spec is None]
            if without_gt:
                print_log(f'VastMATMetric: results written to {out_dir}/results; {len(without_gt)} video(s) have no '
                          f'gt/gt.txt and are not scored: {", ".join(without_gt[:5])}', 'current',
                          level=logging.WARNING)
            specs = [spec for spec in specs if spec is not None]
            if not specs:
                return {}
            per_video = evaluate(specs, self.preset, self.workers)
        if self.outfile_dir:
            write_json_atomic(per_video, osp.join(self.outfile_dir, 'metrics_per_video.json'))
        return {key: per_video['COMBINED'][key] for key in SUMMARY_KEYS}

    @staticmethod
    def _write_video(video_dir: str, records: list[dict], out_dir: str, tmp: str) -> SequenceSpec | None:
        """Write the video's results (frames numbered in the dataset's order) and, for a strided dataset, the
        ground truth of the same frames; None when the video has no ground truth."""
        name = osp.basename(video_dir)
        records = sorted(records, key=lambda r: r['frame_id'])
        length = records[0]['video_length']
        video_tracks = [r['video_tracks'] for r in records if r['video_tracks'] is not None]
        if video_tracks:  # post-processed by the model: rows frame, id, x1, y1, x2, y2, score
            rows = np.asarray(video_tracks[-1], np.float64).reshape(-1, 7)
        else:
            rows = np.concatenate([np.column_stack([np.full(len(r['ids']), r['frame_id'] + 1), r['ids'],
                                                    np.asarray(r['bboxes']).reshape(-1, 4), r['scores']])
                                   for r in records]).reshape(-1, 7)
        results = track_rows_to_results(rows)
        result_path = osp.join(out_dir, 'results', f'{name}.txt')
        write_results(result_path, results, decimals=3)
        gt_path = osp.join(video_dir, 'gt', 'gt.txt')
        if not osp.isfile(gt_path):
            return None
        source = {r['frame_id'] + 1: r['source_frame'] for r in records}
        if any(frame != src for frame, src in source.items()):
            gt = read_gt(gt_path)
            to_frame = {src: frame for frame, src in source.items()}
            keep = np.isin(gt.frames, list(to_frame))
            gt = gt.select(keep)
            gt.frames = np.array([to_frame[f] for f in gt.frames.tolist()], np.int64)
            gt_path = osp.join(tmp, 'gt', name, 'gt.txt')
            os.makedirs(osp.dirname(gt_path), exist_ok=True)
            write_gt(gt_path, gt, decimals=6)
        return SequenceSpec(name, gt_path, result_path, length)
