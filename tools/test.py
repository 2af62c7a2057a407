#!/usr/bin/env python
"""Test a detector, tracker or model from a config (MMDetection 3.3's flags); prints the metrics as a table and
writes them to WORK_DIR/metrics.json.

    python tools/test.py CONFIG --checkpoint CKPT [--work-dir DIR] [--out FILE.pkl] [--cfg-options k=v ...]
        [--matcher NAME[,key=value...]]
    tools/dist_test.sh CONFIG NUM_PROCESSES --checkpoint CKPT [args]

Detectors: ``--dump-dets DIR`` also writes DIR/<video>.txt (det.txt form), the cached detections of the trackers.
Trackers: ``--det-root DIR`` reads cached detections (DIR/<video>.txt or DIR/<video>/det/det.txt) and skips the
detector (``--extra-det-root NAME=DIR`` adds a named extra set, e.g. TrackTrack's ``nms95``); ``--data-root DIR``
tests on a VastMAT root or a plain MOTChallenge split folder (all its videos). The tracks are written to
WORK_DIR/results/<video>.txt as each video finishes and, where ground truth exists, scored in ``--workers``
processes alongside the tracking.
ReID configs: ``--det-root DIR --dump-feats OUT`` writes OUT/<video>.txt, the det.txt rows of DIR followed by each
box's L2-normalised appearance feature. Configs that load frames: ``--dump-warps OUT`` writes OUT/<video>.txt, the
ECC camera-motion warp of every frame (BoT-SORT / TrackTrack GMC format).
Global linking: ``--link [key=value,...]`` links each video's tracklets into identities after tracking
(``GlobalLinker``), ``--num-animals N|FILE`` / ``--max-animals M|FILE`` cap the identities a video; what it did to
each video is printed and written to WORK_DIR/linking.json.
"""
import argparse
import logging
import os.path as osp

from mmengine.dist import is_main_process
from mmengine.logging import print_log

from vastmat.engine import close_distributed
from vastmat.engine.cli import (add_common_arguments, finish_parsing, load_config, print_metrics_table,
                                write_json_atomic)
from vastmat.engine.linking_options import (add_linking_arguments, apply_linking_options, linking_reports,
                                            save_linking_reports)
from vastmat.engine.runner_builder import build_runner
from vastmat.engine.tracking_options import apply_tracking_options
from vastmat.utils.errors import UserInputError


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Test (and evaluate) a VastMAT detector, tracker or model')
    add_common_arguments(parser)
    parser.add_argument('--checkpoint', help='checkpoint to test (weights-only loading)')
    parser.add_argument('--matcher', metavar='NAME[,key=value...]',
                        help="the tracker's matcher replaced by configs/matchers/NAME.py with these keys, e.g. "
                        'cda_fixed,alpha=0.25 (original: its own)')
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
    parser.add_argument('--workers', type=int, metavar='N', help='tracking metrics: processes scoring each finished '
                        "video while the next are tracked (default: the config's, 1); 0: after the last video")
    parser.add_argument('--dump-feats', metavar='DIR', help='ReID configs, with --det-root: write DIR/<video>.txt, '
                        'the det.txt rows followed by L2-normalised appearance features')
    parser.add_argument('--dump-warps', metavar='DIR', help='configs that load frames: write DIR/<video>.txt, the ECC '
                        'camera-motion warp of every frame (GMC format), instead of testing')
    add_linking_arguments(parser)
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 0:
        parser.error(f'--workers must be >= 0, got {args.workers}')
    if args.dump_feats is not None and args.det_root is None:
        parser.error('--dump-feats needs --det-root (the detections to describe)')
    if args.dump_warps is not None and (args.det_root is not None or args.dump_feats is not None):
        parser.error('--dump-warps reads the frames: it takes neither --det-root nor --dump-feats')
    return finish_parsing(args)


def main(argv=None) -> dict:
    args = parse_args(argv)
    cfg = load_config(args)
    if args.matcher is not None:
        from vastmat.apis import swap_matcher
        if any(key.startswith('model.tracker.matcher') for key in args.cfg_options or {}):
            raise UserInputError('--matcher replaces the whole matcher: give its keys as --matcher NAME,key=value, '
                                 'not as --cfg-options model.tracker.matcher...')
        cfg = swap_matcher(cfg, args.matcher)
    if args.checkpoint is not None:
        cfg.load_from = args.checkpoint
    if args.amp:
        cfg.test_cfg.fp16 = True
    if args.dump_warps is not None:
        from vastmat.models.motion.camera_motion import dump_warps
        apply_tracking_options(cfg, args)
        dump_warps(cfg, args.dump_warps)
        return {}
    if args.dump_feats is not None:
        from vastmat.evaluation.metrics.dump_features import feature_dump_config
        feature_dump_config(cfg, args.dump_feats, args.det_root, args.data_root)
    else:
        apply_tracking_options(cfg, args)
        apply_linking_options(cfg, args)
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
    try:
        if is_main_process():
            if not metrics and args.dump_feats is None:  # the feature dump returns no metric
                print_log('the evaluator returned no metrics (for detection: no predicted box at all)', 'current',
                          level=logging.WARNING)
            if metrics:
                print_metrics_table(metrics, title=f'{osp.basename(args.config)}')
                write_json_atomic(metrics, osp.join(cfg.work_dir, 'metrics.json'))
            reports = linking_reports(runner.model)
            if reports:
                save_linking_reports(reports, cfg.work_dir)
    finally:  # the other ranks wait for rank 0 here, also when its reporting fails
        close_distributed()
    return metrics


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
