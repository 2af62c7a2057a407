#!/usr/bin/env python
"""Test a detector, tracker or model from a config (MMDetection 3.3's flags); prints the metrics as a table and
writes them to WORK_DIR/metrics.json.

    python tools/test.py CONFIG --checkpoint CKPT [--work-dir DIR] [--out FILE.pkl] [--cfg-options k=v ...]
    tools/dist_test.sh CONFIG NUM_PROCESSES --checkpoint CKPT [args]

Detectors: ``--dump-dets DIR`` also writes DIR/<video>.txt (det.txt form), the cached detections of the trackers.
Trackers: ``--det-root DIR`` reads cached detections (DIR/<video>.txt or DIR/<video>/det/det.txt) and skips the
detector (``--extra-det-root NAME=DIR`` adds a named extra set, e.g. TrackTrack's ``nms95``); ``--data-root DIR`` tests on a VastMAT root or a plain MOTChallenge split folder (all its videos). The
tracks are written to WORK_DIR/results/<video>.txt and, where ground truth exists, scored.
"""
import argparse
import logging
import os.path as osp

from mmengine.dist import is_main_process
from mmengine.logging import print_log

from vastmat.engine.cli import (add_common_arguments, apply_tracking_options, build_runner, finish_parsing,
                                load_config, print_metrics_table, write_json_atomic)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Test (and evaluate) a VastMAT detector, tracker or model')
    add_common_arguments(parser)
    parser.add_argument('--checkpoint', help='checkpoint to test (weights-only loading)')
    parser.add_argument('--out', help='also dump the raw predictions to this .pkl file')
    parser.add_argument('--amp', action='store_true', help='run the test loop in fp16')
    parser.add_argument('--dump-dets', metavar='DIR', help='detector configs: write DIR/<video>.txt with its boxes')
    parser.add_argument('--dump-score-thr', type=float, help='with --dump-dets: only boxes scoring at least this '
                        "(default: all the detector outputs, i.e. its test_cfg's score_thr)")
    parser.add_argument('--det-root', metavar='DIR', help='tracking configs: cached detections, the detector is '
                        'skipped')
    parser.add_argument('--extra-det-root', metavar='NAME=DIR', action='append', default=[],
                        help='tracking configs on cached detections: a named extra detection set, e.g. '
                        "TrackTrack's nms95=DIR (repeatable)")
    parser.add_argument('--data-root', metavar='DIR', help='test on this VastMAT root or MOTChallenge split folder')
    return finish_parsing(parser.parse_args(argv))


def main(argv=None) -> dict:
    args = parse_args(argv)
    cfg = load_config(args)
    if args.checkpoint is not None:
        cfg.load_from = args.checkpoint
    if args.amp:
        cfg.test_cfg.fp16 = True
    apply_tracking_options(cfg, args)
    runner = build_runner(cfg)
    if args.dump_dets is not None:
        from vastmat.evaluation.metrics import DumpTrackingDetections
        runner.test_evaluator.metrics.append(DumpTrackingDetections(args.dump_dets, args.dump_score_thr))
    if args.out is not None:
        if not args.out.endswith(('.pkl', '.pickle')):
            raise ValueError(f'--out {args.out}: the output file must be a .pkl file')
        from mmdet.evaluation import DumpDetResults
        runner.test_evaluator.metrics.append(DumpDetResults(out_file_path=args.out))
    metrics = runner.test()
    if is_main_process():
        if not metrics:
            print_log('the evaluator returned no metrics (for detection: no predicted box at all)', 'current',
                      level=logging.WARNING)
        if metrics:
            print_metrics_table(metrics, title=f'{osp.basename(args.config)}')
            write_json_atomic(metrics, osp.join(cfg.work_dir, 'metrics.json'))
    return metrics


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
