#!/usr/bin/env python
"""Several runs side by side (paper Table 5), the best two per metric marked.

    python tools/analysis/compare_runs.py RUN_A/metrics.json RUN_B/metrics.json ... [--names A B ...]
        [--metrics HOTA DetA AssA MOTA IDF1 IDSW] [--row COMBINED] [--csv FILE.csv]

Reads the JSON written by tools/eval_mot.py or tools/test.py. In the table the best value of each metric is bold
and the second underlined (lower is better for FP, FN, IDSW, Frag, ML); the CSV has the values and their ranks
(vastmat.experiments.matcher_study.compare_runs).
"""
import argparse

from vastmat.experiments.matcher_study import DEFAULT_METRICS, compare_runs


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('runs', nargs='+', help='metrics JSON files')
    parser.add_argument('--names', nargs='+')
    parser.add_argument('--metrics', nargs='+', default=list(DEFAULT_METRICS))
    parser.add_argument('--row', default='COMBINED', help='which entry of each JSON (default COMBINED)')
    parser.add_argument('--csv')
    parser.add_argument('--title', help='first line of the table (e.g. the settings the runs share)')
    args = parser.parse_args(argv)
    return compare_runs(args.runs, args.names, args.metrics, args.row, args.title, args.csv)


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
