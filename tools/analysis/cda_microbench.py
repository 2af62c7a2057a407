#!/usr/bin/env python
"""Microbenchmark of one association call's similarity computation (paper Table 26), on real frame pairs.

    python tools/analysis/cda_microbench.py [--data-root ../shared/data/AnimalTrack/train] [--stride 3]
        [--repeats 5] [--out FILE.json]

For every pair of consecutive frames the previous frame's ground-truth boxes play the tracks and the current frame's
the detections; each matcher is timed on all pairs (single-threaded numpy), and the table gives microseconds per
call and the overhead over IoU.
"""
import argparse
import os.path as osp
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from vastmat.structures.bbox import ltwh_to_xyxy
from vastmat.datasets.sequences import list_sequences, load_sequence
from vastmat.registry import MATCHERS
from vastmat.utils.io import write_json_atomic

DEFAULT_ROOT = osp.join(osp.dirname(__file__), '..', '..', '..', 'shared', 'data', 'AnimalTrack', 'train')
MATCHERS_TO_TIME = {'IoU (baseline)': dict(type='IoU', plus_one=True), 'CenterSim': dict(type='CenterSim'),
                    'CDA fixed': dict(type='CDA', plus_one=True),
                    'CDA adaptive': dict(type='CDA', mode='forward', plus_one=True),
                    'CDA + DIoU gate': dict(type='CDA', plus_one=True, gate=dict(type='NormDIoUGate', thr=0.10))}


def frame_pairs(root: str, stride: int) -> list[tuple[np.ndarray, np.ndarray]]:
    pairs = []
    for name in list_sequences(root):
        gt = load_sequence(root, name, stride=stride).gt
        boxes = ltwh_to_xyxy(gt.boxes)
        frames = {int(f): boxes[gt.frames == f] for f in np.unique(gt.frames)}
        pairs += [(frames[f - 1], frames[f]) for f in frames if f - 1 in frames]
    return pairs


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', default=DEFAULT_ROOT)
    parser.add_argument('--stride', type=int, default=3)
    parser.add_argument('--repeats', type=int, default=5)
    parser.add_argument('--out')
    args = parser.parse_args(argv)
    pairs = frame_pairs(args.data_root, args.stride)
    if not pairs:
        raise SystemExit(f'no consecutive annotated frames under {args.data_root}')
    results = {}
    for name, cfg in MATCHERS_TO_TIME.items():
        matcher = MATCHERS.build(cfg)
        best = float('inf')
        for _ in range(args.repeats):
            start = time.perf_counter()
            for tracks, dets in pairs:
                matcher(tracks, dets, num_high_conf=len(dets))
            best = min(best, time.perf_counter() - start)
        results[name] = dict(us_per_call=1e6 * best / len(pairs))
    baseline = results['IoU (baseline)']['us_per_call']
    table = Table(title=f'similarity per association call ({len(pairs):,} frame pairs, mean '
                        f'{np.mean([len(d) for _, d in pairs]):.1f} boxes)')
    for column in ('matcher', 'us / call', 'overhead vs IoU'):
        table.add_column(column, justify='right')
    for name, r in results.items():
        r['overhead'] = r['us_per_call'] / baseline - 1
        table.add_row(name, f'{r["us_per_call"]:.1f}', f'{100 * r["overhead"]:+.1f}%')
    Console().print(table)
    if args.out:
        write_json_atomic(dict(results, frame_pairs=len(pairs), stride=args.stride), args.out)
    return results


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
