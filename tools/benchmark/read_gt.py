#!/usr/bin/env python
"""Benchmark: reading gt.txt files (vectorised numpy parser and validation).

    python tools/benchmark/read_gt.py [--data-root ../shared/data/AnimalTrack/train] [--repeats 5]

Goal: well under one second per 100k boxes.
"""
import argparse
import glob
import os.path as osp
import time

from vastmat.datasets.formats import read_gt

DEFAULT_ROOT = osp.join(osp.dirname(__file__), '..', '..', '..', 'shared', 'data', 'AnimalTrack', 'train')


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', default=DEFAULT_ROOT)
    parser.add_argument('--repeats', type=int, default=5)
    args = parser.parse_args(argv)
    paths = sorted(glob.glob(osp.join(args.data_root, '*', 'gt', 'gt.txt')))
    if not paths:
        raise SystemExit(f'no */gt/gt.txt under {args.data_root}')
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        boxes = sum(len(read_gt(p)) for p in paths)
        times.append(time.perf_counter() - start)
    best = min(times)
    result = dict(files=len(paths), boxes=boxes, best_seconds=best, seconds_per_100k_boxes=best / boxes * 1e5)
    print(f'{len(paths)} files, {boxes:,} boxes: best of {args.repeats} {best:.3f} s = '
          f'{result["seconds_per_100k_boxes"]:.3f} s per 100k boxes')
    return result


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
