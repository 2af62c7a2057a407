#!/usr/bin/env python
"""How many labelled frames the detector needs on one's own video (vastmat/benchmarks/training_frames.py).

    python tools/benchmark/training_frames.py [--frames 50 100 200 500] [--iters 600] [--test-frames 601-1100]
        [--work-dir work_dirs/training_frames] [--checkpoint CKPT] [--workers 2]

On the SLEAP fly video (../shared/data/sleap-centered-pair; SLEAP's predicted tracks as pseudo-labels): for each
count N, the own-video YOLOX (configs/yolox/yolox_tiny_1xb8-600it_own-video.py) trains --iters iterations on frames
1..N, is tested on --test-frames (COCO AP, AP50), and ByteTrack tracks its boxes, unlinked and linked with the
GlobalLinker at 2 animals. Points run in --workers processes of one thread each. Prints the table and saves
WORK_DIR/training_frames.json and WORK_DIR/training_frames.png.
"""
from __future__ import annotations

import argparse
import os.path as osp


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--frames', nargs='+', type=int, default=[50, 100, 200, 500], help='training frame counts')
    parser.add_argument('--iters', type=int, default=None, help='training iterations (default: the config\'s, 600)')
    parser.add_argument('--test-frames', default='601-1100', metavar='FIRST-LAST', help='the frames tested on')
    parser.add_argument('--work-dir', default='work_dirs/training_frames')
    parser.add_argument('--checkpoint', help='start every training from these weights (default: from scratch)')
    parser.add_argument('--workers', type=int, default=2, help='points trained at once, one thread each')
    return parser.parse_args(argv)


def _point(job: tuple) -> dict:
    import torch
    torch.set_num_threads(1)
    from vastmat.benchmarks.training_frames import frames_point
    from vastmat.engine.cli import filter_known_warnings
    filter_known_warnings()
    count, work_dir, options = job
    return frames_point(count, work_dir, **options)


def print_table(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table
    truth = result['truth']
    table = Table(title=f'{result["test_frames"]} test frames, {truth["identities"]} SLEAP tracks, '
                        f'{truth["boxes"]} boxes ({result["machine"]})')
    for header in ('train frames', 'iters', 'train s', 'AP', 'AP50', 'HOTA', 'IDF1', 'IDSW', 'ids',
                   'HOTA linked', 'IDF1 linked', 'IDSW linked', 'ids linked'):
        table.add_column(header, justify='right')
    for row in result['rows']:
        plain, linked = row['bytetrack'], row['linked']
        table.add_row(str(row['train_frames']), str(row['iters']), f'{row["train_seconds"]:.0f}',
                      f'{100 * row["AP"]:.1f}', f'{100 * row["AP50"]:.1f}',
                      *(f'{100 * s[m]:.1f}' if m != 'IDSW' else str(int(s[m])) for s in (plain, )
                        for m in ('HOTA', 'IDF1', 'IDSW')), str(plain['identities']),
                      *(f'{100 * s[m]:.1f}' if m != 'IDSW' else str(int(s[m])) for s in (linked, )
                        for m in ('HOTA', 'IDF1', 'IDSW')), str(linked['identities']))
    Console().print(table)


def plot(result: dict, path: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from vastmat.utils.io import save_figure_atomic
    rows = result['rows']
    counts = [r['train_frames'] for r in rows]
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(counts, [100 * r['AP50'] for r in rows], 'o-', label='AP50')
    ax.plot(counts, [100 * r['bytetrack']['HOTA'] for r in rows], 's-', label='HOTA, ByteTrack')
    ax.plot(counts, [100 * r['linked']['HOTA'] for r in rows], '^-', label='HOTA, ByteTrack + linking (N=2)')
    ax.set_xscale('log')
    ax.set_xticks(counts, [str(c) for c in counts])
    ax.set_xlabel('labelled training frames')
    ax.set_ylabel('%')
    ax.set_ylim(0, 100)
    ax.set_title('fly video, tested on frames the detector never saw', fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure_atomic(fig, path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict:
    import multiprocessing
    import platform

    from vastmat.benchmarks.training_frames import FLY_LABELS, truth_summary
    from vastmat.datasets.importers import parse_frame_range
    from vastmat.utils.errors import UserInputError
    from vastmat.utils.io import write_json_atomic
    args = parse_args(argv)
    if not osp.isfile(FLY_LABELS):
        raise UserInputError(f'{FLY_LABELS}: the fly video\'s labels are not here (../shared/data)')
    test = parse_frame_range(args.test_frames, '--test-frames')
    options = dict(iters=args.iters, checkpoint=args.checkpoint, test_first=test.first, test_last=test.last)
    jobs = [(count, args.work_dir, options) for count in args.frames]
    if args.workers > 1 and len(jobs) > 1:
        with multiprocessing.get_context('spawn').Pool(min(args.workers, len(jobs))) as pool:
            rows = pool.map(_point, jobs, chunksize=1)
    else:
        rows = [_point(job) for job in jobs]
    result = dict(rows=rows, truth=truth_summary(args.work_dir, args.frames[0]), test_frames=str(test),
                  machine=f'{platform.machine()}, {multiprocessing.cpu_count()} cores, {args.workers} worker(s)')
    print_table(result)
    write_json_atomic(result, osp.join(args.work_dir, 'training_frames.json'))
    plot(result, osp.join(args.work_dir, 'training_frames.png'))
    print(f'saved {osp.join(args.work_dir, "training_frames.json")} and training_frames.png')
    return result


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
