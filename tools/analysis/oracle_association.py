#!/usr/bin/env python
"""The oracle association of cached detections: the ceiling of any tracker's association on them.

    python tools/analysis/oracle_association.py --data-root GT_ROOT --det-root DETS [--videos V ...]
        [--work-dir work_dirs/oracle] [--min-iou 0.5] [--min-score 0] [--preset vastmat]

In each frame the detections take the identities of the truth boxes they match (Hungarian on IoU, at least
``--min-iou``); those that match none are dropped (vastmat/evaluation/oracle_association.py). Writes
WORK_DIR/results/<video>.txt, prints the metrics per video and combined, and saves them to
WORK_DIR/metrics.json.
"""
from __future__ import annotations

import argparse
import os.path as osp


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True, help='the ground truth: a VastMAT root or MOTChallenge folder')
    parser.add_argument('--det-root', required=True, help='cached detections (<video>.txt or <video>/det/det.txt)')
    parser.add_argument('--videos', nargs='+', help='videos (default: all of the data root)')
    parser.add_argument('--work-dir', default='work_dirs/oracle')
    parser.add_argument('--min-iou', type=float, default=0.5, help='a detection takes an identity at this IoU')
    parser.add_argument('--min-score', type=float, default=0.0, help='only detections scoring at least this')
    parser.add_argument('--preset', default='vastmat', help='evaluation preset (default vastmat)')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    from vastmat.apis import video_list
    from vastmat.evaluation.mot_eval import evaluate, sequence_specs
    from vastmat.evaluation.oracle_association import write_oracle_folder
    from vastmat.evaluation.report import print_tracking_table
    from vastmat.utils.io import write_json_atomic
    args = parse_args(argv)
    videos = video_list(args.data_root, videos=args.videos)
    results = write_oracle_folder(args.data_root, args.det_root, videos, osp.join(args.work_dir, 'results'),
                                  args.min_iou, args.min_score)
    specs, _ = sequence_specs(args.data_root, results, videos)
    metrics = evaluate(specs, args.preset)
    print_tracking_table(metrics, f'oracle association of {args.det_root}')
    write_json_atomic(metrics, osp.join(args.work_dir, 'metrics.json'))
    print(f'saved {osp.join(args.work_dir, "metrics.json")}')
    return metrics


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
