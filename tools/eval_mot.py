#!/usr/bin/env python
"""Evaluate a folder of tracker result files with TrackEval (HOTA, CLEAR, Identity), per video and combined.

    python tools/eval_mot.py --gt-root DIR --results DIR [--seqmap FILE] [--split protocol2/test]
        [--preset vastmat|mot15|mot17|mot20] [--workers N] [--out FILE.json] [--plot FILE.png]

DIR of --gt-root is a VastMAT root or a MOTChallenge split folder (<video>/gt/gt.txt, <video>/seqinfo.ini);
--results holds <video>.txt. A missing result file counts as an empty tracker output and is reported by name; a
malformed one fails with its file and line. Prints the table in percentages and writes FILE.json as
{"COMBINED": {...}, "<video>": {...}} (TrackEval's names, fractions, integer counts) and, beside it,
FILE_analysis.json: per-video HOTA statistics and, when the ground truth has categories, results per animal group.
"""
import argparse
import os.path as osp

from rich.console import Console
from rich.table import Table

from vastmat.datasets.categories import Categories
from vastmat.datasets.sequences import parse_split_name, select_videos
from vastmat.evaluation.analysis import per_video_hota_stats, plot_hota_cdf, results_by_group, video_groups
from vastmat.evaluation.mot_eval import PRESETS, evaluate_folder, read_seqmap
from vastmat.evaluation.report import print_tracking_table
from vastmat.utils.io import write_json_atomic


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--gt-root', required=True)
    parser.add_argument('--results', required=True, help='folder of <video>.txt result files')
    parser.add_argument('--seqmap', help='MOTChallenge seqmap file of the videos to evaluate')
    parser.add_argument('--split', help='PROTOCOL/SPLIT of a VastMAT root, e.g. protocol2/test')
    parser.add_argument('--preset', choices=PRESETS, default='vastmat')
    parser.add_argument('--workers', type=int, default=1, help='processes (videos are evaluated in parallel)')
    parser.add_argument('--out', help='JSON file (default: RESULTS/metrics.json)')
    parser.add_argument('--plot', help='PNG of the empirical CDF of per-video HOTA')
    args = parser.parse_args(argv)
    if args.seqmap and args.split:
        parser.error('give --seqmap or --split, not both')
    if args.seqmap:
        names = read_seqmap(args.seqmap)
    else:
        protocol, split = parse_split_name(args.split)
        names = select_videos(args.gt_root, protocol, split)
    results, raw, specs, missing = evaluate_folder(args.gt_root, args.results, names, args.preset, args.workers)
    print_tracking_table(results, f'{args.results} ({args.preset}, {len(specs)} videos)')

    analysis = dict(per_video_hota=per_video_hota_stats(results), missing_results=missing, preset=args.preset)
    if args.preset == 'vastmat':
        groups = video_groups({s.name: s.gt_path for s in specs}, Categories.for_root(args.gt_root))
        if any(groups.values()):
            analysis['by_group'] = results_by_group(raw, groups)
            print_tracking_table(analysis['by_group'], 'per animal group', rows=sorted(analysis['by_group']))
    stats = analysis['per_video_hota']
    table = Table(title='per-video HOTA')
    for column in ('videos', 'mean', 'median', 'IQR', 'P10', 'P90', '< 20 %', '< 40 %'):
        table.add_column(column, justify='right')
    table.add_row(str(stats['videos']), *(f'{100 * stats[k]:.2f}' for k in
                                          ('mean', 'median', 'iqr', 'p10', 'p90', 'share_below_20', 'share_below_40')))
    Console().print(table)
    out = args.out or osp.join(args.results, 'metrics.json')
    write_json_atomic(results, out)
    write_json_atomic(analysis, osp.splitext(out)[0] + '_analysis.json')
    if args.plot:
        plot_hota_cdf({osp.basename(osp.normpath(args.results)): results}, args.plot)
    print(f'metrics: {out}')
    return results


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
