#!/usr/bin/env python
"""Reannotation audit (paper 3.3 / C.2): compare an original and an independent annotation of the same clips.

    python tools/analysis/audit_annotations.py --original ROOT_A --reannotated ROOT_B [--clips CLIPS.txt]
        [--clip-length 20 --clips-per-video 2] [--iou 0.5] [--matcher hungarian|greedy] --out FILE.json

Both roots are VastMAT roots or MOTChallenge split folders holding the same video names. CLIPS.txt has one clip a
line, ``video first_frame last_frame`` (inclusive); without it each video gives ``--clips-per-video`` consecutive
clips of ``--clip-length`` frames from frame 1 (or the whole video when no length is given). Prints the overall,
per-size, per-group and identity results and writes them as JSON.
"""
import argparse

from rich.console import Console
from rich.table import Table

from vastmat.datasets.audit import Clip, audit_clips
from vastmat.datasets.categories import Categories
from vastmat.datasets.sequences import list_sequences, load_sequence
from vastmat.utils.io import write_json_atomic


def read_clips(path: str) -> list[Clip]:
    clips = []
    with open(path, encoding='utf-8') as f:
        for line_number, line in enumerate(f, start=1):
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            fields = line.split()
            if len(fields) != 3:
                raise ValueError(f'{path}:{line_number}: expected "video first_frame last_frame", got {line!r}')
            try:
                first, last = int(fields[1]), int(fields[2])
            except ValueError:
                raise ValueError(f'{path}:{line_number}: frames must be integers, got {line!r}') from None
            if not 1 <= first <= last:
                raise ValueError(f'{path}:{line_number}: need 1 <= first_frame <= last_frame, got {first} {last}')
            clips.append(Clip(fields[0], first, last))
    return clips


def default_clips(root: str, videos: list[str], length: int | None, per_video: int) -> list[Clip]:
    clips = []
    for name in videos:
        seq_length = load_sequence(root, name, with_gt=False).length
        if length is None:
            clips.append(Clip(name, 1, seq_length))
            continue
        for k in range(per_video):
            first = 1 + k * length
            if first + length - 1 > seq_length:
                break
            clips.append(Clip(name, first, first + length - 1))
    return clips


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--original', required=True)
    parser.add_argument('--reannotated', required=True)
    parser.add_argument('--clips', help='file of "video first_frame last_frame" lines')
    parser.add_argument('--videos', nargs='*', help='videos to audit (default: all videos of --reannotated)')
    parser.add_argument('--clip-length', type=int, help='frames per clip when no --clips file is given')
    parser.add_argument('--clips-per-video', type=int, default=2)
    parser.add_argument('--iou', type=float, default=0.5, help='matching threshold (paper: 0.5)')
    parser.add_argument('--matcher', choices=('hungarian', 'greedy'), default='hungarian')
    parser.add_argument('--out', required=True)
    args = parser.parse_args(argv)

    if args.clips:
        clips = read_clips(args.clips)
    else:
        videos = args.videos or list_sequences(args.reannotated)
        clips = default_clips(args.reannotated, videos, args.clip_length, args.clips_per_video)
    names = sorted({c.video for c in clips})
    original = {n: load_sequence(args.original, n).gt for n in names}
    reannotated = {n: load_sequence(args.reannotated, n).gt for n in names}
    for side, sets in (('original', original), ('reannotated', reannotated)):
        missing = [n for n, gt in sets.items() if gt is None]
        if missing:
            raise FileNotFoundError(f'{side}: no gt/gt.txt for {missing[:5]}')
    result = audit_clips(clips, original, reannotated, Categories.for_root(args.original), args.iou, args.matcher)

    console = Console()
    table = Table(title=f'audit of {len(clips)} clips ({args.matcher}, IoU >= {args.iou})')
    table.add_column('measure')
    table.add_column('value', justify='right')
    for key in ('original_boxes', 'reannotated_boxes', 'matches', 'unmatched_original', 'unmatched_reannotated'):
        table.add_row(key, f'{result[key]:,}')
    for key in ('coverage_original', 'coverage_reannotated', 'f1', 'category_agreement'):
        table.add_row(key + ' %', f'{100 * result[key]:.2f}')
    table.add_row('mean_matched_iou', f'{result["mean_matched_iou"]:.4f}')
    identity = result['identity']
    table.add_row('identity consistency %', f'{100 * identity["consistency"]:.2f} '
                                            f'({identity["consistent"]}/{identity["eligible"]})')
    table.add_row('mean majority coverage %', f'{100 * identity["mean_majority_coverage"]:.2f}')
    table.add_row('mean longest consistent span', f'{identity["mean_longest_consistent_span"]:.2f} frames')
    console.print(table)
    sizes = Table(title='original boxes by area')
    for column in ('size', 'boxes', 'share %', 'coverage %', 'share of unmatched %'):
        sizes.add_column(column, justify='right')
    for name, s in result['by_size'].items():
        sizes.add_row(name, f'{s["boxes"]:,}', f'{100 * s["share_of_original"]:.2f}',
                      f'{100 * s["coverage_original"]:.2f}', f'{100 * s["share_of_unmatched_original"]:.2f}')
    console.print(sizes)
    if result.get('by_group'):
        groups = Table(title='per animal group')
        for column in ('group', 'original', 'reannotated', 'matches', 'coverage orig %', 'coverage re %', 'F1 %'):
            groups.add_column(column, justify='right')
        for name, g in result['by_group'].items():
            groups.add_row(name, f'{g["original_boxes"]:,}', f'{g["reannotated_boxes"]:,}', f'{g["matches"]:,}',
                           f'{100 * g["coverage_original"]:.2f}', f'{100 * g["coverage_reannotated"]:.2f}',
                           f'{100 * g["f1"]:.2f}')
        console.print(groups)
    write_json_atomic(result, args.out)
    print(f'audit: {args.out}')
    return result


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
