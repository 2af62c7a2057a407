#!/usr/bin/env python
"""Benchmark: MOTIP's and TCEI's runtime trackers on recorded DETR outputs (the ID decoder and the trackers'
bookkeeping per frame, no detector), beside their official code in the same run, on the CPU.

    python tools/benchmark/runtime_tracker_speed.py --data-root ../shared/data/AnimalTrack-10fps-sim \\
        [--videos N] [--frames N] [--repeats R] [--threads 1] [--out FILE.json] \\
        [--peer-python PY --official-motip MOTIP_CHECKOUT --official-tcei TCEI_CHECKOUT]

The official trackers run under ``--peer-python`` (an environment with torch, torchvision, einops, scipy and yaml;
this project's .venv/bin/python has them) from checkouts of MCG-NJU/MOTIP and 1941Zpf/TCEI outside the project.
Inputs, weights and settings: vastmat.benchmarks.runtime_tracker_speed (its docstring), which holds the logic.
"""
from __future__ import annotations

import argparse


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True, help='a simulated-detection root (gt/ and dets/)')
    parser.add_argument('--videos', type=int, help='the first N videos (name order; default all)')
    parser.add_argument('--frames', type=int, help='the first N frames of each video (default all)')
    parser.add_argument('--repeats', type=int, default=3, help='runs per video; the best counts')
    parser.add_argument('--threads', type=int, default=1, help='torch CPU threads (both sides)')
    parser.add_argument('--peer-python', help='the Python the official code runs under')
    parser.add_argument('--official-motip', help='a checkout of MCG-NJU/MOTIP')
    parser.add_argument('--official-tcei', help='a checkout of 1941Zpf/TCEI')
    parser.add_argument('--out', help='results JSON')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    from rich.console import Console

    from vastmat.benchmarks.runtime_tracker_speed import runtime_tracker_speed, speed_table
    from vastmat.utils.io import write_json_atomic
    args = parse_args(argv)
    results = runtime_tracker_speed(args.data_root, args.videos, args.frames, args.repeats, args.threads,
                                    args.peer_python, args.official_motip, args.official_tcei)
    Console(width=120).print(speed_table(results))
    if args.out:
        write_json_atomic(results, args.out)
    return results


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
