#!/usr/bin/env python
"""One self-contained HTML report of tracking runs, to browse offline (vastmat/experiments/report):

    python tools/analysis/report.py RUN [RUN ...] [--out report.html] [--title TEXT] [--no-clips]

Each RUN is a work dir of tools/zoo_benchmark.py (zoo.json), tools/test.py (metrics.json, with the per-video results
of its evaluator's ``outfile_dir`` inside it), tools/analysis/sweep.py (table.csv) or tools/tune.py (tune.json).
The page holds the tables (click a column to sort), a trackers x videos HOTA heat map (click a video for its
per-run DetA, AssA, IDSW, FP, FN), the paper's analyses (animal groups, difficulty thirds, per-video HOTA, HOTA
against training time), clips of the worst, the best and the most disputed video with every run's tracks (one frame
slider moves them all; longer videos also as an MP4 in ``<out>_files/``) and the provenance of each run. ``make
demo`` writes the zoo's to work_dirs/zoo_benchmark/report.html.
"""
from __future__ import annotations

import argparse


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('runs', nargs='+', metavar='RUN', help='work dirs of the zoo, tools/test.py, sweeps, tune')
    parser.add_argument('--out', default='report.html', help='the page (default report.html)')
    parser.add_argument('--title', default='VastMAT tracking report')
    parser.add_argument('--no-clips', action='store_true', help='leave out the clips (no frames are read)')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    from vastmat.experiments.report import write_report
    args = parse_args(argv)
    out = write_report(args.runs, args.out, args.title, clips=not args.no_clips)
    print(f'report of {out["runs"]} runs over {out["videos"]} videos, {out["clips"]} clips: {out["path"]} '
          f'({out["bytes"] / 1e6:.1f} MB, {out["seconds"]:.1f} s)')
    return out


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
