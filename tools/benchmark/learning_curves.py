#!/usr/bin/env python
"""Short learning curves of the tiny joint and end-to-end models: each trained a few dozen iterations on one demo
training video without random augmentations must track it better than untrained (HOTA up by 3 or more).

    python tools/benchmark/learning_curves.py [--work-dir work_dirs/learning_curves] [--data-root DIR]
        [--configs qdtrack/qdtrack_tiny_vastmat-demo.py ...] [--iters N] [--threads 2]

The video is Zebra-1 of the demo data rendered at 12 frames a video, as the test suite renders it (under the work
dir), where each config's iterations were measured; ``--data-root`` takes another rendering.
Prints the table (config, iterations, HOTA untrained and trained, gain, passed), saves it as
``WORK_DIR/learning_curves.json`` and exits with status 1 when a curve misses its bar
(vastmat/benchmarks/learning_curves.py says what a curve catches). About 25 CPU-seconds for the four.
"""
from __future__ import annotations

import argparse
import os.path as osp

from vastmat.benchmarks.learning_curves import CURVES
from vastmat.utils.threads import default_threads


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', help='a demo rendering holding Zebra-1 (default: 12 frames a video, rendered '
                        'under the work dir)')
    parser.add_argument('--work-dir', default='work_dirs/learning_curves', help='trainings, tests and the table')
    parser.add_argument('--configs', nargs='+', choices=list(CURVES), metavar='CONFIG',
                        help=f'only these (default: all of {", ".join(CURVES)})')
    parser.add_argument('--iters', type=int, help="iterations of every training (default: each config's own)")
    parser.add_argument('--threads', type=int, default=default_threads(),
                        help='torch CPU threads (default: $OMP_NUM_THREADS where set, else 2)')
    args = parser.parse_args(argv)
    if args.iters is not None and args.iters < 1:
        parser.error(f'--iters must be at least 1, got {args.iters}')
    return args


def main(argv: list[str] | None = None) -> list[dict]:
    from rich.table import Table

    from vastmat.benchmarks.learning_curves import learning_curve_rows
    from vastmat.experiments.zoo_report import make_console
    from vastmat.utils.io import write_json_atomic
    from vastmat.utils.threads import torch_threads
    args = parse_args(argv)
    console = make_console()
    with torch_threads(args.threads):
        rows = learning_curve_rows(args.work_dir, args.data_root, args.configs, args.iters)
    table = Table(title='learning curves: HOTA on the training video')
    for column in ('config', 'iterations', 'untrained', 'trained', 'gain', 'passed'):
        table.add_column(column, justify='left' if column == 'config' else 'right')
    for row in rows:
        table.add_row(row['config'], str(row['iterations']), f'{100 * row["untrained"]:.1f}',
                      f'{100 * row["trained"]:.1f}', f'{100 * row["gain"]:+.1f}',
                      'yes' if row['passed'] else '[red]no[/red]')
    console.print(table)
    out = osp.join(args.work_dir, 'learning_curves.json')
    write_json_atomic(rows, out)
    missed = [row['config'] for row in rows if not row['passed']]
    console.print(f'saved {out}; ' + (f'below the bar: {", ".join(missed)}' if missed else 'every curve rose'))
    return rows


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    rows = run_cli(main)
    raise SystemExit(0 if rows and all(row['passed'] for row in rows) else 1)
