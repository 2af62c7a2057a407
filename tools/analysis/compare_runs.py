#!/usr/bin/env python
"""Several runs side by side (paper Table 5), the best two per metric marked.

    python tools/analysis/compare_runs.py RUN_A/metrics.json RUN_B/metrics.json ... [--names A B ...]
        [--metrics HOTA DetA AssA MOTA IDF1 IDSW] [--row COMBINED] [--csv FILE.csv]
        [--reference NAME [--videos V ...] [--bootstrap N] [--level 0.9] [--seed S]]

Reads the JSON written by tools/eval_mot.py or tools/test.py. In the table the best value of each metric is bold
and the second underlined (lower is better for FP, FN, IDSW, Frag, ML); the CSV has the values and their ranks
(vastmat.experiments.matcher_study.compare_runs). With --reference (files with per-video results: a
metrics_per_video.json of tools/test.py, an eval_mot.py JSON), a second table: every run's COMBINED HOTA on --videos
(default: the videos all have) and its difference to the reference run with a paired-bootstrap interval
(vastmat.experiments.matcher_study.paired_hota).
"""
import argparse

from vastmat.experiments.matcher_study import DEFAULT_METRICS, compare_runs, paired_hota


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('runs', nargs='+', help='metrics JSON files')
    parser.add_argument('--names', nargs='+')
    parser.add_argument('--metrics', nargs='+', default=list(DEFAULT_METRICS))
    parser.add_argument('--row', default='COMBINED', help='which entry of each JSON (default COMBINED)')
    parser.add_argument('--csv')
    parser.add_argument('--title', help='first line of the table (e.g. the settings the runs share)')
    parser.add_argument('--reference', help='the run (one of --names) the paired-bootstrap table compares with')
    parser.add_argument('--videos', nargs='+', help='the videos of that table (default: those all runs have)')
    parser.add_argument('--bootstrap', type=int, default=1000, help='paired resamples of the videos')
    parser.add_argument('--level', type=float, default=0.9)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    result = compare_runs(args.runs, args.names, args.metrics, args.row, args.title, args.csv)
    if args.reference:
        names = args.names or list(result['rows'])
        result['paired'] = paired_hota(args.runs, names, args.reference, args.videos, args.bootstrap, args.level,
                                       args.seed)
    return result


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
