#!/usr/bin/env python
"""Candidate-pair discrimination of IoU and CenterSim by normalized displacement (paper E.4, Table 24).

    python tools/analysis/candidate_pairs.py --data-root DIR [--split protocol2/test] [--stride 3]
        [--det-root DETS] --out FILE.json

Candidates are each frame's ground-truth boxes, or the detections of --det-root (<video>/det/det.txt at the same
frame numbering, e.g. from tools/data/simulate_detections.py).
"""
import argparse
import os.path as osp

import numpy as np
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from vastmat.datasets.formats import read_detections
from vastmat.datasets.sequences import load_sequence, parse_split_name, select_videos
from vastmat.evaluation.association_diagnostics import candidate_margins, discrimination_table
from vastmat.structures.bbox import ltwh_to_xyxy
from vastmat.utils.io import write_json_atomic


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True)
    parser.add_argument('--split', help='PROTOCOL/SPLIT of a VastMAT root')
    parser.add_argument('--stride', type=int, default=1, help='keep every K-th frame (3: 30 to 10 FPS)')
    parser.add_argument('--det-root', help='folder of <video>/det/det.txt to use as candidates')
    parser.add_argument('--out', required=True)
    args = parser.parse_args(argv)
    protocol, split = parse_split_name(args.split)
    margins = []
    for name in tqdm(select_videos(args.data_root, protocol, split), desc='association events'):
        sequence = load_sequence(args.data_root, name, stride=args.stride)
        if sequence.gt is None:
            raise FileNotFoundError(f'{sequence.directory}/gt/gt.txt: missing')
        candidates = None
        if args.det_root:
            dets = read_detections(osp.join(args.det_root, name, 'det', 'det.txt'), seq_length=sequence.length)
            xyxy = ltwh_to_xyxy(dets.boxes)
            candidates = {int(f): xyxy[dets.frames == f] for f in np.unique(dets.frames)}
        margins.append(candidate_margins(sequence.gt, candidates))
    table_data = discrimination_table(np.concatenate(margins) if margins else np.zeros((0, 3)))
    table = Table(title=f'candidate-pair discrimination ({table_data["events"]:,} events)')
    for column in ('normalized displacement', 'events', 'only CenterSim %', 'only IoU %', 'both %', 'neither %'):
        table.add_column(column, justify='right')
    for row in table_data['bins']:
        table.add_row(row['range'], f'{row["events"]:,}', *(f'{100 * row[k]:.2f}' for k in
                                                            ('only_centersim', 'only_iou', 'both', 'neither')))
    Console().print(table)
    table_data.update(data_root=args.data_root, split=args.split, stride=args.stride, candidates=args.det_root
                      or 'ground truth')
    write_json_atomic(table_data, args.out)
    print(f'candidate pairs: {args.out}')
    return table_data


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
