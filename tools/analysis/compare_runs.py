#!/usr/bin/env python
"""Several runs side by side (paper Table 5), the best two per metric marked.

    python tools/analysis/compare_runs.py RUN_A/metrics.json RUN_B/metrics.json ... [--names A B ...]
        [--metrics HOTA DetA AssA MOTA IDF1 IDSW] [--row COMBINED] [--csv FILE.csv]

Reads the JSON written by tools/eval_mot.py or tools/test.py. In the table the best value of each metric is bold
and the second underlined (lower is better for FP, FN, IDSW, Frag, ML); the CSV has the values and their ranks.
"""
import argparse
import json
import os.path as osp

from rich.console import Console

from vastmat.evaluation.report import ranked_table, write_ranked_csv

DEFAULT_METRICS = ('HOTA', 'DetA', 'AssA', 'MOTA', 'IDF1', 'IDSW')


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
    title = f'{len(names)} runs ({args.row})'
    table, ranks = ranked_table(rows, [(m, m, m) for m in args.metrics], f'{args.title}\n{title}' if args.title
                                else title)
    Console().print(table)
    if args.csv:
        write_ranked_csv(rows, ranks, list(args.metrics), args.csv)
    return dict(rows=rows, ranks=ranks)


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
