"""Converters of official checkpoints to the names of the FairMOT network (``SingleStageDetector(backbone=DLASeg,
bbox_head=FairMOTHead)``): an official FairMOT checkpoint (:func:`official_fairmot_state_dict`) and a CenterNet
DLA-34 one loaded as the official FairMOT ``load_model`` does (:func:`official_centernet_state_dict`).
"""
from __future__ import annotations


def official_fairmot_state_dict(state_dict: dict) -> dict:
    """An official FairMOT checkpoint's ``state_dict`` (``base.*``, ``dla_up.*``, ``ida_up.*``, ``hm.*``, ``wh.*``,
    ``reg.*``, ``id.*``; optionally under ``module.``) with the names of ``SingleStageDetector(backbone=DLASeg,
    bbox_head=FairMOTHead)``; load the result into ``model.detector``. (The DCN names and ``base.fc`` are handled by
    :class:`DLASeg` when loading.) The official identity classifier lives in its loss, not in the checkpoint."""
    converted = {}
    for key, value in state_dict.items():
        name = key[len('module.'):] if key.startswith('module.') else key
        if name.split('.', 1)[0] in ('base', 'dla_up', 'ida_up'):
            converted[f'backbone.{name}'] = value
        elif name.split('.', 1)[0] in ('hm', 'wh', 'reg', 'id'):
            converted[f'bbox_head.{name}'] = value
        else:
            raise KeyError(f'official_fairmot_state_dict: {key!r} is not a parameter of the FairMOT network')
    return converted


def official_centernet_state_dict(state_dict: dict, target_shapes: dict) -> tuple[dict, list[str]]:
    """A CenterNet checkpoint's ``state_dict`` (xingyizhou/CenterNet DLA-34 names, e.g. ``ctdet_coco_dla_2x.pth``:
    ``hm`` of 80 COCO classes, ``wh`` of 2 channels, no ``id``) for a FairMOT network, as the official FairMOT
    ``models/model.py`` ``load_model`` loads it into the network (``--load_model ../models/ctdet_coco_dla_2x.pth``):
    ``module.`` stripped; a tensor whose shape differs from the network's is skipped (the network keeps its own
    initialisation: ``hm.2`` and ``wh.2`` of a 1-class ltrb FairMOT); a tensor the network lacks is dropped; a network
    tensor the checkpoint lacks keeps its initialisation (``id.*``).

    ``target_shapes``: the names -> shapes of ``model.detector.state_dict()`` (``backbone.*``, ``bbox_head.*``).
    Returns the tensors to load (detector names, DCN offsets as the official ``conv_offset_mask``, which DLASeg
    renames when loading) and the official messages (``Skip loading parameter ...``, ``Drop parameter ...``,
    ``No param ...``), official names. ``base.fc.*`` (an ImageNet classifier, unused) is dropped."""
    converted, messages, seen = {}, [], set()
    for key, value in official_fairmot_state_dict(state_dict).items():
        official = key.split('.', 1)[1]
        name = key.replace('.conv_offset_mask.', '.conv_offset.')
        seen.add(name)
        if name.startswith('backbone.base.fc.'):
            messages.append(f'Drop parameter {official} (the ImageNet classifier, unused by the network).')
        elif name not in target_shapes:
            messages.append(f'Drop parameter {official}.')
        elif tuple(value.shape) != tuple(target_shapes[name]):
            messages.append(f'Skip loading parameter {official}, required shape{tuple(target_shapes[name])}, '
                            f'loaded shape{tuple(value.shape)}.')
        else:
            converted[key] = value
    for name in target_shapes:  # the network's own tensors (the loss's classifier / s_det / s_id are not in it)
        head = name.split('.')[1] if name.startswith('bbox_head.') else None
        if name not in seen and (name.startswith('backbone.') or head in ('hm', 'wh', 'reg', 'id')):
            official = name.split('.', 1)[1].replace('.conv_offset.', '.conv_offset_mask.')
            messages.append(f'No param {official}.')
    return converted, messages
