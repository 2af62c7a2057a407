#!/usr/bin/env python
"""Test a detector, tracker or model from a config (MMDetection 3.3's flags); prints the metrics as a table and
writes them to WORK_DIR/metrics.json.

    python tools/test.py CONFIG --checkpoint CKPT [--work-dir DIR] [--out FILE.pkl] [--cfg-options k=v ...]
    tools/dist_test.sh CONFIG NUM_PROCESSES --checkpoint CKPT [args]
"""
import argparse
import logging
import os.path as osp

from mmengine.dist import is_main_process
from mmengine.logging import print_log

from vastmat.engine.cli import (add_common_arguments, build_runner, finish_parsing, load_config,
                                print_metrics_table, write_json_atomic)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Test (and evaluate) a VastMAT detector, tracker or model')
    add_common_arguments(parser)
    parser.add_argument('--checkpoint', help='checkpoint to test (weights-only loading)')
    parser.add_argument('--out', help='also dump the raw predictions to this .pkl file')
    parser.add_argument('--amp', action='store_true', help='run the test loop in fp16')
    return finish_parsing(parser.parse_args(argv))


def main(argv=None) -> dict:
    args = parse_args(argv)
    cfg = load_config(args)
    if args.checkpoint is not None:
        cfg.load_from = args.checkpoint
    if args.amp:
        cfg.test_cfg.fp16 = True
    runner = build_runner(cfg)
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
        print_metrics_table(metrics, title=f'{osp.basename(args.config)}')
        write_json_atomic(metrics, osp.join(cfg.work_dir, 'metrics.json'))
    return metrics


if __name__ == '__main__':
    main()
