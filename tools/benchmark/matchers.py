#!/usr/bin/env python
"""Benchmark: time to build the similarity matrix, per matcher and size, and the ratio to IoU.

    python tools/benchmark/matchers.py [--sizes 10 100 1000] [--repeats 200]

Goal (issue 5): CDA at most 1.5x IoU on a 100x100 problem.
"""
import argparse
import time

import numpy as np

from vastmat.registry import MATCHERS

MATCHER_CONFIGS = {
    'IoU': dict(type='IoU'), 'IoU+1': dict(type='IoU', plus_one=True), 'GIoU': dict(type='GIoU'),
    'DIoU': dict(type='DIoU'), 'CIoU': dict(type='CIoU'), 'EIoU': dict(type='EIoU'),
    'CenterSim': dict(type='CenterSim'), 'CDA-fixed': dict(type='CDA'), 'CDA-adaptive': dict(type='CDA', mode='forward'),
    'CDA+gate': dict(type='CDA', gate=dict(type='NormDIoUGate', thr=0.10)), 'HMIoU': dict(type='HMIoU'),
}


def time_call(matcher, tracks, dets, repeats: int) -> float:
    """Median seconds of one call."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        matcher(tracks, dets, num_high_conf=len(dets))
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--sizes', type=int, nargs='+', default=[10, 100, 1000])
    parser.add_argument('--repeats', type=int, default=200)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    results = {}
    print(f'{"matcher":14s}' + ''.join(f'{f"{n}x{n} us":>14s}{"/IoU":>7s}' for n in args.sizes))
    for name, cfg in MATCHER_CONFIGS.items():
        matcher = MATCHERS.build(cfg)
        results[name] = {}
        for n in args.sizes:
            xy = rng.uniform(0, 1000, size=(2 * n, 2))
            boxes = np.hstack([xy, xy + rng.uniform(10, 200, size=(2 * n, 2))])
            repeats = max(5, args.repeats * 100 // max(n, 100))
            results[name][n] = time_call(matcher, boxes[:n], boxes[n:], repeats)
        print(f'{name:14s}' + ''.join(f'{1e6 * results[name][n]:14.1f}{results[name][n] / results["IoU"][n]:7.2f}'
                                      for n in args.sizes))
    return results


if __name__ == '__main__':
    main()
