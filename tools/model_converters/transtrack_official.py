#!/usr/bin/env python
"""Convert an official TransTrack checkpoint (PeizeSun/TransTrack: crowdhuman_final.pth, the start of its MOT
fine-tuning; 671mot17_crowdhuman_mot17.pth, the MOT17 model) into a checkpoint of this project's TransTrack
(configs/transtrack/), as mmdet's tools/model_converters do:

    python tools/model_converters/transtrack_official.py crowdhuman_final.pth \
        checkpoints/transtrack_crowdhuman_final_vastmat.pth

The renaming is :func:`vastmat.models.mot.transtrack_conversion.official_transtrack_state_dict` (Deformable DETR's
naming, the feature fusion ``combine``, the track decoder; the class heads keep the person row 1 of the official 20).
The official checkpoint's ``args`` (an ``argparse.Namespace``) is read with ``weights_only=True`` and that one class
allowed; its ``optimizer`` / ``lr_scheduler`` are not converted. The output holds plain tensors only (loadable with
``weights_only=True``) and is written atomically.
"""
from __future__ import annotations

import argparse
import os.path as osp

from vastmat.engine.checkpoint import converted_summary, read_official_checkpoint, save_converted_checkpoint
from vastmat.models.mot.transtrack_conversion import OFFICIAL_OBJECT_CLASS, official_transtrack_state_dict


def convert(source: str, target: str, class_index: int = OFFICIAL_OBJECT_CLASS) -> dict:
    """Convert ``source`` to ``target``; returns the converted state dict."""
    checkpoint, state_dict = read_official_checkpoint(
        source, 'model', "an official TransTrack checkpoint has {'model', 'optimizer', 'lr_scheduler', 'epoch', "
        "'args'}", bare=False)
    try:
        converted = official_transtrack_state_dict(state_dict, class_index=class_index)
    except (KeyError, ValueError) as error:
        raise type(error)(f'{source}: {error}') from error
    save_converted_checkpoint(converted, dict(converted_from=osp.basename(source), class_index=class_index), target,
                              checkpoint)
    return converted


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('source', help='official TransTrack checkpoint')
    parser.add_argument('target', help='converted checkpoint for load_from / tools/test.py --checkpoint')
    parser.add_argument('--class-index', type=int, default=OFFICIAL_OBJECT_CLASS,
                        help='row of the official 20-row class heads kept for the one class (default 1, person)')
    args = parser.parse_args(argv)
    converted = convert(args.source, args.target, args.class_index)
    print(converted_summary(args.target, converted))
    return converted


if __name__ == '__main__':
    main()
