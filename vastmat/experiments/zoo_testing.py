"""The tests of the model zoo: a whole tracking model tracking a split's videos and scored by TrackEval (the zoo's
test videos, and the dev videos of the threshold calibration), and the detector's test that dumps the boxes the
trackers on cached detections read. The trainings they test are :mod:`.zoo_training`'s.
"""
from __future__ import annotations

import argparse
import copy
import json
import os.path as osp

from mmengine.config import Config

from vastmat.utils.io import write_json_atomic

from .zoo_training import zoo_config


def test_tracking_model(cfg: Config, checkpoint: str | None, videos: list[str], out_dir: str, preset: str,
                        dump_dets: str | None = None, split: str = 'test') -> dict:
    """Track the ``split`` videos (``videos``: their names) with a whole tracking model (``cfg``: a
    :func:`zoo_config`, a matcher swapped in by :func:`vastmat.apis.swap_matcher` beforehand) at ``checkpoint`` and
    score them with TrackEval (per video and COMBINED, as :func:`vastmat.apis.track_and_score`); ``dump_dets`` also
    writes its detections. ``out_dir/metrics.json`` (written last) is reused when present."""
    from vastmat.engine.runner_builder import build_quiet_runner
    from vastmat.engine.tracking_options import apply_tracking_options
    from vastmat.evaluation.mot_eval import evaluate, sequence_specs
    saved = osp.join(out_dir, 'metrics.json')
    if osp.isfile(saved):
        return json.load(open(saved, encoding='utf-8'))
    cfg = copy.deepcopy(cfg)  # Config.copy is shallow: the evaluator's outfile_dir would be shared
    cfg.work_dir = out_dir
    cfg.load_from = checkpoint
    cfg.test_dataloader.dataset.split = split
    apply_tracking_options(cfg, argparse.Namespace(dump_dets=dump_dets, workers=0))
    runner = build_quiet_runner(cfg)
    if dump_dets is not None:
        from vastmat.evaluation.metrics import DumpTrackingDetections
        runner.test_evaluator.metrics.append(DumpTrackingDetections(dump_dets))
    runner.test()
    data_root = cfg.test_dataloader.dataset.data_root
    specs, missing = sequence_specs(data_root, osp.join(out_dir, 'results'), videos)
    if missing:
        raise RuntimeError(f'{out_dir}/results: the test wrote no tracks for {", ".join(missing)}')
    metrics = evaluate(specs, preset)
    write_json_atomic(metrics, saved)
    return metrics


def detect(config: str, checkpoint: str, data_root: str, protocol: str, work_dir: str, out_dir: str | None = None,
           nms_iou: float | None = None) -> dict:
    """Test a detector on the protocol's test videos (COCO metrics, ``det/AP50`` ...) and, with ``out_dir``, dump
    its boxes there as det.txt files (with NMS at ``nms_iou`` when given); returns its metrics."""
    return run_detector_test(detector_test_config(config, checkpoint, data_root, protocol, work_dir, out_dir, nms_iou),
                             out_dir)


def run_detector_test(cfg: Config, out_dir: str | None = None) -> dict:
    """Run a :func:`detector_test_config` (made with the same ``out_dir``): its metrics, and its boxes in ``out_dir``
    when given."""
    from vastmat.engine.runner_builder import build_quiet_runner
    from vastmat.evaluation.metrics import DumpTrackingDetections
    runner = build_quiet_runner(cfg)
    if out_dir is not None:
        runner.test_evaluator.metrics.append(DumpTrackingDetections(out_dir))
    return runner.test()


def detector_test_config(config: str, checkpoint: str, data_root: str, protocol: str, work_dir: str,
                         out_dir: str | None = None, nms_iou: float | None = None) -> Config:
    """The config of :func:`detect`'s test."""
    from vastmat.engine.tracking_options import apply_tracking_options
    cfg = zoo_config(config, data_root, protocol, work_dir, f'{protocol} detector')
    if nms_iou is not None:
        cfg.model.test_cfg.nms = dict(type='nms', iou_threshold=nms_iou)
    cfg.load_from = checkpoint
    cfg.test_dataloader.dataset.split = 'test'
    cfg.test_evaluator = [dict(type='VastMATDetMetric')]
    apply_tracking_options(cfg, argparse.Namespace(dump_dets=out_dir))
    return cfg
