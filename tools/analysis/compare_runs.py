#!/usr/bin/env python
"""Several runs side by side (paper Table 5), the best two per metric marked.

    python tools/analysis/compare_runs.py RUN_A/metrics.json RUN_B/metrics.json ... [--names A B ...]
        [--metrics HOTA DetA AssA MOTA IDF1 IDSW] [--row COMBINED] [--csv FILE.csv]

Reads the JSON written by tools/eval_mot.py or tools/test.py. In the table the best value of each metric is bold
and the second underlined (lower is better for FP, FN, IDSW, Frag, ML); the CSV has the values and their ranks.
"""
import argparse
import csv
import json
import os.path as osp

from rich.console import Console
from rich.table import Table

from vastmat.evaluation.report import format_value
from vastmat.utils.io import atomic_write

LOWER_IS_BETTER = {'CLR_FP', 'CLR_FN', 'IDSW', 'Frag', 'ML', 'IDFP', 'IDFN'}
DEFAULT_METRICS = ('HOTA', 'DetA', 'AssA', 'MOTA', 'IDF1', 'IDSW')


def rank_runs(values: dict[str, float], metric: str) -> dict[str, int]:
    """1-based rank of each run for one metric (ties share the better rank)."""
    ordered = sorted(set(values.values()), reverse=metric not in LOWER_IS_BETTER)
    return {run: ordered.index(v) + 1 for run, v in values.items()}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('runs', nargs='+', help='metrics JSON files')
    parser.add_argument('--names', nargs='+')
    parser.add_argument('--metrics', nargs='+', default=list(DEFAULT_METRICS))
    parser.add_argument('--row', default='COMBINED', help='which entry of each JSON (default COMBINED)')
    parser.add_argument('--csv')
    parser.add_argument('--title', help='first line of the table (e.g. the settings the runs share)')
    args = parser.parse_args(argv)
    names = args.names or [osp.basename(osp.dirname(osp.abspath(r))) or r for r in args.runs]
    if len(names) != len(args.runs) or len(set(names)) != len(names):
        parser.error('--names must give one distinct name per run')
    rows = {}
    for name, path in zip(names, args.runs):
        with open(path, encoding='utf-8') as f:
            data = json.load(f)
        entry = data.get(args.row, data if args.row == 'COMBINED' and 'HOTA' in data else None)
        if entry is None:
            raise KeyError(f'{path}: no entry {args.row!r}')
        missing = [m for m in args.metrics if m not in entry]
        if missing:
            raise KeyError(f'{path}: no metric {missing[0]!r} in {args.row!r}')
        rows[name] = {m: entry[m] for m in args.metrics}
    ranks = {m: rank_runs({n: rows[n][m] for n in names}, m) for m in args.metrics}
    title = f'{len(names)} runs ({args.row}); bold = best, underlined = second'
    table = Table(title=f'{args.title}\n{title}' if args.title else title)
    table.add_column('run')
    for m in args.metrics:
        table.add_column(m + (' ↓' if m in LOWER_IS_BETTER else ''), justify='right')
    for name in names:
        cells = []
        for m in args.metrics:
            text = format_value(m, rows[name][m])
            rank = ranks[m][name]
            cells.append(f'[bold]{text}[/bold]' if rank == 1 else f'[underline]{text}[/underline]' if rank == 2
                         else text)
        table.add_row(name, *cells)
    Console().print(table)
    if args.csv:
        with atomic_write(args.csv) as f:
            writer = csv.writer(f)
            writer.writerow(['run', *args.metrics, *(f'{m}_rank' for m in args.metrics)])
            for name in names:
                writer.writerow([name, *(rows[name][m] for m in args.metrics), *(ranks[m][name] for m in args.metrics)])
    return dict(rows=rows, ranks=ranks)


if __name__ == '__main__':
    main()
