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
import os
import os.path as osp

import torch

from vastmat.models.mot.transtrack_conversion import OFFICIAL_OBJECT_CLASS, official_transtrack_state_dict


def convert(source: str, target: str, class_index: int = OFFICIAL_OBJECT_CLASS) -> dict:
    """Convert ``source`` to ``target``; returns the converted state dict."""
    with torch.serialization.safe_globals([argparse.Namespace]):
        checkpoint = torch.load(source, map_location='cpu', weights_only=True)
    state_dict = checkpoint.get('model') if isinstance(checkpoint, dict) else None
    if (not isinstance(state_dict, dict) or not state_dict
            or not all(isinstance(v, torch.Tensor) for v in state_dict.values())):
        raise ValueError(f"{source}: no 'model' state dict of tensors (an official TransTrack checkpoint has "
                         "{'model', 'optimizer', 'lr_scheduler', 'epoch', 'args'})")
    try:
        converted = official_transtrack_state_dict(state_dict, class_index=class_index)
    except (KeyError, ValueError) as error:
        raise type(error)(f'{source}: {error}') from error
    meta = dict(converted_from=osp.basename(source), class_index=class_index)
    if isinstance(checkpoint.get('epoch'), int):
        meta['official_epoch'] = checkpoint['epoch']
    os.makedirs(osp.dirname(osp.abspath(target)), exist_ok=True)
    partial = target + '.tmp'
    torch.save(dict(state_dict=converted, meta=meta), partial)
    os.replace(partial, target)
    return converted


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('source', help='official TransTrack checkpoint')
    parser.add_argument('target', help='converted checkpoint for load_from / tools/test.py --checkpoint')
    parser.add_argument('--class-index', type=int, default=OFFICIAL_OBJECT_CLASS,
                        help='row of the official 20-row class heads kept for the one class (default 1, person)')
    args = parser.parse_args(argv)
    converted = convert(args.source, args.target, args.class_index)
    print(f'{args.target}: {len(converted)} tensors, '
          f'{sum(v.numel() for v in converted.values() if v.is_floating_point()):,} weights')
    return converted


if __name__ == '__main__':
    main()
