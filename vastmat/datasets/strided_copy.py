"""A copy of a MOTChallenge-layout dataset and its cached detections at a lower frame rate: every K-th frame,
renumbered from 1 (``seqinfo.ini``'s frameRate and seqLength divided), so that every tool (tracking, tuning,
scoring) runs on it as on any other dataset (AnimalTrack-10fps-sim at 5 FPS: ``stride=2``)."""
from __future__ import annotations

import os.path as osp

from .detections import detection_file
from .formats import read_detections, write_detections, write_gt, write_seqinfo
from .sequences import list_sequences, load_sequence


def write_strided_copy(data_root: str, det_root: str, stride: int, out_root: str,
                       videos: list[str] | None = None) -> tuple[str, str]:
    """Write ``out_root/gt/<video>/{seqinfo.ini, gt/gt.txt}`` and ``out_root/dets/<video>.txt`` (frames 1, 1 + K,
    ... renumbered 1, 2, ...) for ``videos`` (default: every video of ``data_root``); returns the two roots. Files
    are written atomically; a copy already made (its seqinfo.ini present) is kept."""
    gt_root, out_dets = osp.join(out_root, 'gt'), osp.join(out_root, 'dets')
    for name in videos or list_sequences(data_root):
        target = osp.join(gt_root, name)
        if osp.isfile(osp.join(target, 'seqinfo.ini')):
            continue
        sequence = load_sequence(data_root, name, stride=stride)
        dets = read_detections(detection_file(det_root, name), sequence.source_length)
        keep = (dets.frames - 1) % stride == 0
        dets.frames, dets.boxes, dets.scores = dets.frames[keep], dets.boxes[keep], dets.scores[keep]
        dets.features, dets.line_numbers = dets.features[keep], dets.line_numbers[keep]
        dets.frames = (dets.frames - 1) // stride + 1
        write_detections(osp.join(out_dets, f'{name}.txt'), dets, decimals=4)
        write_gt(osp.join(target, 'gt', 'gt.txt'), sequence.gt, decimals=2)
        info = {k: v for k, v in sequence.info.items() if k != 'imStride'}
        write_seqinfo(osp.join(target, 'seqinfo.ini'), info)  # last: its presence marks a finished copy
    return gt_root, out_dets
