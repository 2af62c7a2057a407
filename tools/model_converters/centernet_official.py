#!/usr/bin/env python
"""Convert a CenterNet DLA-34 checkpoint (xingyizhou/CenterNet ``ctdet_coco_dla_2x.pth``, the starting point of the
official FairMOT experiments: ``--load_model ../models/ctdet_coco_dla_2x.pth``) into the starting weights of this
project's FairMOT (configs/fairmot/), as the official FairMOT ``load_model`` loads it:

    python tools/model_converters/centernet_official.py ctdet_coco_dla_2x.pth \
        checkpoints/fairmot_ctdet_coco_dla_2x_vastmat.pth

Tensors whose shapes differ from the FairMOT network of ``--config`` (the 80-class ``hm.2``, the 2-channel ``wh.2``)
are skipped, so that the network keeps its own initialisation there, as the identity head ``id.*`` that CenterNet
lacks; each is printed as the official code prints it. The renaming is
:func:`vastmat.models.dense_heads.official_centernet_state_dict`. The output holds plain tensors only (loadable with
``weights_only=True``), under ``detector.``, and is written atomically: a config's ``load_from`` (which loads
non-strictly, so the skipped tensors keep the model's initialisation).
"""
from __future__ import annotations

import argparse
import os.path as osp

from vastmat.engine.checkpoint import converted_summary, read_official_checkpoint, save_converted_checkpoint

DEFAULT_CONFIG = osp.join(osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))), 'configs', 'fairmot',
                          'fairmot_dla34_1xb12-30e_vastmat-p1.py')


def detector_shapes(config: str) -> dict:
    """Names -> shapes of the detector of a FairMOT tracking config (built without its pretrained weights)."""
    from mmengine.config import Config
    from mmengine.registry import init_default_scope

    import vastmat.datasets  # noqa: F401  (registers)
    import vastmat.models  # noqa: F401  (registers)
    from vastmat.registry import MODELS

    init_default_scope('vastmat')
    cfg = Config.fromfile(config)
    detector = cfg.model.get('detector')
    if detector is None:
        raise KeyError(f'{config}: model.detector is not set (not a FairMOT tracking config)')
    detector.backbone.init_cfg = None
    return {k: tuple(v.shape) for k, v in MODELS.build(detector).state_dict().items()}


def convert(source: str, target: str, config: str = DEFAULT_CONFIG) -> tuple[dict, list[str]]:
    """Convert ``source`` to ``target`` for the FairMOT of ``config``; returns the converted state dict and the
    official load messages."""
    from vastmat.models.dense_heads import official_centernet_state_dict
    checkpoint, state_dict = read_official_checkpoint(source, 'state_dict',
                                                      "a CenterNet checkpoint has {'epoch', 'state_dict'}")
    try:
        converted, messages = official_centernet_state_dict(state_dict, detector_shapes(config))
    except KeyError as error:
        raise KeyError(f'{source}: {error}') from error
    converted = {f'detector.{k}': v for k, v in converted.items()}
    meta = dict(converted_from=osp.basename(source), config=osp.basename(config), load_messages=messages)
    save_converted_checkpoint(converted, meta, target, checkpoint)
    return converted, messages


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('source', help='CenterNet checkpoint (ctdet_coco_dla_2x.pth)')
    parser.add_argument('target', help="converted checkpoint for a FairMOT config's load_from")
    parser.add_argument('--config', default=DEFAULT_CONFIG, help='the FairMOT config whose network it starts')
    args = parser.parse_args(argv)
    converted, messages = convert(args.source, args.target, args.config)
    for message in messages:
        print(message)
    print(converted_summary(args.target, converted))
    return converted


if __name__ == '__main__':
    main()
