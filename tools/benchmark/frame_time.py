#!/usr/bin/env python
"""Benchmark: a tracker's time per frame against the number of tracks it carries into the frame (tracked and lost:
those its motion model predicts), on cached detections, one CPU thread by default.

    python tools/benchmark/frame_time.py --tracker diffmot --d2mp-checkpoint CKPT --data-root DIR [--det-root DIR]
        [--videos N] [--repeats R] [--bin-width 10] [--threads 1] [--out FILE.json]

``--tracker`` is a tracker of tools/benchmark/association_speed.py (bytetrack, fairmot, tracktrack, diffmot, ...;
with its benchmark settings and random appearance features where it takes them). DiffMOT needs a trained D2MP
(``--d2mp-checkpoint``; configs/d2mp/): its time depends on how many tracks the weights keep alive. The issue-30 aim
for DiffMOT is 60 frames/s on one CPU thread on AnimalTrack-10fps-sim:

    python tools/benchmark/frame_time.py --tracker diffmot --d2mp-checkpoint work_dirs/d2mp/epoch_800.pth \\
        --data-root ../shared/data/AnimalTrack-10fps-sim/gt --det-root ../shared/data/AnimalTrack-10fps-sim/dets

``--device cuda`` runs D2MP on the GPU (the aim there: 30 frames/s or more with the full-size D2MP).

The logic is vastmat.benchmarks.frame_time.
"""
from __future__ import annotations

import argparse

from vastmat.benchmarks.association_speed import add_video_arguments


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_video_arguments(parser)
    parser.add_argument('--tracker', required=True, help='a tracker of association_speed.py (e.g. diffmot)')
    parser.add_argument('--d2mp-checkpoint', help="DiffMOT's trained D2MP")
    parser.add_argument('--feature-dim', type=int, default=128, help='random appearance features per detection')
    parser.add_argument('--bin-width', type=int, default=10, help='track counts per row of the table')
    parser.add_argument('--threads', type=int, default=1, help='torch CPU threads (D2MP)')
    parser.add_argument('--device', default='cpu', help="where the tracker's learned parts run (D2MP): cpu, cuda")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    import torch
    from rich.console import Console

    from vastmat.benchmarks.association_speed import (check_trackers, features_prepare, load_videos, tracker_config,
                                                       vastmat_prepare)
    from vastmat.benchmarks.frame_time import frame_time_results, frame_time_table, frame_times
    from vastmat.registry import MODELS
    from vastmat.utils.io import write_json_atomic
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    type_name, cls = check_trackers([args.tracker], args.d2mp_checkpoint)[args.tracker]
    tracker = MODELS.build(tracker_config(type_name, cls, 'iou', args.d2mp_checkpoint))
    if args.device != 'cpu':
        if args.device.startswith('cuda') and not torch.cuda.is_available():
            raise ValueError(f'--device {args.device}: torch sees no GPU')
        tracker.to(args.device)  # its modules (D2MP); the per-frame bookkeeping stays on the CPU
    prepare = features_prepare(args.feature_dim) if cls.speed_features else vastmat_prepare
    videos = [prepare(v) for v in load_videos(args.data_root, args.det_root, args.videos)]
    results = frame_time_results(frame_times(tracker, videos, args.repeats), args.bin_width)
    results.update(tracker=type_name, threads=args.threads, checkpoint=args.d2mp_checkpoint, device=args.device)
    Console(width=120).print(frame_time_table(results, f'{type_name} ({args.threads} thread, {args.device})'))
    if args.out:
        write_json_atomic(results, args.out)
    return results


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
