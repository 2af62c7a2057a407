"""The official TransTrack naming (PeizeSun/TransTrack ``models/deformable_detrtrack_{train,test}.py``; its
checkpoints ``crowdhuman_final.pth``, ``671mot17_crowdhuman_mot17.pth``, ...) -> :class:`TransTrack`'s.

TransTrack is Deformable DETR (renamed by :func:`official_deformable_detr_state_dict`) plus:

=============================================  ==================================================================
official                                       ours (``TransTrack``)
=============================================  ==================================================================
``combine`` (Conv2d 2C -> C, 1x1)              ``detector.combine``
``transformer.decoder_track.layers.i``         ``detector.decoder_track.layers.i`` (the decoder layer's renaming)
``class_embed.i`` (20 rows: ``num_classes``    ``detector.bbox_head.cls_branches.i`` (1 row: the official
20 for 'mot' / 'crowdhuman'; the objects are   ``PostProcess`` scores ``prob[..., 1:2]``; the other 19 rows are
class 1)                                       never positive in training and are dropped)
every other key                                ``detector.`` + the Deformable DETR renaming
=============================================  ==================================================================

The official input projections have a bias before GroupNorm: the neck is ``ChannelMapper(bias=True)`` in
``configs/_base_/models/deformable-detr-refine_r50_1class.py``. A converted checkpoint then loads into the full-size
TransTrack with no missing or unexpected key (tests/models/mot/test_transtrack_golden.py).
"""
from __future__ import annotations

from collections.abc import Mapping

from torch import Tensor

from .official_detr import official_deformable_detr_state_dict, official_one_class_head

OFFICIAL_CLASS_ROWS = 20  # build(): num_classes 20 for dataset_file 'mot' and every other but coco / coco_panoptic
OFFICIAL_OBJECT_CLASS = 1  # the MOT / CrowdHuman person label (category_id 1); PostProcess scores row 1
_TRACK = 'transformer.decoder_track.'


def official_transtrack_state_dict(state_dict: Mapping[str, Tensor], class_index: int = OFFICIAL_OBJECT_CLASS
                                   ) -> dict[str, Tensor]:
    """An official TransTrack state dict (the ``model`` of its checkpoints) in our naming, keys under ``detector.``
    (module docstring). The class heads keep row ``class_index`` (official 1) of 20; one-row heads (a one-class
    official model) stay. Unknown keys raise a ``KeyError`` naming them."""
    if not state_dict:
        raise ValueError('official TransTrack: empty state dict')
    if 'combine.weight' not in state_dict:
        raise KeyError("official TransTrack: no 'combine.weight' (the feature fusion): is this a plain Deformable DETR "
                       'checkpoint? Load it with load_from into model.detector instead')
    detr, track, fusion = {}, {}, {}
    for key, value in state_dict.items():
        if key.startswith('combine.'):
            fusion[key] = value
        elif key.startswith(_TRACK):
            if not key.startswith(_TRACK + 'layers.'):
                raise KeyError(f'official TransTrack: unexpected track decoder key {key!r} (the track decoder has '
                               'layers only: no box refinement)')
            track['transformer.decoder.' + key[len(_TRACK):]] = value  # renamed as a decoder layer, then moved back
        else:
            detr[key] = value
    detr = official_one_class_head(detr, class_index, rows=OFFICIAL_CLASS_ROWS, source='official TransTrack')
    converted = dict(official_deformable_detr_state_dict(detr))
    converted.update(fusion)
    if track:
        for key, value in official_deformable_detr_state_dict(track).items():
            if not key.startswith('decoder.layers.'):
                raise KeyError(f'official TransTrack: track decoder key renamed to {key!r}')
            converted['decoder_track.' + key[len('decoder.'):]] = value
    return {f'detector.{key}': value for key, value in converted.items()}
