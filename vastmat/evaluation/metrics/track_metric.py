"""``VastMATMetric``: TrackEval-backed tracking metrics inside ``tools/test.py``."""
from __future__ import annotations

import logging
import os
import os.path as osp
import tempfile
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Sequence

import numpy as np
from mmdet.evaluation.metrics.base_video_metric import BaseVideoMetric
from mmengine.logging import print_log

from vastmat.datasets.formats import read_gt, track_rows_to_results, write_gt, write_results
from vastmat.registry import METRICS
from vastmat.utils.io import write_json_atomic

from ..mot_eval import PRESETS, SUMMARY_KEYS, SequenceSpec, evaluate_sequence, summarize


@METRICS.register_module()
class VastMATMetric(BaseVideoMetric):
    """HOTA, CLEAR and Identity metrics of tracking predictions against each video's own gt.txt.

    The ground truth is read from ``<video dir>/gt/gt.txt`` with its float boxes, not rebuilt from the data samples;
    frames are identified by their number in the video's own files (``source_frame``, from VastMATDataset; other
    datasets: the image file number), so strided datasets are scored on the same frames of the ground truth.

    Each video is finished as soon as its last prediction arrives: its results file is written once
    (``results/<video>.txt``, atomically) from the model's final tracks (``pred_video_tracks``, post-processed: on a
    whole-video sample of :class:`~vastmat.datasets.transforms.PackVideoTrackingInputs`, or on a video's last frame)
    or else from the frames' ``pred_track_instances``, and it is handed to the scoring processes while the next
    videos are tracked. Under ``tools/dist_test.sh`` each rank scores its own videos; rank 0 combines them.

    Args:
        preset: ``vastmat`` (valid=0 rows ignored), ``mot15``, ``mot17`` or ``mot20``.
        outfile_dir: where ``results/<video>.txt`` and ``metrics_per_video.json`` are written (default: a temporary
            folder, removed afterwards).
        workers: processes scoring finished videos alongside the tracking (``tools/test.py --workers``); 0: score
            in this process after the last video.
    """

    default_prefix = 'vastmat'

    def __init__(self, preset: str = 'vastmat', outfile_dir: str | None = None, workers: int = 1,
                 collect_device: str = 'cpu', prefix: str | None = None) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        if preset not in PRESETS:
            raise KeyError(f'VastMATMetric: unknown preset {preset!r}; presets are {", ".join(PRESETS)}')
        if not isinstance(workers, int) or workers < 0:
            raise ValueError(f'VastMATMetric: workers must be an integer >= 0, got {workers!r}')
        self.preset, self.outfile_dir, self.workers = preset, outfile_dir, workers
        self._open_videos: dict[str, list[dict]] = {}  # video dir -> frame records of a video not finished yet
        self._scoring: list[tuple[str, Future | SequenceSpec | None]] = []  # finished videos, in order
        self._pool: ProcessPoolExecutor | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    # ------------------------------------------------------------------------------------------- predictions
    def process(self, data_batch: dict, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            if 'video_data_samples' in sample:  # mmdet's track sample: frames with pred_track_instances
                self.process_video(sample['video_data_samples'])
            elif 'pred_video_tracks' in sample:  # a whole video (PackVideoTrackingInputs)
                frames = np.asarray(sample['source_frames'], np.int64)
                self._finish_video(sample['video_dir'], len(frames), frames, sample['pred_video_tracks'])
            else:
                raise KeyError('VastMATMetric: a prediction with neither video_data_samples nor pred_video_tracks')

    def process_video(self, data_samples: Sequence) -> None:
        """mmdet's ``BaseVideoMetric`` hook: the frames of a whole video (``DetDataSample``s)."""
        for frame in data_samples:
            self._add_frame(frame)

    def process_image(self, data_samples: Sequence, ori_video_len: int) -> None:
        """mmdet's ``BaseVideoMetric`` hook: frames of a video given one at a time."""
        for frame in data_samples:
            self._add_frame(frame)

    def _add_frame(self, sample: Any) -> None:
        meta = sample.metainfo
        img_path = meta.get('img_path')
        video_dir = meta.get('video_dir') or osp.dirname(osp.dirname(img_path))
        source_frame = meta.get('source_frame') or int(osp.splitext(osp.basename(img_path))[0])
        # the frame's tracks are turned into rows only if the video's last frame brings no final tracks
        record = dict(frame_id=int(sample.frame_id), source_frame=int(source_frame),
                      video_tracks=sample.get('pred_video_tracks'), tracks=sample.get('pred_track_instances'))
        records = self._open_videos.setdefault(video_dir, [])
        records.append(record)
        length = int(sample.ori_video_length)
        if len(records) == length:
            del self._open_videos[video_dir]
            records.sort(key=lambda r: r['frame_id'])
            video_tracks = [r['video_tracks'] for r in records if r['video_tracks'] is not None]
            if video_tracks:  # post-processed by the model
                rows = video_tracks[-1]
            else:
                rows = np.concatenate([self._frame_rows(r['frame_id'], r['tracks']) for r in records])
            self._finish_video(video_dir, length, np.array([r['source_frame'] for r in records], np.int64), rows)

    @staticmethod
    def _frame_rows(frame_id: int, tracks: Any) -> np.ndarray:
        """A frame's ``pred_track_instances`` as rows ``frame, id, x1, y1, x2, y2, score`` (frames from 1)."""
        ids = tracks.instances_id.cpu().numpy()
        return np.column_stack([np.full(len(ids), frame_id + 1), ids, tracks.bboxes.cpu().numpy().reshape(-1, 4),
                                tracks.scores.cpu().numpy()])

    # ------------------------------------------------------------------------------------ writing and scoring
    def _folder(self) -> str:
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix='vastmat_metric_')
        return self._tmp.name

    def _finish_video(self, video_dir: str, length: int, source_frames: np.ndarray, rows: Any) -> None:
        """Write the video's results (frames numbered 1, 2, ... in the dataset's order) and, for a strided dataset,
        the ground truth of the same frames; start scoring it (no ground truth: not scored)."""
        name = osp.basename(video_dir)
        out_dir = self.outfile_dir or self._folder()
        result_path = osp.join(out_dir, 'results', f'{name}.txt')
        write_results(result_path, track_rows_to_results(np.asarray(rows, np.float64).reshape(-1, 7)), decimals=3)
        gt_path = osp.join(video_dir, 'gt', 'gt.txt')
        if not osp.isfile(gt_path):
            self._scoring.append((name, None))
            return
        if not np.array_equal(source_frames, np.arange(1, length + 1)):
            gt = read_gt(gt_path)
            to_frame = {int(src): i + 1 for i, src in enumerate(source_frames)}
            gt = gt.select(np.isin(gt.frames, source_frames))
            gt.frames = np.array([to_frame[f] for f in gt.frames.tolist()], np.int64)
            gt_path = osp.join(self._folder(), 'gt', name, 'gt.txt')
            os.makedirs(osp.dirname(gt_path), exist_ok=True)
            write_gt(gt_path, gt, decimals=6)
        spec = SequenceSpec(name, gt_path, result_path, length)
        if self.workers > 0:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(max_workers=self.workers)
            self._scoring.append((name, self._pool.submit(evaluate_sequence, spec, self.preset)))
        else:
            self._scoring.append((name, spec))

    def evaluate(self, size: int = 1) -> dict:
        """Wait for this process's videos to be scored, then gather every rank's (mmdet's ``BaseVideoMetric``)."""
        try:
            if self._open_videos:
                unfinished = ', '.join(f'{osp.basename(d)} ({len(r)} frames)' for d, r in self._open_videos.items())
                raise ValueError(f'VastMATMetric: the test ended with unfinished videos: {unfinished}')
            for name, job in self._scoring:
                if job is None:
                    self.results.append(dict(name=name, raw=None))
                else:
                    raw = job.result() if isinstance(job, Future) else evaluate_sequence(job, self.preset)
                    self.results.append(dict(name=name, raw=raw))
        finally:
            self._close()
        return super().evaluate(size)

    def _close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
        if self._tmp is not None:
            self._tmp.cleanup()
        self._pool, self._tmp, self._scoring, self._open_videos = None, None, [], {}

    def compute_metrics(self, results: list) -> dict:
        results = sorted(results, key=lambda r: r['name'])
        without_gt = [r['name'] for r in results if r['raw'] is None]
        if without_gt:
            where = self.outfile_dir or 'a temporary folder'
            print_log(f'VastMATMetric: results written to {where}/results; {len(without_gt)} video(s) have no '
                      f'gt/gt.txt and are not scored: {", ".join(without_gt[:5])}', 'current', level=logging.WARNING)
        per_seq = {r['name']: r['raw'] for r in results if r['raw'] is not None}
        if not per_seq:
            return {}
        per_video = summarize(per_seq)
        if self.outfile_dir:
            write_json_atomic(per_video, osp.join(self.outfile_dir, 'metrics_per_video.json'))
        return {key: per_video['COMBINED'][key] for key in SUMMARY_KEYS}
