#!/usr/bin/env python
"""Easy / Medium / Hard thirds of the videos by mean per-video HOTA over several trackers (paper D.3).

    python tools/analysis/difficulty_groups.py --gt-root DIR --results RUN_A RUN_B ... [--names A B ...]
        [--split protocol2/test] [--preset vastmat] [--workers N] --out FILE.json [--plot cdf.png]

Evaluates every result folder, ranks the videos by their HOTA averaged over the trackers, cuts the ranking into
thirds and reports each tracker's combined metrics on each third, plus the per-video HOTA statistics per tracker.
"""
import argparse
import os.path as osp

from rich.console import Console
from rich.table import Table

from vastmat.datasets.sequences import parse_split_name, select_videos
from vastmat.evaluation.analysis import (DIFFICULTY_LEVELS, difficulty_thirds, per_video_hota_stats,
                                         plot_hota_cdf)
from vastmat.evaluation.mot_eval import PRESETS, combine, evaluate_folder
from vastmat.utils.io import write_json_atomic


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--gt-root', required=True)
    parser.add_argument('--results', nargs='+', required=True, help='result folders, one per tracker')
    parser.add_argument('--names', nargs='+', help='tracker names (default: folder names)')
    parser.add_argument('--split', help='PROTOCOL/SPLIT of a VastMAT root')
    parser.add_argument('--preset', choices=PRESETS, default='vastmat')
    parser.add_argument('--workers', type=int, default=1)
    parser.add_argument('--out', required=True)
    parser.add_argument('--plot', help='PNG: empirical CDF of per-video HOTA per tracker')
    args = parser.parse_args(argv)
    names = args.names or [osp.basename(osp.normpath(r)) for r in args.results]
    if len(names) != len(args.results) or len(set(names)) != len(names):
        parser.error('--names must give one distinct name per result folder')
    protocol, split = parse_split_name(args.split)
    videos = select_videos(args.gt_root, protocol, split)
    flat, raw = {}, {}
    for name, folder in zip(names, args.results):
        flat[name], raw[name], _, _ = evaluate_folder(args.gt_root, folder, videos, args.preset, args.workers)
    levels = difficulty_thirds(flat)
    report = dict(levels=levels, trackers={})
    table = Table(title=f'HOTA by difficulty ({len(videos)} videos, {len(names)} trackers)')
    table.add_column('tracker')
    for level in DIFFICULTY_LEVELS:
        table.add_column(f'{level} ({len(levels[level])})', justify='right')
    table.add_column('all', justify='right')
    for name in names:
        per_level = {level: combine(raw[name], levels[level]) for level in DIFFICULTY_LEVELS if levels[level]}
        report['trackers'][name] = dict(per_level, all=flat[name]['COMBINED'],
                                        per_video_hota=per_video_hota_stats(flat[name]))
        table.add_row(name, *(f'{100 * per_level[lv]["HOTA"]:.2f}' if lv in per_level else '-'
                              for lv in DIFFICULTY_LEVELS), f'{100 * flat[name]["COMBINED"]["HOTA"]:.2f}')
    Console().print(table)
    write_json_atomic(report, args.out)
    if args.plot:
        plot_hota_cdf(flat, args.plot)
    print(f'difficulty groups: {args.out}')
    return report


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
