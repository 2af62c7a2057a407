#!/usr/bin/env python
"""The paper's dataset statistics for any VastMAT root or MOTChallenge split folder.

    python tools/analysis/dataset_stats.py --data-root DIR [--split protocol2/test] [--stride K] --out FILE.json

Counts (videos, categories, frames, boxes, trajectories, per video / per frame, hours, multi-category videos,
videos with more than 10 trajectories, per group), the Figure 3 motion analysis (target motion, consecutive-frame
IoU, relative area and aspect ratio) and Table 2 (events with frame gap <= 3 by normalized displacement). Prints
tables, writes the JSON and FILE_motion.png (histograms).
"""
import argparse
import os.path as osp

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from vastmat.datasets.categories import Categories
from vastmat.datasets.sequences import load_sequence, parse_split_name, select_videos
from vastmat.datasets.statistics import counts, displacement_table, motion
from vastmat.utils.io import save_figure_atomic, write_json_atomic


def plot_motion(values: dict, path: str, title: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, 4, figsize=(16, 3.4))
    specs = (('motion', 'target motion (centre distance / mean diagonal)', (0, 0.5)),
             ('iou', 'consecutive-frame IoU', (0, 1)),
             ('relative_area', 'area / first box area (log2)', None),
             ('relative_aspect_ratio', 'aspect ratio / first box (log2)', None))
    for ax, (key, label, limits) in zip(axes, specs):
        data = values[key]
        if limits is None:
            data = np.log2(data[data > 0])
        ax.hist(data, bins=60, range=limits, color='#3b7dd8')
        ax.set_xlabel(label)
        ax.set_ylabel('pairs' if key in ('motion', 'iou') else 'boxes')
    fig.suptitle(title)
    fig.tight_layout()
    save_figure_atomic(fig, path)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True, help='VastMAT root or MOTChallenge split folder')
    parser.add_argument('--split', help='PROTOCOL/SPLIT of a VastMAT root, e.g. protocol1/train (default: all)')
    parser.add_argument('--stride', type=int, default=1, help='keep every K-th frame (3: 30 to 10 FPS)')
    parser.add_argument('--max-gap', type=int, default=3, help='Table 2: largest frame gap of an event')
    parser.add_argument('--out', required=True, help='JSON file')
    parser.add_argument('--no-plots', action='store_true')
    args = parser.parse_args(argv)

    protocol, split = parse_split_name(args.split)
    names = select_videos(args.data_root, protocol, split)
    sequences = [load_sequence(args.data_root, n, stride=args.stride)
                 for n in tqdm(names, desc=f'reading {len(names)} videos')]
    missing = [s.name for s in sequences if s.gt is None]
    if missing:
        raise FileNotFoundError(f'{len(missing)} video(s) have no gt/gt.txt: {missing[:5]}')
    result = counts(sequences, Categories.for_root(args.data_root))
    summary, values = motion(sequences)
    result['motion'] = summary
    result['table2'] = displacement_table(sequences, max_gap=args.max_gap)
    result.update(data_root=osp.abspath(args.data_root), split=args.split, stride=args.stride)

    console = Console()
    table = Table(title=f'{args.data_root} {args.split or "(all videos)"} stride {args.stride}')
    table.add_column('statistic')
    table.add_column('value', justify='right')
    for key in ('videos', 'categories', 'frames', 'boxes', 'valid_boxes', 'trajectories', 'trajectories_per_video',
                'objects_per_frame', 'hours', 'multi_category_videos', 'videos_with_more_than_10_trajectories'):
        value = result[key]
        table.add_row(key, f'{value:,.2f}' if isinstance(value, float) else f'{value:,}')
    for key, value in summary.items():
        table.add_row(f'motion: {key}', f'{value:.4f}' if isinstance(value, float) else f'{value:,}')
    console.print(table)
    bins = Table(title=f'Table 2: {result["table2"]["events"]:,} events (gap <= {args.max_gap}), zero overlap '
                       f'{100 * result["table2"]["zero_overlap_share"]:.2f}%')
    for column in ('normalized displacement', 'events', 'share %', 'median IoU', 'zero overlap %'):
        bins.add_column(column, justify='right')
    for row in result['table2']['bins']:
        bins.add_row(row['range'], f'{row["count"]:,}', f'{100 * row["share"]:.2f}', f'{row["median_iou"]:.3f}',
                     f'{100 * row["zero_overlap_share"]:.2f}')
    console.print(bins)
    if 'groups' in result:
        groups = Table(title='per animal group')
        for column in ('group', 'categories', 'videos', 'boxes', 'trajectories'):
            groups.add_column(column, justify='right')
        for group, g in result['groups'].items():
            groups.add_row(group, *(f'{g[k]:,}' for k in ('categories', 'videos', 'boxes', 'trajectories')))
        console.print(groups)
    write_json_atomic(result, args.out)
    if not args.no_plots and len(values['motion']):
        plot_path = osp.splitext(args.out)[0] + '_motion.png'
        plot_motion(values, plot_path, f'{osp.basename(osp.normpath(args.data_root))} stride {args.stride}')
        print(f'histograms: {plot_path}')
    print(f'statistics: {args.out}')
    return result


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
