#!/usr/bin/env python
"""Turn a labelled video (SLEAP, DeepLabCut, CVAT or COCO labels) into a VastMAT root: frames, gt.txt, seqinfo.ini.

    python tools/data/import_labels.py LABELS OUT_ROOT [--video VIDEO] [--format FORMAT]
        [--train-frames 1-600] [--test-frames 601-1100] [--name NAME] [--category Fly|312] [--margin PX]
        [--instances all|user|predicted] [--no-tracks] [--fps F] [--overwrite]

LABELS is a SLEAP .slp, a DeepLabCut multi-animal .h5, a CVAT video XML 1.1 (.xml) or MOT 1.1 export (gt/gt.txt
or its zip), or a COCO / COCO-video .json (--format, else the file's suffix). VIDEO is the video file or frame
folder the labels belong to (default: the one the labels name). The labelled frames of --train-frames become the
sequence <name>-train (Protocol 1 train), every frame of --test-frames the sequence <name>-test (Protocol 1 test);
frames are 1-based and inclusive, as a video player shows them. Keypoint labels (SLEAP, DLC) become the box around
each animal's visible keypoints, grown by --margin pixels. Writes OUT_ROOT/import.json (what was imported, and
what was left out and why) and prints a summary. See docs/own_data.md.
"""
from __future__ import annotations

import argparse
import os.path as osp


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from vastmat.datasets.importers import FORMATS, INSTANCE_KINDS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('labels', help='the label file (.slp, .h5, .xml, .json, gt.txt, .zip)')
    parser.add_argument('out', help='the VastMAT root to write (must not exist, unless --overwrite)')
    parser.add_argument('--video', help='the video file or frame folder (default: the one the labels name)')
    parser.add_argument('--format', choices=sorted(FORMATS), help='the label format (default: by suffix)')
    parser.add_argument('--name', help='the video name in the root (default: the video file\'s stem)')
    parser.add_argument('--train-frames', metavar='FIRST-LAST', help='frames to train on, e.g. 1-600')
    parser.add_argument('--test-frames', metavar='FIRST-LAST', help='frames to test on, e.g. 601-1100')
    parser.add_argument('--category', default=None, help='the animals\' VastMAT category, a name (Fly) or id '
                        '(1..337; default: unknown, -1)')
    parser.add_argument('--fps', type=float, help='the frame rate, where the video states none (a frame folder)')
    parser.add_argument('--margin', type=float, default=None,
                        help='pixels added on each side of a keypoint box (default 4 for keypoints, 0 for boxes)')
    parser.add_argument('--instances', choices=INSTANCE_KINDS, default='all',
                        help='SLEAP: user (proofread), predicted, or all (user, else predicted; default)')
    parser.add_argument('--no-tracks', action='store_true',
                        help='boxes without identities (each label its own), e.g. to train a detector only')
    parser.add_argument('--overwrite', action='store_true', help='replace OUT_ROOT once the new one is complete')
    parser.add_argument('--quiet', action='store_true', help='no progress bar')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    from vastmat.datasets.importers import category_id, import_labels, parse_frame_range, print_import_summary
    args = parse_args(argv)
    category = category_id(args.category) if args.category is not None else -1
    report = import_labels(
        args.labels, args.out, video=args.video, fmt=args.format, name=args.name,
        train=parse_frame_range(args.train_frames, '--train-frames') if args.train_frames else None,
        test=parse_frame_range(args.test_frames, '--test-frames') if args.test_frames else None,
        category=category, margin=args.margin, instances=args.instances, tracks=not args.no_tracks, fps=args.fps,
        overwrite=args.overwrite, progress=not args.quiet)
    print_import_summary(report, osp.join(args.out, 'import.json'))
    return report


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
