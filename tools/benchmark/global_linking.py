#!/usr/bin/env python
"""What global linking adds, and how fast it is (vastmat/benchmarks/global_linking.py).

    python tools/benchmark/global_linking.py [--data-root ../shared/data/AnimalTrack-10fps-sim]
        [--work-dir work_dirs/global_linking] [--fps 10 5] [--trackers NAME ...] [--videos V ...] [--no-quality]
        [--no-speed] [--frames 10000] [--animals 50] [--repeats 3]

Quality: on the report half of AnimalTrack-10fps-sim (at 10 FPS and at 5 FPS), ByteTrack, TrackTrack and SORT (the
plugin, where installed), official and tuned, without and with their linked preset's GlobalLinker, and the oracle
association: HOTA, DetA, AssA, IDF1, IDSW; the identities per video against the truth's; the best preset, the best
linked one, the share of the gap to the oracle it closes and the video that lost most. Speed: a simulated video of
--frames frames and --animals animals, linked on one core, the seconds against the number of tracklets (a plot).
Prints the tables and saves WORK_DIR/global_linking.json and WORK_DIR/linking_speed.png.
"""
from __future__ import annotations

import argparse
import os.path as osp

AT10 = osp.join('..', 'shared', 'data', 'AnimalTrack-10fps-sim')


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', default=AT10, help=f'AnimalTrack-10fps-sim (default {AT10})')
    parser.add_argument('--work-dir', default='work_dirs/global_linking')
    parser.add_argument('--fps', nargs='+', type=int, default=[10, 5], choices=(10, 5), help='frame rates')
    parser.add_argument('--trackers', nargs='+', choices=('ByteTrack', 'TrackTrack', 'SORT'),
                        help='only these trackers (default: all three)')
    parser.add_argument('--videos', nargs='+', help='only these videos of the report half')
    parser.add_argument('--no-quality', action='store_true', help='leave out the tracking quality')
    parser.add_argument('--no-speed', action='store_true', help='leave out the speed')
    parser.add_argument('--frames', type=int, default=10_000, help='frames of the simulated video (speed)')
    parser.add_argument('--animals', type=int, default=50, help='animals of the simulated video (speed)')
    parser.add_argument('--repeats', type=int, default=3, help='timed runs a size (the best and the spread)')
    return parser.parse_args(argv)


def quality_tables(results: dict) -> list:
    from rich.table import Table

    from vastmat.benchmarks.global_linking import METRICS, gap_closed
    tables = []
    for label, entry in results.items():
        table = Table(title=f'AnimalTrack-10fps-sim at {label}, report half ({len(entry["truth"])} videos)')
        for header in ('tracker', 'variant', *METRICS, 'identities (truth)'):
            table.add_column(header, justify='left' if header in ('tracker', 'variant') else 'right')
        truth = sum(t['identities'] for t in entry['truth'].values())
        table.add_row('oracle', '', *(f'{100 * entry["oracle"][m]:.2f}' if m != 'IDSW' else
                                      str(int(entry['oracle'][m])) for m in METRICS), str(truth))
        for tracker, variants in entry['trackers'].items():
            for variant, row in variants.items():
                table.add_row(tracker, variant, *(f'{100 * row[m]:.2f}' if m != 'IDSW' else str(int(row[m]))
                                                  for m in METRICS), f'{sum(row["identities"].values())} ({truth})')
        tables.append(table)
        if entry['trackers']:
            gap = gap_closed(entry)
            entry['gap'] = gap
            tables.append(f'{label}: best preset {gap["best"]} {100 * gap["best_HOTA"]:.2f}, best linked '
                          f'{gap["best_linked"]} {100 * gap["best_linked_HOTA"]:.2f}, oracle '
                          f'{100 * gap["oracle_HOTA"]:.2f}: {100 * gap["gap_closed"]:.1f} % of the gap closed; '
                          f'worst video {gap["worst_video"]} ({100 * gap["worst_change"]:+.2f} HOTA); videos losing '
                          f'more than 1 HOTA: {", ".join(gap["videos_losing_over_1"]) or "none"}')
    return tables


def speed_table(rows: list[dict]):
    from rich.table import Table
    table = Table(title='Linking a simulated video on one core (best of the runs; the slowest beside it)')
    for header in ('frames', 'animals', 'boxes', 'tracklets', 'solver', 'count', 'seconds', 'slowest', 'identities'):
        table.add_column(header, justify='right')
    for r in rows:
        table.add_row(str(r['frames']), str(r['animals']), f'{r["rows"]:,}', f'{r["tracklets"]:,}', r['solver'],
                      str(r['num_animals'] or '-'), f'{r["seconds"]:.2f}', f'{r["seconds_max"]:.2f}',
                      str(r['identities']))
    return table


def plot_speed(rows: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from vastmat.utils.io import save_figure_atomic
    fig, ax = plt.subplots(figsize=(6, 4))
    for (solver, count), label in ((('highs', None), 'HiGHS'), (('highs', True), 'HiGHS, num_animals'),
                                   (('networkx', None), 'networkx')):
        points = [(r['tracklets'], r['seconds']) for r in rows
                  if r['solver'] == solver and (r['num_animals'] is not None) == bool(count)]
        if points:
            ax.plot(*zip(*sorted(points)), marker='o', label=label)
    ax.set_xlabel('tracklets in the video')
    ax.set_ylabel('seconds (one core)')
    ax.set_title('GlobalLinker on a simulated video')
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    save_figure_atomic(fig, path)


def main(argv: list[str] | None = None) -> dict:
    from rich.console import Console

    from vastmat.benchmarks.global_linking import TRACKERS, quality_benchmark, speed_benchmark
    from vastmat.utils.io import write_json_atomic
    from vastmat.utils.provenance import code_commit, now_iso
    args = parse_args(argv)
    console = Console(width=None if Console().is_terminal else 160)
    out = dict(provenance=dict(commit=code_commit(), date=now_iso()))
    if not args.no_quality:
        if not osp.isdir(osp.join(args.data_root, 'gt')):
            raise FileNotFoundError(f'{args.data_root}: no gt/ folder (../shared/data/AnimalTrack-10fps-sim)')
        out['quality'] = quality_benchmark(osp.join(args.data_root, 'gt'), osp.join(args.data_root, 'dets'),
                                           args.work_dir, tuple(10 // fps for fps in args.fps),
                                           tuple(t for t in TRACKERS if t.name in (args.trackers or [t.name])),
                                           args.videos, log=console.print)
        for table in quality_tables(out['quality']):
            console.print(table)
    if not args.no_speed:
        out['speed'] = speed_benchmark(args.frames, args.animals, repeats=args.repeats, log=console.print)
        console.print(speed_table(out['speed']))
        plot_speed(out['speed'], osp.join(args.work_dir, 'linking_speed.png'))
    path = osp.join(args.work_dir, 'global_linking.json')
    write_json_atomic(out, path)
    console.print(f'saved {path}')
    return out


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
