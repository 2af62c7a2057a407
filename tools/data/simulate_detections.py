#!/usr/bin/env python
"""Simulate detections from ground truth, one det.txt per video (a stand-in for cached detector output).

    python tools/data/simulate_detections.py --data-root DIR --out OUT [--split protocol2/test] [--stride 3]
        [--seed 0] [--jitter 0.05] [--miss-rate 0.05] ...

Writes OUT/<video>/det/det.txt and, so that OUT is a MOTChallenge split folder trackers and evaluation read as
they are, OUT/<video>/gt/gt.txt and seqinfo.ini at the same stride.
"""
import argparse
import dataclasses
import os.path as osp
import zlib

import numpy as np
from tqdm import tqdm

from vastmat.datasets.detection_simulator import SimulationConfig, simulate_detections
from vastmat.datasets.formats import write_detections, write_gt, write_seqinfo
from vastmat.datasets.sequences import load_sequence, parse_split_name, select_videos


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True, help='VastMAT root or MOTChallenge split folder')
    parser.add_argument('--out', required=True)
    parser.add_argument('--split', help='PROTOCOL/SPLIT of a VastMAT root, e.g. protocol2/test (default: all)')
    parser.add_argument('--stride', type=int, default=1, help='keep every K-th frame (3: 30 to 10 FPS)')
    parser.add_argument('--seed', type=int, default=0)
    for field in dataclasses.fields(SimulationConfig):
        if field.type in ('float', float):
            parser.add_argument('--' + field.name.replace('_', '-'), type=float, default=field.default)
    args = parser.parse_args(argv)
    cfg = SimulationConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(SimulationConfig)
                              if hasattr(args, f.name)})
    protocol, split = parse_split_name(args.split)
    names = select_videos(args.data_root, protocol, split)
    total = 0
    for name in tqdm(names, desc='simulating detections'):
        sequence = load_sequence(args.data_root, name, stride=args.stride)
        if sequence.gt is None:
            raise FileNotFoundError(f'{sequence.directory}/gt/gt.txt: missing; detections are simulated from it')
        # one generator per video, seeded by the seed and the video name: a video's detections do not depend on
        # which other videos are simulated with it
        rng = np.random.default_rng([args.seed, zlib.crc32(name.encode())])
        size = (sequence.info.get('imWidth') or 1920, sequence.info.get('imHeight') or 1080)
        dets = simulate_detections(sequence.gt, size, sequence.length, rng, cfg)
        write_detections(osp.join(args.out, name, 'det', 'det.txt'), dets)
        write_gt(osp.join(args.out, name, 'gt', 'gt.txt'), sequence.gt)
        write_seqinfo(osp.join(args.out, name, 'seqinfo.ini'), dict(sequence.info, imDir=osp.relpath(
            osp.join(sequence.directory, sequence.info.get('imDir', 'img1')), osp.join(args.out, name))))
        total += len(dets)
    print(f'{total} detections for {len(names)} videos written to {args.out} (stride {args.stride}, '
          f'seed {args.seed})')


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
