#!/usr/bin/env python
"""Benchmark: TrackEval-backed evaluation in parallel vs serial (AnimalTrack train, ground truth as the tracker).

    python tools/benchmark/eval_parallel.py [--gt-root ../shared/data/AnimalTrack/train] [--workers 2]

Checks that both give identical results and prints the speed-up (it should approach the number of cores).
"""
import argparse
import json
import os
import os.path as osp
import shutil
import tempfile
import time

from vastmat.datasets.sequences import list_sequences, load_sequence
from vastmat.evaluation.mot_eval import evaluate_folder

DEFAULT_ROOT = osp.join(osp.dirname(__file__), '..', '..', '..', 'shared', 'data', 'AnimalTrack', 'train')


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--gt-root', default=DEFAULT_ROOT)
    parser.add_argument('--workers', type=int, default=os.cpu_count())
    args = parser.parse_args(argv)
    names = list_sequences(args.gt_root)
    with tempfile.TemporaryDirectory() as results:
        for name in names:  # the ground truth scored as its own tracker
            shutil.copy(osp.join(load_sequence(args.gt_root, name, with_gt=False).directory, 'gt', 'gt.txt'),
                        osp.join(results, f'{name}.txt'))
        timings, outputs = {}, {}
        for workers in (1, args.workers):
            start = time.perf_counter()
            outputs[workers] = evaluate_folder(args.gt_root, results, names, 'vastmat', workers)[0]
            timings[workers] = time.perf_counter() - start
    identical = json.dumps(outputs[1], sort_keys=True) == json.dumps(outputs[args.workers], sort_keys=True)
    speedup = timings[1] / timings[args.workers]
    print(f'{len(names)} videos: serial {timings[1]:.1f} s, {args.workers} workers {timings[args.workers]:.1f} s, '
          f'speed-up {speedup:.2f}x on {os.cpu_count()} cores; identical results: {identical}')
    return dict(serial_s=timings[1], parallel_s=timings[args.workers], workers=args.workers, speedup=speedup,
                identical=identical)


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
