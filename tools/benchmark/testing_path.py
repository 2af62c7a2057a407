#!/usr/bin/env python
"""Benchmark: where the wall time of one ``tools/test.py`` run on cached detections goes, beside the tracker's own
time on the same detections (the association benchmark's measure).

    python tools/benchmark/testing_path.py [CONFIG] --data-root DIR --det-root DIR [--workers N] [--repeats R]
        [--work-dir W] [--out FILE.json]

CONFIG defaults to configs/bytetrack/bytetrack_cached-dets.py. The run is ``tools/test.py CONFIG --data-root DIR
--det-root DIR --work-dir W [--workers N]``'s steps in this process (vastmat.apis.run_tracking_test), its wall time
split into:

* start-up: process start to the test loop's first dataset item (interpreter, imports, config, runner, dataset);
* data: the dataset items (reading each video's detection files, building its tracker inputs);
* tracking: the tracker's ``update`` calls;
* writing: the results files (and the ground truth of the tracked frames of a strided dataset);
* scoring: the metric's ``evaluate``, i.e. waiting for the videos still being scored after the last one was tracked,
  and combining (the videos scored in worker processes alongside the tracking cost no wall time here);
* other: the rest of the test loop (runner and hooks, collating, the model's per-frame bookkeeping, the metric's),
  the metrics table and metrics.json.

Beside it: the same tracker on the same detections with nothing else (``tracker.update`` over prepared frames, the
best of ``--repeats`` passes, as tools/benchmark/association_speed.py times it). Memory: the peak resident set of
this process at the first dataset item (imports and runner: the floor of any run) and at the end, and of the
scoring processes. Goals on ../shared/data/AnimalTrack-10fps-sim, 2 cores: under 20 s wall in all, and
data + writing + other under 1 ms per frame.

    python tools/benchmark/testing_path.py --data-root ../shared/data/AnimalTrack-10fps-sim/gt \\
        --det-root ../shared/data/AnimalTrack-10fps-sim/dets --out work_dirs/testing_path.json

The logic is vastmat.benchmarks.testing_path.
"""
from __future__ import annotations

import argparse

from vastmat.benchmarks.testing_path import DEFAULT_CONFIG


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('config', nargs='?', default=DEFAULT_CONFIG)
    parser.add_argument('--data-root', required=True)
    parser.add_argument('--det-root', required=True)
    parser.add_argument('--workers', type=int, help='tools/test.py --workers (default: the config\'s)')
    parser.add_argument('--repeats', type=int, default=3, help='passes of the tracker-alone measure (best counts)')
    parser.add_argument('--work-dir', help='tools/test.py --work-dir (default: a temporary folder)')
    parser.add_argument('--out', help='JSON file for the split')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    from vastmat.benchmarks.testing_path import print_split, split_test_run
    from vastmat.utils.io import write_json_atomic
    args = parse_args(argv)
    result = split_test_run(args.config, args.data_root, args.det_root, args.workers, args.repeats, args.work_dir)
    print_split(result)
    if args.out:
        write_json_atomic(result, args.out)
    return result


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
