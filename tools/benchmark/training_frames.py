#!/usr/bin/env python
"""How many labelled frames the detector needs on one's own video (vastmat/benchmarks/training_frames.py).

    python tools/benchmark/training_frames.py [--frames 50 100 200 500] [--iters 600] [--test-frames 601-1100]
        [--seeds 0 1 2] [--work-dir work_dirs/training_frames] [--checkpoint CKPT] [--workers 2]

On the SLEAP fly video (../shared/data/sleap-centered-pair; SLEAP's predicted tracks as pseudo-labels): for each
count N, the own-video YOLOX (configs/yolox/yolox_tiny_1xb8-600it_own-video.py) trains --iters iterations on frames
1..N, is tested on --test-frames (COCO AP, AP50), and ByteTrack tracks its boxes, unlinked and linked with the
GlobalLinker at 2 animals; each count is trained once per seed of --seeds (the table shows the mean and the range).
Points run in --workers processes of one thread each. Prints the table and saves
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
    parser.add_argument('--seeds', nargs='+', type=int, default=[0], help='training seeds (0: the config\'s)')
    parser.add_argument('--checkpoint', help='start every training from these weights (default: from scratch)')
    parser.add_argument('--workers', type=int, default=2, help='points trained at once, one thread each')
    return parser.parse_args(argv)


def _point(job: tuple) -> dict:
    import torch
    torch.set_num_threads(1)
    from vastmat.benchmarks.training_frames import frames_point
    from vastmat.engine.cli import filter_known_warnings
    filter_known_warnings()
    count, seed, work_dir, options = job
    return frames_point(count, work_dir, seed=seed, **options)


def _cell(values: list[float], scale: float = 100.0, digits: int = 1) -> str:
    """The mean of ``values`` and, for several, their range."""
    values = [scale * v for v in values]
    mean = sum(values) / len(values)
    if len(values) == 1:
        return f'{mean:.{digits}f}'
    return f'{mean:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})'


def grouped(rows: list[dict]) -> dict[int, list[dict]]:
    groups: dict[int, list[dict]] = {}
    for row in rows:
        groups.setdefault(row['train_frames'], []).append(row)
    return groups


def print_table(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table
    truth = result['truth']
    table = Table(title=f'fly video, tested on frames {result["test_frames"]} ({truth["identities"]} SLEAP tracks, '
                        f'{truth["boxes"]} boxes); {result["machine"]}')
    for header in ('train frames', 'seeds', 'AP', 'AP50', 'HOTA', 'IDF1', 'IDSW', 'ids', 'HOTA linked', 'IDF1 linked',
                   'IDSW linked', 'ids linked', 'train s'):
        table.add_column(header, justify='right')
    for count, rows in grouped(result['rows']).items():
        cells = [str(count), str(len(rows)), _cell([r['AP'] for r in rows]), _cell([r['AP50'] for r in rows])]
        for key in ('bytetrack', 'linked'):
            cells += [_cell([r[key]['HOTA'] for r in rows]), _cell([r[key]['IDF1'] for r in rows]),
                      _cell([r[key]['IDSW'] for r in rows], 1, 0), _cell([r[key]['identities'] for r in rows], 1, 0)]
        table.add_row(*cells, _cell([r['train_seconds'] for r in rows], 1, 0))
    Console(width=200).print(table)


def plot(result: dict, path: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from vastmat.utils.io import save_figure_atomic
    groups = grouped(result['rows'])
    counts = list(groups)
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for label, marker, value in (('AP50', 'o', lambda r: r['AP50']), ('AP (IoU 0.5:0.95)', 'D', lambda r: r['AP']),
                                 ('HOTA, ByteTrack', 's', lambda r: r['bytetrack']['HOTA']),
                                 ('HOTA, ByteTrack + linking (N=2)', '^', lambda r: r['linked']['HOTA'])):
        values = [[100 * value(r) for r in groups[c]] for c in counts]
        means = [sum(v) / len(v) for v in values]
        spread = [[m - min(v) for m, v in zip(means, values)], [max(v) - m for m, v in zip(means, values)]]
        ax.errorbar(counts, means, yerr=spread, marker=marker, capsize=3, label=label)
    ax.set_xscale('log')
    ax.minorticks_off()
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

    from vastmat.benchmarks.training_frames import FLY_LABELS, import_point, truth_summary
    from vastmat.datasets.importers import parse_frame_range
    from vastmat.utils.errors import UserInputError
    from vastmat.utils.io import write_json_atomic
    args = parse_args(argv)
    if not osp.isfile(FLY_LABELS):
        raise UserInputError(f'{FLY_LABELS}: the fly video\'s labels are not here (../shared/data)')
    test = parse_frame_range(args.test_frames, '--test-frames')
    options = dict(iters=args.iters, checkpoint=args.checkpoint, test_first=test.first, test_last=test.last)
    for count in args.frames:  # each count's data once, before its seeds run in parallel
        import_point(count, args.work_dir, test_first=test.first, test_last=test.last)
    jobs = [(count, seed, args.work_dir, options) for count in args.frames for seed in args.seeds]
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
