#!/usr/bin/env python
"""Association measured apart from detection: each tracker's own output boxes scored with its own identities, with
ByteTrack's (the boxes as its detections, track_thresh 0.3) and with truth identities (each box the id of the
ground-truth box it overlaps at IoU >= 0.5, one to one per frame; the rest dropped).

    python tools/analysis/association_split.py [--data-root data/demo] [--work-dir work_dirs/zoo_benchmark]
        [--trackers NAME ...] [--results NAME=RESULTS_DIR ...] [--videos V ...] [--out FILE.json]

Without ``--results`` it reads the zoo's tests (``make demo``) of every joint and end-to-end tracker (FairMOT,
QDTrack, TransTrack, MOTIP, TCEI) on the Protocol 1 test videos, at the last checkpoint, with its own association
(trained and tested now where the zoo has not run). ``--results NAME=DIR`` scores any results folder
(``<video>.txt``). Beside the three ways, the identity continuation of the own results: the share of animals found
in two consecutive frames that keep their identity.

A second table measures the models' association inputs at the ground-truth boxes of the same videos (zoo runs only,
``--no-inputs`` leaves it out; ``vastmat/benchmarks/association_inputs.py``): FairMOT's and QDTrack's embedding
retrieval (rank-1 against the previous frame and against the video), TransTrack's track boxes (IoU with the animal
in the next frame, beside the previous box's) and MOTIP's ID decoder accuracy on ground-truth trajectories (TCEI runs
MOTIP's checkpoint).

Prints the tables, saves them as JSON (default ``WORK_DIR/association_split.json``); the runs lie under
``WORK_DIR/association_split/<tracker>/``.
"""
from __future__ import annotations

import argparse
import os.path as osp
from typing import Any

from vastmat.experiments.zoo_benchmark import DEMO_ROOT
from vastmat.utils.threads import default_threads


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from vastmat.benchmarks.association_split import BYTETRACK_THRESH
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', default=DEMO_ROOT, help=f'VastMAT root (default {DEMO_ROOT})')
    parser.add_argument('--work-dir', default='work_dirs/zoo_benchmark', help="the zoo's work dir (reused)")
    parser.add_argument('--trackers', nargs='+', metavar='NAME', help='only these zoo trackers (default: all)')
    parser.add_argument('--results', nargs='+', metavar='NAME=DIR', help='results folders to score instead')
    parser.add_argument('--videos', nargs='+', help='videos (default: the Protocol 1 test videos)')
    parser.add_argument('--track-thresh', type=float, default=BYTETRACK_THRESH,
                        help=f"ByteTrack's track_thresh on the boxes (default {BYTETRACK_THRESH})")
    parser.add_argument('--no-inputs', action='store_true', help="leave out the models' association inputs")
    parser.add_argument('--threads', type=int, default=default_threads(), help='torch CPU threads')
    parser.add_argument('--out', help='JSON output (default WORK_DIR/association_split.json)')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    from rich.table import Table

    from vastmat.experiments.zoo_report import make_console

    from vastmat.apis import video_list
    from vastmat.benchmarks.association_inputs import continuation_share, zoo_association_inputs
    from vastmat.benchmarks.association_split import association_split, zoo_results_dirs
    from vastmat.experiments.zoo import select_members
    from vastmat.experiments.zoo_context import ZooContext
    from vastmat.utils.errors import UserInputError
    from vastmat.utils.io import write_json_atomic
    from vastmat.utils.threads import torch_threads
    args = parse_args(argv)
    console = make_console()
    protocol = 'protocol1'
    videos = video_list(args.data_root, f'{protocol}/test', args.videos)
    if args.results:
        folders = {}
        for item in args.results:
            name, sep, folder = item.partition('=')
            if not sep or not name:
                raise UserInputError(f'--results {item}: expected NAME=RESULTS_DIR')
            if not osp.isdir(folder):
                raise FileNotFoundError(f'{folder}: no such results folder')
            folders[name] = folder
    else:
        ctx = ZooContext(args.data_root, protocol, videos, osp.join(args.work_dir, protocol), log=console.print)
        with torch_threads(args.threads):
            folders = zoo_results_dirs(ctx, select_members(args.trackers))
    table = Table(title='Association apart from detection: the same boxes with three kinds of identities')
    headers = ('tracker', 'own HOTA', 'own AssA', 'ByteTrack HOTA', 'ByteTrack AssA', 'truth HOTA', 'truth AssA',
               'DetA (truth)', 'own / truth AssA', 'identity kept')
    for header in headers:
        table.add_column(header, justify='left' if header == 'tracker' else 'right')
    out = {}
    for name, folder in folders.items():
        ways = association_split(args.data_root, folder, videos, osp.join(args.work_dir, 'association_split', name),
                                 track_thresh=args.track_thresh)
        continuation = continuation_share(args.data_root, folder, videos)
        out[name] = dict(results=folder, **ways, **continuation)
        scores = [f'{100 * ways[way][key]:.1f}' for way in ('own', 'bytetrack', 'truth') for key in ('HOTA', 'AssA')]
        share = ways['own']['AssA'] / max(ways['truth']['AssA'], 1e-9)
        table.add_row(name, *scores, f'{100 * ways["truth"]["DetA"]:.1f}', f'{share:.2f}',
                      f'{100 * continuation["continuation"]:.1f} % of {continuation["continuing"]}')
    console.print(table)
    if not args.results and not args.no_inputs:
        with torch_threads(args.threads):
            inputs = zoo_association_inputs(ctx, select_members(args.trackers))
        console.print(inputs_table(inputs, videos))
        for name, measures in inputs.items():
            out.setdefault(name, {})['inputs'] = measures
    path = args.out or osp.join(args.work_dir, 'association_split.json')
    write_json_atomic(out, path)
    console.print(f'saved {path}')
    return out


def inputs_table(inputs: dict[str, dict], videos: list[str]) -> Any:
    """The models' association inputs as a rich table, one row per model with its measure in words."""
    from rich.table import Table
    table = Table(title=f'Association inputs at the ground-truth boxes of {", ".join(videos)}')
    for header in ('tracker', 'input', 'measure'):
        table.add_column(header)
    for name, m in inputs.items():
        if 'rank1_previous' in m:
            row = ('embedding', f'rank-1 {100 * m["rank1_previous"]:.1f} against the previous frame '
                                f'({m["queries_previous"]} boxes), {100 * m["rank1_video"]:.1f} against the video')
        elif 'track_iou' in m:
            row = ('track boxes', f'IoU {100 * m["track_iou"]:.1f} with the next frame\'s truth, '
                                  f'{100 * m["track_hit"]:.1f} % at 0.5 ({m["followed"]} followed); previous box '
                                  f'{100 * m["still_iou"]:.1f}, {100 * m["still_hit"]:.1f} %')
        else:
            row = ('ID decoder', f'accuracy {100 * m["id_accuracy"]:.1f} on {m["tokens"]} tokens (known animals '
                                 f'{100 * m["known_accuracy"]:.1f}, newborns {100 * m["newborn_accuracy"]:.1f})')
        table.add_row(name, *row)
    return table


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
