#!/usr/bin/env python
"""The HTML report at the benchmark's size: 315 test videos x 8 trackers (one protocol of VastMAT), built from a real
zoo run and timed: writing the page, its size, and the time until headless Chromium has loaded it and run its
scripts. Goals: under 20 MB, written in under 30 s, interactive in under 2 s.

    python tools/benchmark/report_scale.py [--source work_dirs/zoo_benchmark] [--videos 315] [--trackers 8]
        [--work-dir work_dirs/report_scale]

The large run is made from the source zoo run (``make demo``'s): video k is a link to one of its test videos, and
tracker t's results and per-video metrics on it are those of one of its trackers on that video (the real files and
TrackEval numbers, so that the heat map, the analyses and the clips are drawn as for a real run of that size).
Prints a table and saves ``report_scale.json`` in the work dir.
"""
from __future__ import annotations

import argparse
import json
import os
import os.path as osp
import shutil


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--source', default='work_dirs/zoo_benchmark', help='a zoo work dir (make demo)')
    parser.add_argument('--videos', type=int, default=315)
    parser.add_argument('--trackers', type=int, default=8)
    parser.add_argument('--work-dir', default='work_dirs/report_scale')
    return parser.parse_args(argv)


def _link(source: str, target: str) -> None:
    if not osp.lexists(target):
        os.symlink(osp.abspath(source), target)


def build_large_run(source: str, videos: int, trackers: int, work_dir: str) -> str:
    """A zoo work dir of ``videos`` x ``trackers`` made from the real zoo run ``source``; returns its path."""
    from vastmat.datasets.sequences import sequence_root
    from vastmat.utils.io import write_json_atomic
    zoo = json.load(open(osp.join(source, 'zoo.json'), encoding='utf-8'))
    protocol = zoo['settings']['protocols'][0]
    runs = {key: value for key, value in zoo['runs'][protocol].items() if key.endswith('/original')}
    dirs = zoo.get('results_dirs', {}).get(protocol, {})
    real_videos = sorted(v for v in next(iter(runs.values())) if v not in ('COMBINED', 'seconds'))
    data_root = zoo['settings']['data_root']
    root = osp.join(work_dir, 'data')
    shutil.rmtree(work_dir, ignore_errors=True)
    os.makedirs(osp.join(root, 'videos'))
    if osp.isdir(osp.join(data_root, 'meta')):
        _link(osp.join(data_root, 'meta'), osp.join(root, 'meta'))
    names = {f'{real_videos[k % len(real_videos)]}-{k:03d}': real_videos[k % len(real_videos)] for k in range(videos)}
    for name, real in names.items():
        _link(osp.join(sequence_root(data_root), real), osp.join(root, 'videos', name))
    sources = sorted(runs)
    large = osp.join(work_dir, 'zoo')
    large_runs, large_dirs = {}, {}
    for t in range(trackers):
        key = sources[t % len(sources)]
        label = key.split('/')[0] + ('' if t < len(sources) else f'-{t}')
        results = osp.join(large, 'results', label)
        os.makedirs(results)
        per_video = {}
        for k, (name, real) in enumerate(names.items()):
            per_video[name] = runs[sources[(t + k) % len(sources)]][real]  # a real tracker's numbers on that video
            real_file = osp.join(dirs.get(sources[(t + k) % len(sources)], ''), f'{real}.txt')
            if osp.isfile(real_file):
                _link(real_file, osp.join(results, f'{name}.txt'))
        large_runs[f'{label}/original'] = per_video
        large_dirs[f'{label}/original'] = results
    write_json_atomic(dict(settings=dict(data_root=root, protocols=[protocol]), runs={protocol: large_runs},
                           results_dirs={protocol: large_dirs}), osp.join(large, 'zoo.json'))
    return large


def main(argv: list[str] | None = None) -> dict:
    from rich.console import Console
    from rich.table import Table

    from vastmat.experiments.report import write_report
    from vastmat.experiments.report.browser import find_chromium, headless_chromium, interactive_seconds
    from vastmat.utils.io import write_json_atomic
    args = parse_args(argv)
    large = build_large_run(args.source, args.videos, args.trackers, args.work_dir)
    page = write_report([large], osp.join(args.work_dir, 'report.html'), f'{args.videos} videos x {args.trackers}')
    out = dict(videos=args.videos, trackers=args.trackers, megabytes=page['bytes'] / 1e6, write_seconds=page['seconds'])
    if find_chromium() is not None:
        driver = headless_chromium()
        try:
            driver.get('file://' + osp.abspath(page['path']))
            out['interactive_seconds'] = interactive_seconds(driver)
            out['console_errors'] = len([e for e in driver.get_log('browser') if e['level'] == 'SEVERE'])
        finally:
            driver.quit()
    table = Table(title=f'The report at {args.videos} videos x {args.trackers} trackers')
    for column in ('measure', 'value', 'goal'):
        table.add_column(column)
    table.add_row('page size', f'{out["megabytes"]:.1f} MB', '< 20 MB')
    table.add_row('written in', f'{out["write_seconds"]:.1f} s', '< 30 s')
    table.add_row('interactive in (headless Chromium)',
                  f'{out["interactive_seconds"]:.2f} s' if 'interactive_seconds' in out else 'no Chromium', '< 2 s')
    Console().print(table)
    write_json_atomic(out, osp.join(args.work_dir, 'report_scale.json'))
    return out


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
