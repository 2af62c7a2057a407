"""The official Deformable DETR naming (fundamentalvision/Deformable-DETR ``models/deformable_detr.py`` and the codes
built on it: MOTIP's ``models/deformable_detr``, TransTrack) -> mmdet 3.3's ``DeformableDETR`` naming, and the
official one-class head taken from a COCO checkpoint (MOTIP's ``models/misc.py`` ``load_detr_pretrain``).

=============================================  ==================================================================
official                                       mmdet ``DeformableDETR``
=============================================  ==================================================================
``backbone.0.body.*`` (torchvision ResNet)     ``backbone.*`` (FrozenBatchNorm2d buffers -> BN; a
                                               ``num_batches_tracked`` 0 is added so that loading is strict)
``input_proj.i.0`` / ``.1`` (1x1 conv, GN)     ``neck.convs.i.conv`` / ``.gn`` (``ChannelMapper(bias=True)``)
``input_proj.i.0`` / ``.1`` (3x3 s2 conv, GN)  ``neck.extra_convs.j.conv`` / ``.gn`` (j counts the 3x3 ones)
``transformer.level_embed``                    ``level_embed``
``transformer.reference_points``               ``reference_points_fc``
``transformer.encoder.layers.i``               ``encoder.layers.i``: ``self_attn`` alike, ``norm1`` / ``norm2`` ->
                                               ``norms.0`` / ``.1``, ``linear1`` / ``linear2`` -> ``ffn.layers.0.0``
                                               / ``ffn.layers.1``
``transformer.decoder.layers.i``               ``decoder.layers.i``: ``self_attn.*`` -> ``self_attn.attn.*``,
                                               ``cross_attn`` alike, ``norm2`` (after self-attention) / ``norm1``
                                               (after cross-attention) / ``norm3`` -> ``norms.0`` / ``.1`` / ``.2``
``transformer.decoder.bbox_embed`` /           dropped: the box-refinement / two-stage aliases of ``bbox_embed`` /
``transformer.decoder.class_embed``            ``class_embed`` (the same tensors)
``transformer.enc_output[_norm]``,             ``memory_trans_fc`` / ``memory_trans_norm``, ``pos_trans_fc`` /
``transformer.pos_trans[_norm]`` (two-stage)   ``pos_trans_norm``
``class_embed.i``                              ``bbox_head.cls_branches.i``
``bbox_embed.i.layers.j``                      ``bbox_head.reg_branches.i.{2j}`` (Linear, ReLU, Linear, ReLU, Linear)
``query_embed``                                ``query_embedding`` (the same [position | content] halves)
=============================================  ==================================================================

The official input projections are convolutions with a bias followed by GroupNorm, which does not absorb a
per-channel bias: the neck must be ``ChannelMapper(..., bias=True)`` (configs/_base_/models/
deformable-detr-refine_r50_1class.py) for a converted checkpoint to give the official outputs.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

import torch
from torch import Tensor

# COCO category ids of the 91-row class heads of the official COCO checkpoints (the COCO annotation ids; row 0 and
# the unused ids stay unused). MOTIP's load_detr_pretrain copies row 1 (person) by default.
COCO_CATEGORY_IDS = {
    'person': 1, 'bird': 16, 'cat': 17, 'dog': 18, 'horse': 19, 'sheep': 20, 'cow': 21, 'elephant': 22, 'bear': 23,
    'zebra': 24, 'giraffe': 25,
}
COCO_HEAD_ROWS = 91

_ENCODER_LAYER = {'norm1': 'norms.0', 'norm2': 'norms.1', 'linear1': 'ffn.layers.0.0', 'linear2': 'ffn.layers.1'}
_DECODER_LAYER = {'norm2': 'norms.0', 'norm1': 'norms.1', 'norm3': 'norms.2', 'linear1': 'ffn.layers.0.0',
                  'linear2': 'ffn.layers.1', 'self_attn': 'self_attn.attn'}
_TRANSFORMER = {'level_embed': 'level_embed', 'reference_points': 'reference_points_fc',
                'enc_output': 'memory_trans_fc', 'enc_output_norm': 'memory_trans_norm',
                'pos_trans': 'pos_trans_fc', 'pos_trans_norm': 'pos_trans_norm'}


def _input_projection_names(state_dict: Mapping[str, Tensor]) -> dict[str, str]:
    """``input_proj.i`` -> ``neck.convs.i`` (1x1 convolutions on backbone levels) or ``neck.extra_convs.j`` (the 3x3
    stride-2 ones on top), read from the convolutions' kernel sizes."""
    matches = (re.match(r'input_proj\.(\d+)\.0\.weight$', key) for key in state_dict)
    levels = sorted(int(match.group(1)) for match in matches if match)
    names, extra = {}, 0
    for i in levels:
        kernel = state_dict[f'input_proj.{i}.0.weight'].shape[-1]
        if kernel == 1 and extra == 0:
            names[f'input_proj.{i}'] = f'neck.convs.{i}'
        elif kernel == 3:
            names[f'input_proj.{i}'] = f'neck.extra_convs.{extra}'
            extra += 1
        else:
            raise ValueError(f'official Deformable DETR: input_proj.{i}.0.weight has a {kernel}x{kernel} kernel '
                             'after the extra levels (expected 1x1 projections of backbone levels, then 3x3 ones)')
    return names


