#!/usr/bin/env python
"""Make both protocols' splits of a VastMAT root (paper section 3.5) and check them.

    python tools/data/make_splits.py --data-root DIR [--test-videos 315] [--test-categories 54]
        [--dev-fraction 0.05] [--train-only-groups amphibian reptile] [--seed 0] [--out-dir DIR/splits]

Writes OUT/protocol{1,2}/{train,test,dev}.txt (dev.txt is a subset of train.txt) and OUT/split_stats.json, and
prints the statistics. Protocol 1: test categories all seen in train. Protocol 2: category-disjoint, whole
components of the category co-occurrence graph on one side, the largest in train.
"""
import argparse
import os.path as osp

import numpy as np
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from vastmat.datasets.categories import GROUPS, Categories
from vastmat.datasets.sequences import list_sequences, load_sequence
from vastmat.datasets.splits import check_split, make_protocol_splits
from vastmat.utils.io import write_json_atomic, write_lines_atomic


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True)
    parser.add_argument('--test-videos', type=int, default=315, help='target number of test videos (paper: 315)')
    parser.add_argument('--test-categories', type=int, default=54,
                        help='target number of Protocol 2 test categories (paper: 54)')
    parser.add_argument('--dev-fraction', type=float, default=0.05, help='dev videos / train videos')
    parser.add_argument('--train-only-groups', nargs='*', default=['amphibian', 'reptile'], choices=GROUPS,
                        help='groups kept out of the Protocol 2 test split (paper: amphibians, reptiles)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--out-dir', help='default: DATA_ROOT/splits')
    args = parser.parse_args(argv)

    categories = Categories.for_root(args.data_root)
    video_categories = {}
    for name in tqdm(list_sequences(args.data_root), desc='reading ground truth'):
        gt = load_sequence(args.data_root, name).gt
        if gt is None:
            raise FileNotFoundError(f'{name}: no gt/gt.txt; splits need every video\'s categories')
        video_categories[name] = set(np.unique(gt.categories[(gt.valid == 1) & (gt.categories > 0)]).tolist())
    train_only = {c.id for g in args.train_only_groups for c in categories.in_group(g)}
    splits = make_protocol_splits(video_categories, args.test_videos, args.test_categories, args.dev_fraction,
                                  args.seed, train_only)
    out_dir = args.out_dir or osp.join(args.data_root, 'splits')
    stats = {}
    table = Table(title='VastMAT splits')
    for column in ('protocol', 'train videos', 'test videos', 'dev videos', 'train categories', 'test categories',
                   'unseen test categories'):
        table.add_column(column, justify='right')
    for protocol, split in splits.items():
        stats[protocol] = check_split(protocol, split, video_categories)
        for part in ('train', 'test', 'dev'):
            write_lines_atomic(getattr(split, part), osp.join(out_dir, protocol, f'{part}.txt'))
        s = stats[protocol]
        table.add_row(protocol, *(str(s[k]) for k in ('train_videos', 'test_videos', 'dev_videos',
                                                      'train_categories', 'test_categories',
                                                      'test_categories_unseen')))
    Console().print(table)
    write_json_atomic(dict(stats, seed=args.seed, targets=dict(test_videos=args.test_videos,
                                                              test_categories=args.test_categories)),
                      osp.join(out_dir, 'split_stats.json'))
    print(f'splits written to {out_dir} (rules checked: protocol 1 seen, protocol 2 component-disjoint)')
    return stats


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
