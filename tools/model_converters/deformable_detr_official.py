#!/usr/bin/env python
"""Convert an official COCO Deformable DETR checkpoint (fundamentalvision/Deformable-DETR, e.g.
r50_deformable_detr_plus_iterative_bbox_refinement-checkpoint.pth) into the starting point of this project's MOTIP
DETR pre-training (configs/motip/motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py), as MOTIP's own
``load_detr_pretrain`` (models/misc.py) starts it: the 91-row COCO class heads keep one row, the COCO category
``--coco-class`` (official default person, 1), for the one-class head; everything else keeps its values.

    python tools/model_converters/deformable_detr_official.py \
        r50_deformable_detr_plus_iterative_bbox_refinement-checkpoint.pth \
        checkpoints/deformable_detr_r50_refine_coco_person_vastmat.pth

The names move to mmdet 3.3's DeformableDETR under ``detector.`` (``vastmat.models.mot.official_detr``); the
model's neck must have the official conv bias (``ChannelMapper(bias=True)``, the base config's). The output holds
plain tensors only (loadable with ``weights_only=True``) and is written atomically.
"""
from __future__ import annotations

import argparse
import os.path as osp

from vastmat.engine.checkpoint import converted_summary, read_official_checkpoint, save_converted_checkpoint
from vastmat.models.mot import COCO_CATEGORY_IDS, official_deformable_detr_state_dict, official_one_class_head


def coco_class_index(value: str) -> int:
    """A COCO category name of :data:`COCO_CATEGORY_IDS` or a row number of the 91-row head."""
    if value in COCO_CATEGORY_IDS:
        return COCO_CATEGORY_IDS[value]
    if value.isdigit():
        return int(value)
    raise argparse.ArgumentTypeError(f'--coco-class: {value!r} is neither a row number nor one of '
                                     f'{", ".join(COCO_CATEGORY_IDS)}')


def convert(source: str, target: str, coco_class: int = COCO_CATEGORY_IDS['person']) -> dict:
    """Convert ``source`` to ``target`` with the class row ``coco_class``; returns the converted state dict."""
    checkpoint, state_dict = read_official_checkpoint(
        source, 'model', "an official Deformable DETR checkpoint has {'model', 'optimizer', 'lr_scheduler', 'epoch', "
        "'args'}")
    state_dict = official_one_class_head(state_dict, coco_class)
    converted = {f'detector.{k}': v for k, v in official_deformable_detr_state_dict(state_dict).items()}
    save_converted_checkpoint(converted, dict(converted_from=osp.basename(source), coco_class=coco_class), target,
                              checkpoint)
    return converted


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('source', help='official Deformable DETR checkpoint (COCO, 91-row class heads)')
    parser.add_argument('target', help='converted checkpoint for load_from')
    parser.add_argument('--coco-class', type=coco_class_index, default=COCO_CATEGORY_IDS['person'],
                        help='COCO category copied into the one-class head: a name (person, bird, cat, dog, ...) or '
                             'a row number of the 91-row head; default person (1), as the official MOTIP')
    args = parser.parse_args(argv)
    converted = convert(args.source, args.target, args.coco_class)
    print(converted_summary(args.target, converted))
    return converted


if __name__ == '__main__':
    main()
