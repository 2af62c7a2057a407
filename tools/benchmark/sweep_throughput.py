#!/usr/bin/env python
"""Benchmark: the sweep's throughput (vastmat.experiments.sweep, as tools/analysis/sweep.py runs it; runs per minute)
with 1 and more worker processes.

    python tools/benchmark/sweep_throughput.py [--data-root ../shared/data/AnimalTrack-10fps-sim/gt]
        [--det-root ../shared/data/AnimalTrack-10fps-sim/dets] [--config configs/bytetrack/bytetrack_cached-dets.py]
        [--alphas 0,0.125,...,0.875] [--workers 1 2] [--work-dir work_dirs/sweep_throughput] [--out FILE.json]

The grid is fixed CDA (configs/matchers/cda_fixed.py) over ``--alphas`` (8 runs by default), each run tracking and
scoring every video. Each worker count sweeps in a fresh work dir (W/workers<N>, emptied first), so every run is
computed; the rows of all worker counts must be identical. Prints runs per minute and the speed-up over the first
worker count as a table and writes W/sweep_throughput.json (or ``--out``). Timings include each run's model build,
tracking, result writing and evaluation, not the interpreter's start (a warm-up builds one model first).
"""
from __future__ import annotations

import argparse
import os
import os.path as osp
import shutil
import time

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
AT10 = osp.join(osp.dirname(REPO), 'shared', 'data', 'AnimalTrack-10fps-sim')
DEFAULT_CONFIG = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py')
DEFAULT_ALPHAS = '0,0.125,0.25,0.375,0.5,0.625,0.75,0.875'  # 8 runs: a multiple of the worker counts


def time_sweep(args: argparse.Namespace, workers: int) -> dict:
    """One sweep in a fresh work dir; its wall time and rows."""
    from vastmat.experiments.sweep import SweepSettings, run_sweep
    work_dir = osp.join(args.work_dir, f'workers{workers}')
    shutil.rmtree(work_dir, ignore_errors=True)
    matcher = "model.tracker.matcher=dict(type='CDA',mode='fixed',alpha=0.25)"
    load = os.getloadavg()[0]  # other jobs on the machine make the timings noisy: reported beside them
    start = time.perf_counter()
    result = run_sweep(SweepSettings(args.config, args.det_root, args.data_root, work_dir, base_options=[matcher],
                                     grid=[f'model.tracker.matcher.alpha={args.alphas}'], workers=workers))
    seconds = time.perf_counter() - start
    runs = result['computed']
    return dict(workers=workers, runs=runs, seconds=seconds, runs_per_min=60 * runs / seconds, load_before=load,
                rows=result['rows'])


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', default=osp.join(AT10, 'gt'))
    parser.add_argument('--det-root', default=osp.join(AT10, 'dets'))
    parser.add_argument('--config', default=DEFAULT_CONFIG)
    parser.add_argument('--alphas', default=DEFAULT_ALPHAS, help='the grid: comma-separated CDA alphas')
    parser.add_argument('--workers', type=int, nargs='+', default=[1, 2])
    parser.add_argument('--work-dir', default=osp.join('work_dirs', 'sweep_throughput'))
    parser.add_argument('--out', help='JSON file (default: WORK_DIR/sweep_throughput.json)')
    args = parser.parse_args(argv)
    from vastmat.apis import init_model
    init_model(args.config, detector=False)  # warm-up: registries and lazy imports, outside the timings
    timings = [time_sweep(args, workers) for workers in args.workers]
    identical = all(t['rows'] == timings[0]['rows'] for t in timings)
    for t in timings:
        t['speedup'] = timings[0]['seconds'] / t['seconds']
    print_table(timings, identical)
    summary = dict(config=args.config, data_root=args.data_root, det_root=args.det_root, alphas=args.alphas,
                   cpu_count=os.cpu_count(), identical_rows=identical,
                   timings=[{k: v for k, v in t.items() if k != 'rows'} for t in timings])
    from vastmat.utils.io import write_json_atomic
    write_json_atomic(summary, args.out or osp.join(args.work_dir, 'sweep_throughput.json'))
    return summary


def print_table(timings: list[dict], identical: bool) -> None:
    from rich.console import Console
    from rich.table import Table
    table = Table(title=f'sweep throughput on {os.cpu_count()} cores; identical rows: {identical}')
    for header in ('workers', 'runs', 'seconds', 'runs/min', f'speed-up vs {timings[0]["workers"]}',
                   'load avg before'):
        table.add_column(header, justify='right')
    for t in timings:
        table.add_row(str(t['workers']), str(t['runs']), f'{t["seconds"]:.1f}', f'{t["runs_per_min"]:.2f}',
                      f'{t["speedup"]:.2f}x', f'{t["load_before"]:.1f}')
    Console().print(table)


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
