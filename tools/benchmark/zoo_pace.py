#!/usr/bin/env python
"""This machine's pace on the zoo's trainings, as make demo measures it before it plans
(vastmat/experiments/zoo_pace.py): each zoo training config's probe (a few training iterations at one thread), its
build-machine probe (the config's zoo_probe_seconds_per_iter) and the factor between them.

    python tools/benchmark/zoo_pace.py [--data-root data/demo] [--repeats 3] [--workers 2]
        [--out work_dirs/zoo_pace.json]

Run on the build machine, with the machine quiet, its median probe is the value to write into each config's
zoo_probe_seconds_per_iter. Prints the table (median and range over --repeats) and saves JSON.
"""
from __future__ import annotations

import argparse
import os.path as osp


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', default='data/demo', help='the VastMAT root the zoo trains on (rendered '
                        'if absent: the demo data)')
    parser.add_argument('--repeats', type=int, default=3, help='probes of each config (default 3)')
    parser.add_argument('--workers', type=int, default=2, help='probes at a time (default 2: as make demo probes)')
    parser.add_argument('--out', default='work_dirs/zoo_pace.json')
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f'--repeats must be >= 1, got {args.repeats}')
    return args


def main(argv: list[str] | None = None) -> dict:
    import statistics

    from rich.console import Console
    from rich.table import Table

    from vastmat.experiments.zoo import DEMO_DETECTOR, select_members
    from vastmat.experiments.zoo_benchmark import ensure_data
    from vastmat.experiments.zoo_context import ZooContext
    from vastmat.experiments.zoo_pace import probe_configs
    from vastmat.experiments.zoo_training_order import member_trainings, source_order, training_config
    from vastmat.utils.io import write_json_atomic
    args = parse_args(argv)
    console = Console()
    ensure_data(args.data_root, console)
    ctx = ZooContext(args.data_root, 'protocol1', [], 'work_dirs/zoo_pace')
    configs = [DEMO_DETECTOR]
    for member in select_members(None):
        for config in member_trainings(member):
            configs += [c for c in [*source_order(config), config] if c not in configs]
    cfgs = {config: training_config(ctx, config, 'probe') for config in configs}
    probes = {config: [] for config in configs}
    for repeat in range(args.repeats):
        for config, seconds in probe_configs(cfgs, args.workers).items():
            probes[config].append(seconds)
        console.print(f'  probe {repeat + 1}/{args.repeats} done')
    rows = {}
    for config, cfg in cfgs.items():
        reference = cfg.get('zoo_probe_seconds_per_iter')
        median = statistics.median(probes[config])
        rows[config] = dict(probes=probes[config], median=median, reference=reference,
                            factor=median / reference if reference else None)
    table = Table(title="this machine's probe against the build machine's")
    for column in ('config', 'probe s/it (median, range)', 'build machine', 'factor'):
        table.add_column(column)
    for config, row in rows.items():
        table.add_row(osp.basename(config), f"{row['median']:.4f} ({min(row['probes']):.4f}-"
                      f"{max(row['probes']):.4f})", f"{row['reference'] or '-'}",
                      f"{row['factor']:.2f}" if row['factor'] else '-')
    console.print(table)
    write_json_atomic(rows, args.out)
    return rows


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
