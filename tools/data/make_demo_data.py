#!/usr/bin/env python
"""Render the demo VastMAT dataset: 11 short videos of animal-like shapes of 9 categories, with gt.txt,
seqinfo.ini, meta/categories.tsv and both protocols' splits.

    python tools/data/make_demo_data.py --out data/demo [--frames 40] [--height 144] [--width 192] [--seed 0]
"""
import argparse
import time

from vastmat.datasets.demo_data import make_demo_dataset


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--out', default='data/demo')
    parser.add_argument('--frames', type=int, default=40, help='frames per video (10 FPS)')
    parser.add_argument('--height', type=int, default=144)
    parser.add_argument('--width', type=int, default=192)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    stats = make_demo_dataset(args.out, args.frames, args.height, args.width, args.seed)
    print(f'demo dataset written to {args.out} in {time.perf_counter() - start:.1f} s')
    for protocol, s in stats.items():
        print(f'  {protocol}: {s["train_videos"]} train / {s["test_videos"]} test / {s["dev_videos"]} dev videos, '
              f'{s["train_categories"]} train / {s["test_categories"]} test categories')
    return stats


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
