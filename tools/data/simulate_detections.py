#!/usr/bin/env python
"""Simulate detections from ground truth, one det.txt per video (a stand-in for cached detector output).

    python tools/data/simulate_detections.py --data-root DIR --out OUT [--split protocol2/test] [--stride 3]
        [--seed 0] [--jitter 0.05] [--miss-rate 0.05] ...

Writes OUT/<video>/det/det.txt and, so that OUT is a MOTChallenge split folder trackers and evaluation read as
they are, OUT/<video>/gt/gt.txt and seqinfo.ini at the same stride.
"""
import argparse
import dataclasses

from tqdm import tqdm

from vastmat.datasets.detection_simulator import SimulationConfig, simulate_video_folder
from vastmat.datasets.sequences import parse_split_name, select_videos


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
    total = sum(simulate_video_folder(args.data_root, name, args.out, args.stride, args.seed, cfg)
                for name in tqdm(names, desc='simulating detections'))
    print(f'{total} detections for {len(names)} videos written to {args.out} (stride {args.stride}, '
          f'seed {args.seed})')


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
