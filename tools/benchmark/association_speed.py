#!/usr/bin/env python
"""Benchmark: frames per second of the association alone (tracker updates on cached detections), per tracker and
matcher, side by side with mmdet's ByteTracker on the same detections (and BoxMOT's ByteTrack when installed).

    python tools/benchmark/association_speed.py --data-root DIR [--det-root DIR] [--videos N] [--repeats R]
        [--matchers iou diou cda_fixed cda_adaptive] [--trackers bytetrack tracktrack [diffmot] [fairmot]]
        [--d2mp-checkpoint CKPT] [--feature-dim 128] [--peer-python PY [--official-bytetrack DIR] [--official-fairmot DIR]
        [--official-tracktrack DIR]]
        [--out FILE.json]

TrackTrack, DiffMOT and FairMOT (JDETracker) get ``--feature-dim`` random unit appearance features per detection
(their appearance terms cost a matrix product; 0: none), TrackTrack runs without the NMS-0.95 set and camera
motion. DiffMOT's D2MP
runs on the CPU with the current torch threads; its time grows with the number of tracks it predicts (tracked and
lost ones), which depends on the weights: give a trained one with ``--d2mp-checkpoint`` (untrained weights scatter
the predictions, tracks get lost and the pool grows, so DiffMOT is timed only with a trained D2MP).

``--data-root`` is a MOTChallenge split folder (``<video>/seqinfo.ini``) or a VastMAT root; detections come from
``<video>/det/det.txt`` or ``--det-root``. AnimalTrack train at 10 FPS with simulated detections:

    python tools/data/simulate_detections.py --data-root ../shared/data/AnimalTrack/train --out /tmp/at10 --stride 3
    python tools/benchmark/association_speed.py --data-root /tmp/at10

Other projects' trackers run in their own Python environment (a scratch one, outside this project), timed there in
the same run by vastmat/benchmarks/peer_trackers.py: ``--peer-python`` names its python, which times Roboflow
``trackers``' ByteTrackTracker and SORTTracker where installed there, and the official ByteTrack code with
``--official-bytetrack``, a checkout of ifzhang/ByteTrack (its yolox/tracker needs numpy, scipy, lap, cython_bbox and
opencv-python there, not torch), and the official FairMOT tracker with ``--official-fairmot``, a checkout of
ifzhang/FairMOT (its src/lib/tracker run on the same detections and random features, with the one edit of
tests/fixtures/jde_official/README.md: ``update`` takes the decoded detections, the network lines removed), and the
official TrackTrack tracker with ``--official-tracktrack``, a checkout of kamkyu94/TrackTrack (unedited; the same
rows as its NMS-0.95 set and identity camera motion, which it always applies):

    python -m venv /tmp/peer && /tmp/peer/bin/pip install lap cython_bbox scipy opencv-python-headless trackers
    git clone https://github.com/ifzhang/ByteTrack /tmp/ByteTrack
    python tools/benchmark/association_speed.py --data-root ../shared/data/AnimalTrack-10fps-sim/gt \
        --det-root ../shared/data/AnimalTrack-10fps-sim/dets --matchers iou cda_fixed --peer-python /tmp/peer/bin/python \
        --official-bytetrack /tmp/ByteTrack --official-fairmot /tmp/FairMOT --trackers bytetrack fairmot

Every tracker's frames/s is then also given as a multiple of the official ByteTrack's and Roboflow's ByteTrack's,
and BYTETracker's, JDETracker's and TrackTrackTracker's as a multiple of their own official code's.
Only ``tracker.update`` is timed: detections are read and converted (to mmdet's data samples for mmdet) before.
Each tracker runs every video ``--repeats`` times; the best total counts (interleaved, so drift of the machine's
speed affects all alike; the peers' rounds alternate with ours). Goals: BYTETracker >= 5x mmdet's ByteTracker
frames/s; CDA adds <= 5% to the tracking time over IoU. The optimised BYTETracker against the line-by-line port of the official code (its speed
and identical tracks) is a benchmark of its own: ``python tools/benchmark/byte_tracker_reference.py --data-root DIR``.
The logic is vastmat.benchmarks.association_speed.
"""
from __future__ import annotations

import argparse

from vastmat.benchmarks.association_speed import DEFAULT_MATCHERS, DEFAULT_TRACKERS, add_video_arguments


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_video_arguments(parser)
    parser.add_argument('--matchers', nargs='+', default=list(DEFAULT_MATCHERS), help='names of configs/matchers/*.py')
    parser.add_argument('--trackers', nargs='+', default=list(DEFAULT_TRACKERS),
                        help='VastMAT trackers to time per matcher (those declaring speed_options: bytetrack, '
                        'tracktrack, diffmot, fairmot, ...; diffmot needs --d2mp-checkpoint)')
    parser.add_argument('--feature-dim', type=int, default=128,
                        help='random appearance features per detection for TrackTrack, DiffMOT and FairMOT '
                             '(0: none; FairMOT needs them)')
    parser.add_argument('--d2mp-checkpoint', help="DiffMOT's trained D2MP (default: untrained weights)")
    parser.add_argument('--peer-python', help="the python of an environment with other projects' trackers")
    parser.add_argument('--official-bytetrack', help='a checkout of ifzhang/ByteTrack (needs --peer-python)')
    parser.add_argument('--official-fairmot', help='a checkout of ifzhang/FairMOT (needs --peer-python)')
    parser.add_argument('--official-tracktrack', help='a checkout of kamkyu94/TrackTrack (needs --peer-python)')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    from rich.console import Console

    from vastmat.benchmarks.association_speed import association_speed, speed_table
    from vastmat.utils.io import write_json_atomic
    args = parse_args(argv)
    results = association_speed(args.data_root, args.det_root, args.videos, args.repeats, args.matchers,
                                args.trackers, args.feature_dim, args.d2mp_checkpoint, args.peer_python,
                                args.official_bytetrack, args.official_fairmot, args.official_tracktrack)
    Console().print(speed_table(results))
    if args.out:
        write_json_atomic(results, args.out)
    return results


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
