#!/usr/bin/env python
"""Convergence of the zoo's tiny models on the demo data: training loss and quality against iterations.

    python tools/benchmark/convergence.py [--data-root data/demo] [--work-dir work_dirs/zoo_benchmark]
        [--trackers NAME ...] [--train-iters N] [--threads 2] [--out FILE.json]

Every learned part of the zoo (the demo detector, the ReID and D2MP models, the joint and end-to-end models) trained
as ``make demo`` trains it (the same work dir reuses its trainings and tests), and at each kept checkpoint: the mean
training loss since the previous one, and AP50 (detector), mAP / R1 (ReID), DetA / AssA (tracking models; D2MP
through DiffMOT) on the Protocol 1 test videos. Prints the table, saves it as JSON (default
``WORK_DIR/convergence.json``) and plots it (``convergence.png``).
"""
from __future__ import annotations

import argparse
import os.path as osp

from vastmat.benchmarks.convergence import MEASURES
from vastmat.experiments.zoo_benchmark import DEMO_ROOT
from vastmat.utils.threads import default_threads


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', default=DEMO_ROOT, help=f'VastMAT root (default {DEMO_ROOT})')
    parser.add_argument('--work-dir', default='work_dirs/zoo_benchmark', help="the zoo's work dir (reused)")
    parser.add_argument('--trackers', nargs='+', metavar='NAME', help='only these zoo trackers (default: all)')
    parser.add_argument('--no-detector', action='store_true', help='leave the detector out (and D2MP with it)')
    parser.add_argument('--train-iters', type=int, help="iterations of every training (default: each config's)")
    parser.add_argument('--threads', type=int, default=default_threads(),
                        help='torch CPU threads (default: $OMP_NUM_THREADS where set, else 2)')
    parser.add_argument('--out', help='JSON output (default WORK_DIR/convergence.json)')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> list[dict]:
    from rich.console import Console
    from rich.table import Table

    from vastmat.apis import video_list
    from vastmat.benchmarks.convergence import convergence_rows, plot_convergence
    from vastmat.experiments.zoo import DEMO_DETECTOR, select_members
    from vastmat.experiments.zoo_context import ZooContext
    from vastmat.utils.io import write_json_atomic
    from vastmat.utils.threads import torch_threads
    args = parse_args(argv)
    console = Console()
    members = select_members(args.trackers)
    protocol = 'protocol1'
    ctx = ZooContext(args.data_root, protocol, video_list(args.data_root, f'{protocol}/test'),
                     osp.join(args.work_dir, protocol), train_iters=args.train_iters, log=console.print)
    detector = None if args.no_detector else DEMO_DETECTOR
    with torch_threads(args.threads):
        rows = convergence_rows(ctx, members, detector)
    table = Table(title='Convergence of the tiny models (Protocol 1 test videos of the demo data)')
    for header in ('model', 'iteration', 'train min', 'loss', *MEASURES):
        table.add_column(header, justify='left' if header == 'model' else 'right')
    for row in rows:
        table.add_row(row['model'], str(row['iteration']), f'{row["minutes"]:.1f}', f'{row["loss"]:.3f}',
                      *('-' if row.get(m) is None else f'{100 * row[m]:.1f}' for m in MEASURES))
    console.print(table)
    out = args.out or osp.join(args.work_dir, 'convergence.json')
    write_json_atomic(rows, out)
    plot_convergence(rows, osp.splitext(out)[0] + '.png')
    console.print(f'saved {out} and {osp.splitext(out)[0]}.png')
    return rows


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