def _rename(key: str, projections: dict[str, str]) -> str | None:
    """The mmdet name of one official key; None for the aliases that are dropped."""
    if key.startswith('backbone.0.body.'):
        return 'backbone.' + key[len('backbone.0.body.'):]
    if m := re.match(r'(input_proj\.\d+)\.([01])\.(.+)$', key):
        return f"{projections[m.group(1)]}.{'conv' if m.group(2) == '0' else 'gn'}.{m.group(3)}"
    if m := re.match(r'class_embed\.(\d+)\.(.+)$', key):
        return f'bbox_head.cls_branches.{m.group(1)}.{m.group(2)}'
    if m := re.match(r'bbox_embed\.(\d+)\.layers\.(\d+)\.(.+)$', key):
        return f'bbox_head.reg_branches.{m.group(1)}.{2 * int(m.group(2))}.{m.group(3)}'
    if key.startswith('query_embed.'):
        return 'query_embedding.' + key[len('query_embed.'):]
    if re.match(r'transformer\.decoder\.(bbox_embed|class_embed)\.', key):
        return None
    if m := re.match(r'transformer\.(encoder|decoder)\.layers\.(\d+)\.([a-z_0-9]+)(\..+|)$', key):
        part, layer, module, rest = m.groups()
        table = _ENCODER_LAYER if part == 'encoder' else _DECODER_LAYER
        if module in table:
            module = table[module]
        elif module not in ('self_attn', 'cross_attn'):
            raise KeyError(f'official Deformable DETR: unknown {part} layer module in {key!r}')
        return f'{part}.layers.{layer}.{module}{rest}'
    if m := re.match(r'transformer\.([a-z_]+)(\..+|)$', key):
        if m.group(1) in _TRANSFORMER:
            return _TRANSFORMER[m.group(1)] + m.group(2)
    raise KeyError(f'official Deformable DETR: no mmdet name for {key!r}')


def official_deformable_detr_state_dict(state_dict: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """An official Deformable DETR state dict (the ``model`` of its checkpoints, keys as in its ``DeformableDETR``
    module: ``backbone.0.body.*``, ``input_proj.*``, ``transformer.*``, ``class_embed.*``, ``bbox_embed.*``,
    ``query_embed.*``) in mmdet 3.3 ``DeformableDETR`` naming (module docstring), for ``model.detector``. The
    tensors are the same objects; an unknown key raises a ``KeyError`` naming it."""
    if not state_dict:
        raise ValueError('official Deformable DETR: empty state dict')
    projections = _input_projection_names(state_dict)
    converted: dict[str, Tensor] = {}
    for key, value in state_dict.items():
        name = _rename(key, projections)
        if name is None:
            continue
        if name in converted:
            raise KeyError(f'official Deformable DETR: {key!r} and another key both map to {name!r}')
        converted[name] = value
        if name.startswith('backbone.') and name.endswith('.running_var'):
            converted[name[:-len('running_var')] + 'num_batches_tracked'] = torch.tensor(0, dtype=torch.long)
    return converted


def official_one_class_head(state_dict: Mapping[str, Tensor], class_index: int = COCO_CATEGORY_IDS['person'],
                            rows: int = COCO_HEAD_ROWS, source: str = 'official one-class head'
                            ) -> dict[str, Tensor]:
    """The official one-class head from a multi-class checkpoint (MOTIP ``models/misc.py`` ``load_detr_pretrain``
    with ``NUM_CLASSES`` 1): every ``class_embed`` weight and bias of ``rows`` rows (COCO: 91, by category id) keeps
    its row ``class_index`` only (official default 1, person; ``DETR_DEFAULT_CLASS_IDX`` otherwise); one-row heads
    stay. TransTrack's converter takes its 20-row heads' row 1 with it. Keys in the official naming; returns a new
    dict. ``source`` names the checkpoint in errors."""
    if not 0 <= class_index < rows:
        raise ValueError(f'{source}: class_index must be in [0, {rows}), got {class_index}')
    out = dict(state_dict)
    for key, value in state_dict.items():
        if 'class_embed' not in key:
            continue
        if len(value) == rows:
            out[key] = value[class_index:class_index + 1].clone()
        elif len(value) != 1:
            raise ValueError(f'{source}: {key!r} has {len(value)} rows, neither the official {rows}-row head nor a '
                             'one-class head (official load_detr_pretrain refuses it too)')
    return out
