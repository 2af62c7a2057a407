#!/usr/bin/env python
"""Export tracking results as a movement bounding-box dataset (netCDF), a tidy table (CSV, Parquet) or MOT text.

    python tools/analysis/export_tracks.py RESULTS --to OUT [--format {nc,csv,parquet,txt}]
        [--data-root ROOT | --seqinfo INI | --fps F] [--videos V ...]

RESULTS is a results file or a folder of <video>.txt. OUT is a file whose suffix names the format (.nc, .csv,
.parquet, .txt; a folder's videos go into one file only as a table), or a folder with --format (OUT/<video>.<fmt>).
The frame rate comes from --fps or from the videos' seqinfo.ini (frameRate) under --data-root; it is not guessed
(the .txt output needs none). Definitions of the columns: vastmat/apis/export.py and docs/data.md.
"""
from __future__ import annotations

import argparse


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from vastmat.apis.export import FORMATS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('results', help='a results file or a folder of <video>.txt')
    parser.add_argument('--to', required=True, dest='out', help='the output file (.nc, .csv, .parquet, .txt) or, '
                        'with --format, a folder')
    parser.add_argument('--format', choices=FORMATS, help='write OUT/<video>.<format> for each video')
    rate = parser.add_mutually_exclusive_group()
    rate.add_argument('--data-root', help='a VastMAT root or MOTChallenge folder: each video\'s seqinfo.ini '
                      'frameRate (and seqLength, which bounds the frames)')
    rate.add_argument('--seqinfo', help='one seqinfo.ini whose frameRate applies to every video')
    rate.add_argument('--fps', type=float, help='the frame rate of every video')
    parser.add_argument('--videos', nargs='+', help='only these videos of a results folder')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> list[dict]:
    from dataclasses import asdict

    from rich.console import Console
    from rich.table import Table

    from vastmat.apis.export import export_tracks
    args = parse_args(argv)
    records = export_tracks(args.results, args.out, args.format, fps=args.fps, data_root=args.data_root,
                            seqinfo=args.seqinfo, videos=args.videos)
    table = Table(title=f'{args.results} exported')
    for column in ('video', 'format', 'boxes', 'ids', 'frames', 'fps', 'written'):
        table.add_column(column, justify='right' if column in ('boxes', 'ids', 'frames', 'fps') else 'left')
    for r in records:
        table.add_row(r.video, r.format, str(r.boxes), str(r.identities), str(r.frames),
                      '-' if r.fps is None else f'{r.fps:g}', r.path)
    Console().print(table)
    return [asdict(r) for r in records]


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
