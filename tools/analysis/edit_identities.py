#!/usr/bin/env python
"""Fix a tracker's identities by hand: swap two from a frame on, merge two, split one at a frame.

    python tools/analysis/edit_identities.py swap RESULTS_TXT A B --from-frame F [--to-frame G]
    python tools/analysis/edit_identities.py merge RESULTS_TXT KEEP ABSORB
    python tools/analysis/edit_identities.py split RESULTS_TXT ID --at-frame F [--new-id N]
    python tools/analysis/edit_identities.py replay LOG RESULTS_DIR
    python tools/analysis/edit_identities.py undo RESULTS_TXT
    python tools/analysis/edit_identities.py list RESULTS_DIR

RESULTS_TXT is a results file <results_dir>/<video>.txt (frames 1-based, as the report's clips and
tools/demo/track_video.py label them). Each edit rewrites it in place, keeps the unedited file once as
<results_dir>/unedited/<video>.txt and appends a line to <results_dir>/identity_edits.jsonl; ``replay`` applies such
a log to another run's results folder (identities matched by the anchor boxes the log holds), ``undo`` restores a
video's unedited file and drops its edits from the log. See docs/editing_identities.md.
"""
from __future__ import annotations

import argparse
import os.path as osp


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest='command', required=True)
    swap = commands.add_parser('swap', help='two identities trade ids from a frame on (to --to-frame)')
    swap.add_argument('results', help='<results_dir>/<video>.txt')
    swap.add_argument('a', type=int)
    swap.add_argument('b', type=int)
    swap.add_argument('--from-frame', type=int, required=True, help='the first frame to swap (1-based)')
    swap.add_argument('--to-frame', type=int, help='the last frame to swap (default: the last of the video)')
    merge = commands.add_parser('merge', help='ABSORB\'s boxes take KEEP\'s id')
    merge.add_argument('results', help='<results_dir>/<video>.txt')
    merge.add_argument('keep', type=int)
    merge.add_argument('absorb', type=int)
    split = commands.add_parser('split', help='an identity\'s boxes from a frame on get a new id')
    split.add_argument('results', help='<results_dir>/<video>.txt')
    split.add_argument('id', type=int)
    split.add_argument('--at-frame', type=int, required=True, help='the first frame of the new identity')
    split.add_argument('--new-id', type=int, help='the new id (default: the largest id + 1)')
    replay = commands.add_parser('replay', help='apply an edit log to another run\'s results folder')
    replay.add_argument('log', help='an identity_edits.jsonl')
    replay.add_argument('results_dir', help='the results folder of the other run')
    undo = commands.add_parser('undo', help='restore a video\'s unedited results and drop its edits')
    undo.add_argument('results', help='<results_dir>/<video>.txt')
    listing = commands.add_parser('list', help='print the edit log of a results folder')
    listing.add_argument('results_dir')
    return parser.parse_args(argv)


def print_edits(edits: list, title: str) -> None:
    """The edits as a table (rich)."""
    from rich.console import Console
    from rich.table import Table
    table = Table(title=title)
    for header in ('#', 'video', 'edit', 'anchors (id@frame)', 'boxes moved'):
        table.add_column(header, justify='right' if header in ('#', 'boxes moved') else 'left')
    for k, edit in enumerate(edits, start=1):
        anchors = ', '.join(f'{a.id}@{a.frame}' for a in edit.anchors)
        table.add_row(str(k), edit.video, edit.describe(), anchors, str(edit.moved))
    Console().print(table)


def main(argv: list[str] | None = None) -> dict:
    from vastmat.apis.identity_edits import (edit_results_file, log_path, read_edit_log, replay_log,
                                             undo_results_file)
    args = parse_args(argv)
    edit_of = dict(swap=lambda: ((args.a, args.b), (args.from_frame, args.to_frame)),
                   merge=lambda: ((args.keep, args.absorb), ()),
                   split=lambda: ((args.id, args.new_id), (args.at_frame, )))
    if args.command in edit_of:
        ids, frames = edit_of[args.command]()
        edit, changes = edit_results_file(args.results, args.command, ids, frames)
        moves = ', '.join(f'{old} -> {new}: {n}' for (old, new), n in changes.items())
        print(f'{edit.video}: {edit.describe()}: {edit.moved} box(es) changed id ({moves})')
        return dict(edit=edit, changes=changes)
    if args.command == 'replay':
        edits = replay_log(args.log, args.results_dir)
        for edit in edits:
            print(f'{edit.video}: {edit.describe()}: {edit.moved} box(es) changed id')
        print(f'{len(edits)} edit(s) of {args.log} replayed onto {args.results_dir} ({log_path(args.results_dir)})')
        return dict(edits=edits)
    if args.command == 'undo':
        dropped = undo_results_file(args.results)
        print(f'{args.results}: unedited results restored, {dropped} edit(s) dropped from the log')
        return dict(dropped=dropped)
    if not osp.isdir(args.results_dir):
        raise FileNotFoundError(f'{args.results_dir}: no such results folder')
    edits = read_edit_log(log_path(args.results_dir))
    print_edits(edits, f'identity edits of {args.results_dir}')
    return dict(edits=edits)


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
