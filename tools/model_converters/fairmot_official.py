#!/usr/bin/env python
"""Convert an official FairMOT checkpoint (ifzhang/FairMOT: fairmot_dla34.pth, crowdhuman_dla34.pth, ...) into a
checkpoint of this project's FairMOT tracking model (configs/fairmot/), as mmdet's tools/model_converters do
(a CenterNet checkpoint, ctdet_coco_dla_2x.pth, whose heads have other shapes: centernet_official.py):

    python tools/model_converters/fairmot_official.py fairmot_dla34.pth work_dirs/fairmot_dla34_vastmat.pth
    python tools/test.py configs/fairmot/fairmot_dla34_1xb12-30e_vastmat-p1.py \
        --checkpoint work_dirs/fairmot_dla34_vastmat.pth

The network's weights (``base.*``, ``dla_up.*``, ``ida_up.*``, heads ``hm``/``wh``/``reg``/``id``) move under
``detector.backbone`` / ``detector.bbox_head``; DCNv2's ``conv_offset_mask`` and the unused ImageNet ``base.fc`` are
handled by DLASeg when it loads. The official identity classifier lives in its training loss and is not in the
file: a converted checkpoint tracks at once, and training from it starts the classifier afresh. The output holds
plain tensors only (loadable with ``weights_only=True``) and is written atomically.
"""
from __future__ import annotations

import argparse
import os.path as osp

from vastmat.engine.checkpoint import converted_summary, read_official_checkpoint, save_converted_checkpoint
from vastmat.models.dense_heads import official_fairmot_state_dict


def convert(source: str, target: str) -> dict:
    """Convert ``source`` to ``target``; returns the converted state dict."""
    checkpoint, state_dict = read_official_checkpoint(
        source, 'state_dict', "an official FairMOT checkpoint has {'epoch', 'state_dict'[, 'optimizer']}")
    converted = {f'detector.{k}': v for k, v in official_fairmot_state_dict(state_dict).items()}
    save_converted_checkpoint(converted, dict(converted_from=osp.basename(source)), target, checkpoint)
    return converted


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('source', help='official FairMOT checkpoint')
    parser.add_argument('target', help='converted checkpoint for tools/test.py / tools/train.py --checkpoint')
    args = parser.parse_args(argv)
    converted = convert(args.source, args.target)
    print(converted_summary(args.target, converted))
    return converted


if __name__ == '__main__':
    main()
