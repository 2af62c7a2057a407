#!/usr/bin/env python
"""The overfit benchmark: every learned part of the zoo trained on one short demo training video and tested on the
same frames ("first overfit one batch"). A part that cannot memorise it has a defect.

    python tools/benchmark/overfit.py [--data-root data/demo] [--videos Zebra-2 ...] [--work-dir work_dirs/overfit]
        [--trackers NAME ...] [--no-detector] [--train-iters N] [--threads 2]

Bars: HOTA >= 80 for FairMOT, QDTrack, TransTrack, MOTIP and TCEI (on MOTIP's checkpoint), AP50 >= 90 for the demo
YOLOX, rank-1 >= 95 % for TrackTrack's ReID model on its training identities, and D2MP's mean next-box IoU on its
training tracks above the constant-velocity Kalman filter's. Prints the table (model, iterations, minutes, last
loss, quality, bar), saves it as ``WORK_DIR/overfit.json`` and the curves as ``WORK_DIR/overfit.png``; a second run
reuses the trainings. Exit status 1 when a part misses its bar.
"""
from __future__ import annotations

import argparse
import os.path as osp
import time

from vastmat.benchmarks.overfit import DEFAULT_VIDEOS, PROTOCOL
from vastmat.experiments.zoo_benchmark import DEMO_ROOT
from vastmat.utils.threads import default_threads


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', default=DEMO_ROOT, help=f'VastMAT root (default {DEMO_ROOT}, rendered if absent)')
    parser.add_argument('--videos', nargs='+', default=list(DEFAULT_VIDEOS),
                        help=f'the training video(s) to memorise (default {" ".join(DEFAULT_VIDEOS)})')
    parser.add_argument('--work-dir', default='work_dirs/overfit', help='trainings, tests and results (reused)')
    parser.add_argument('--trackers', nargs='+', metavar='NAME', help='only these zoo trackers (default: all)')
    parser.add_argument('--no-detector', action='store_true', help='leave the detector out')
    parser.add_argument('--train-iters', type=int, help="iterations of every training (default: each config's)")
    parser.add_argument('--threads', type=int, default=default_threads(),
                        help='torch CPU threads (default: $OMP_NUM_THREADS where set, else 2)')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> list[dict]:
    from rich.table import Table

    from vastmat.experiments.zoo_report import make_console

    from vastmat.benchmarks.overfit import make_overfit_root, overfit_recipe, overfit_rows, plot_overfit
    from vastmat.experiments.zoo import DEMO_DETECTOR, select_members
    from vastmat.experiments.zoo_benchmark import ensure_data
    from vastmat.experiments.zoo_context import ZooContext
    from vastmat.utils.io import write_json_atomic
    from vastmat.utils.threads import torch_threads
    args = parse_args(argv)
    console = make_console()
    start = time.perf_counter()
    ensure_data(args.data_root, console)
    members = select_members(args.trackers)
    work_dir = osp.join(args.work_dir, '+'.join(args.videos))
    root = make_overfit_root(args.data_root, args.videos, osp.join(work_dir, 'data'))
    console.print(f'overfitting {", ".join(args.videos)} ({root}: train = test), without random augmentations')
    ctx = ZooContext(root, PROTOCOL, list(args.videos), osp.join(work_dir, PROTOCOL),
                     train_iters=args.train_iters, log=console.print, recipe=overfit_recipe,
                     calibration_split=None)  # tested on its training videos at the configs' own thresholds
    with torch_threads(args.threads):
        rows = overfit_rows(ctx, members, None if args.no_detector else DEMO_DETECTOR)
    table = Table(title=f'Overfit benchmark: trained and tested on {", ".join(args.videos)}')
    for header in ('model', 'iterations', 'minutes', 'last loss', 'quality', 'bar', 'passed'):
        table.add_column(header, justify='left' if header in ('model', 'quality') else 'right')
    for row in rows:
        quality = f'{row["measure"]} {100 * row["value"]:.1f}'
        if 'DetA' in row:
            quality += f' (DetA {100 * row["DetA"]:.1f}, AssA {100 * row["AssA"]:.1f})'
        if 'mAP' in row:
            quality += f' (mAP {100 * row["mAP"]:.1f})'
        if 'kalman' in row:
            quality += f' (Kalman {100 * row["kalman"]:.1f}, last box {100 * row["last_box"]:.1f})'
        bar = f'> {100 * row["bar"]:.1f} (Kalman)' if 'kalman' in row else f'>= {100 * row["bar"]:.0f}'
        table.add_row(row['model'], str(row['iterations']), f'{row["minutes"]:.1f}', f'{row["loss"]:.3f}', quality,
                      bar, 'yes' if row['passed'] else '[red]no[/red]')
    console.print(table)
    out = osp.join(work_dir, 'overfit.json')
    write_json_atomic(dict(videos=list(args.videos), rows=rows), out)
    plot_overfit(rows, osp.join(work_dir, 'overfit.png'))
    missed = [row['model'] for row in rows if not row['passed']]
    console.print(f'saved {out} and {osp.join(work_dir, "overfit.png")}; '
                  + (f'below the bar: {", ".join(missed)}' if missed else 'every part at its bar')
                  + f' ({time.perf_counter() - start:.0f} s)')
    return rows


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    rows = run_cli(main)
    raise SystemExit(0 if rows and all(row['passed'] for row in rows) else 1)
