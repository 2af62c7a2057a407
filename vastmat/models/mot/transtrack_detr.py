"""TransTrack's network (Sun et al., 2020) on mmdet 3.3's Deformable DETR.

A port of PeizeSun/TransTrack ``models/deformable_detrtrack_{train,test}.py`` and
``models/deformable_transformer_track.py`` (HEAD ``91cfaa7``) built from mmdet's parts: the ResNet backbone and the
``ChannelMapper`` neck (the official ``input_proj``), ``DeformableDetrTransformerEncoder`` / ``Decoder`` with mmcv's
``MultiScaleDeformableAttention``, ``DeformableDETRHead`` (its Hungarian assigner and focal / L1 / GIoU losses).
TransTrack adds to Deformable DETR:

* feature fusion: per level, ``combine = Conv1x1(2C -> C)`` on ``cat(proj(current), proj(previous))`` before the
  encoder (:meth:`TransTrackDeformableDETR.fuse`); on a video's first frame the previous frame is the current one;
* the track decoder ``decoder_track``: a second decoder with the detection decoder's structure and its own weights.
  Its queries are the previous frame's last-layer decoder outputs ``hs[-1]`` and its reference points the previous
  frame's final boxes (4-d, sigmoid space); it has no box refinement (the official ``decoder_track.bbox_embed`` stays
  ``None``), so every layer's box is ``sigmoid(reg_branches[l](hs_l) + inverse_sigmoid(previous box))``. The class and
  box heads (``bbox_head.cls_branches`` / ``reg_branches``) are shared by both decoders; it reads the detection
  decoder's encoder memory (:meth:`TransTrackDeformableDETR.forward_track_decoder`);
* the sampling offsets of 2-d reference points (the encoder, the detection decoder's first layer) are divided by
  the level's ``(H, W)``: TransTrack's ``models/ops/modules/ms_deform_attn.py`` divides by ``input_spatial_shapes``
  where Deformable DETR's later code (and mmcv) divide by ``(W, H)``; its checkpoints were trained so.
  ``official_offset_normalizer=True`` (the full-size configs) does the same (:class:`TransTrackDeformableAttention`);
* no positional query in the decoders: TransTrack's ``deformable_transformer{,_track}.py`` sets ``query_embed = None``
  before calling the decoder (Deformable DETR passes it), so the positional half of ``query_embedding`` only makes the
  reference points. ``query_pos_in_decoder=True`` gives Deformable DETR's behaviour instead.

The training recipe and the per-video state live in :class:`vastmat.models.mot.TransTrack`.
"""
from __future__ import annotations

import copy
from typing import Any

import torch
from mmcv.cnn.bricks.transformer import MultiScaleDeformableAttention
from mmdet.models.detectors import DeformableDETR
from mmdet.models.layers import DeformableDetrTransformerDecoder
from torch import Tensor, nn

from vastmat.registry import MODELS


def _offsets_over_height_width(module: nn.Module, args: Any, output: Tensor, spatial_shapes: Tensor,
                               num_heads: int, num_levels: int, num_points: int) -> Tensor:
    """Forward hook of ``sampling_offsets``: x offsets times ``W_l / H_l``, y offsets times ``H_l / W_l``, so that
    mmcv's division by ``(W_l, H_l)`` gives TransTrack's division by ``(H_l, W_l)``."""
    h, w = spatial_shapes[:, 0].to(output.dtype), spatial_shapes[:, 1].to(output.dtype)
    factor = torch.stack([w / h, h / w], -1)[:, None, :]  # (levels, 1, 2)
    shape = output.shape
    return (output.view(*shape[:-1], num_heads, num_levels, num_points, 2) * factor).view(shape)


class TransTrackDeformableAttention(MultiScaleDeformableAttention):
    """mmcv's ``MultiScaleDeformableAttention`` with TransTrack's offset normalisation for 2-d reference points:
    ``reference + offset / (H_l, W_l)`` (the official ``ms_deform_attn.py``: ``sampling_offsets /
    input_spatial_shapes``) instead of ``/ (W_l, H_l)``. 4-d reference points (boxes) are unchanged. Same
    parameters as mmcv's module."""

    def forward(self, *args: Any, **kwargs: Any) -> Tensor:
        reference_points, spatial_shapes = kwargs.get('reference_points'), kwargs.get('spatial_shapes')
        if reference_points is None or spatial_shapes is None or reference_points.shape[-1] != 2:
            return super().forward(*args, **kwargs)
        handle = self.sampling_offsets.register_forward_hook(
            lambda module, inputs, output: _offsets_over_height_width(
                module, inputs, output, spatial_shapes, self.num_heads, self.num_levels, self.num_points))
        try:
            return super().forward(*args, **kwargs)
        finally:
            handle.remove()


@MODELS.register_module()
class TransTrackDeformableDETR(DeformableDETR):
    """mmdet's ``DeformableDETR`` with TransTrack's feature fusion and track decoder.

    Args:
        decoder: the detection decoder's config; the track decoder is built from the same config.
        query_pos_in_decoder: add the positional half of ``query_embedding`` to the decoder queries (Deformable
            DETR); False (default) is TransTrack's, which gives the decoders no positional query.
        official_offset_normalizer: True: every deformable attention is a :class:`TransTrackDeformableAttention`
            (TransTrack's offsets over ``(H, W)`` for 2-d reference points, as its checkpoints were trained); False
            (default): mmcv's ``(W, H)``, Deformable DETR's.
        *args, **kwargs: mmdet ``DeformableDETR`` arguments (``with_box_refine=True``, ``as_two_stage=False`` in
            TransTrack; two-stage is not supported).
    """

    def __init__(self, *args: Any, decoder: dict, query_pos_in_decoder: bool = False,
                 official_offset_normalizer: bool = False, **kwargs: Any) -> None:
        if kwargs.get('as_two_stage'):
            raise ValueError('TransTrackDeformableDETR: as_two_stage=True is not supported (TransTrack is '
                             'single-stage: its queries are query_embedding and the previous frame\'s outputs)')
        self.track_decoder_cfg = copy.deepcopy(decoder)
        self.query_pos_in_decoder = query_pos_in_decoder
        self.official_offset_normalizer = official_offset_normalizer
        super().__init__(*args, decoder=decoder, **kwargs)

    def _init_layers(self) -> None:
        super()._init_layers()
        # mmdet creates level_embed with torch.Tensor(...), uninitialised memory until init_weights(): a model built
        # and run without init_weights or a checkpoint read garbage (occasionally NaN). Give it its normal_ draw now.
        nn.init.normal_(self.level_embed)
        self.decoder_track = DeformableDetrTransformerDecoder(**copy.deepcopy(self.track_decoder_cfg))
        # official: nn.Conv2d(hidden_dim * 2, hidden_dim, kernel_size=1), PyTorch's default initialisation
        self.combine = nn.Conv2d(2 * self.embed_dims, self.embed_dims, kernel_size=1)
        if self.official_offset_normalizer:  # the same parameters, TransTrack's offset normalisation
            for module in self.modules():
                if type(module) is MultiScaleDeformableAttention:
                    module.__class__ = TransTrackDeformableAttention

    def init_weights(self) -> None:
        """Deformable DETR's initialisation, and the same for the track decoder (the official ``_reset_parameters``:
        Xavier on every matrix, then the deformable attention's own initialisation)."""
        super().init_weights()
        for p in self.decoder_track.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        for m in self.decoder_track.modules():
            if isinstance(m, MultiScaleDeformableAttention):
                m.init_weights()

    # ------------------------------------------------------------------------------------------------- fusion
    def fuse(self, feats: tuple[Tensor, ...], prev_feats: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        """Per level ``combine(cat(feats, prev_feats))``: the projected (neck) features of the current and the
        previous frame."""
        if len(feats) != len(prev_feats) or any(a.shape != b.shape for a, b in zip(feats, prev_feats)):
            raise ValueError('TransTrackDeformableDETR.fuse: the previous frame\'s features '
                             f'{[tuple(f.shape) for f in prev_feats]} do not match the current frame\'s '
                             f'{[tuple(f.shape) for f in feats]} (the frames of a video, and of a training pair, '
                             'must have the same input size)')
        return tuple(self.combine(torch.cat([cur, prev], dim=1)) for cur, prev in zip(feats, prev_feats))

    # ------------------------------------------------------------------------------------------------ decoders
    def pre_decoder(self, memory: Tensor, memory_mask: Tensor, spatial_shapes: Tensor) -> tuple[dict, dict]:
        decoder_inputs, head_inputs = super().pre_decoder(memory, memory_mask, spatial_shapes)
        if not self.query_pos_in_decoder:  # TransTrack: query_embed = None before self.decoder(...)
            decoder_inputs['query_pos'] = None
        return decoder_inputs, head_inputs

    def forward_track_decoder(self, query: Tensor, reference_points: Tensor, memory: Tensor, memory_mask: Tensor,
                              spatial_shapes: Tensor, level_start_index: Tensor, valid_ratios: Tensor) -> dict:
        """The track decoder on the encoder memory of the current frame.

        Args:
            query: ``(bs, num_queries, C)`` the previous frame's last decoder layer outputs ``hs[-1]``.
            reference_points: ``(bs, num_queries, 4)`` the previous frame's final boxes, normalised ``cx, cy, w, h``.

        Returns:
            ``hidden_states (num_layers, bs, num_queries, C)`` and ``references``: the previous boxes for every layer
            (no refinement), the input of ``bbox_head``.
        """
        if reference_points.shape[-1] != 4 or reference_points.shape[:2] != query.shape[:2]:
            raise ValueError(f'TransTrackDeformableDETR: track queries {tuple(query.shape)} need (bs, num_queries, 4) '
                             f'reference boxes, got {tuple(reference_points.shape)}')
        hidden_states, references = self.decoder_track(
            query=query, query_pos=None, value=memory, key_padding_mask=memory_mask,
            reference_points=reference_points, spatial_shapes=spatial_shapes, level_start_index=level_start_index,
            valid_ratios=valid_ratios, reg_branches=None)
        return dict(hidden_states=hidden_states, references=[reference_points, *references])

    def forward_fused(self, feats: tuple[Tensor, ...], prev_feats: tuple[Tensor, ...], batch_data_samples: list,
                      track_queries: tuple[Tensor, Tensor] | None = None, detect: bool = True) -> dict:
        """Fusion, encoder, then the detection decoder (``detect``) and / or the track decoder (``track_queries``:
        the previous frame's ``hs[-1]`` and boxes).

        Returns:
            ``memory`` and, for each decoder run, ``'detection'`` / ``'tracking'``: dicts of ``hidden_states`` and
            ``references`` (the arguments of ``bbox_head(...)`` and ``bbox_head.loss(...)``).
        """
        encoder_inputs, decoder_inputs = self.pre_transformer(self.fuse(feats, prev_feats), batch_data_samples)
        encoder_outputs = self.forward_encoder(**encoder_inputs)
        out = dict(memory=encoder_outputs['memory'])
        if detect:
            queries, _ = self.pre_decoder(**encoder_outputs)
            out['detection'] = self.forward_decoder(**decoder_inputs, **queries)
        if track_queries is not None:
            query, boxes = track_queries
            out['tracking'] = self.forward_track_decoder(query, boxes, encoder_outputs['memory'], **decoder_inputs)
        return out

    def heads(self, decoder_outputs: dict) -> tuple[Tensor, Tensor]:
        """Class logits ``(num_layers, bs, num_queries, num_classes)`` and boxes ``(num_layers, bs, num_queries,
        4)`` (normalised ``cx, cy, w, h``) of a decoder's outputs, through the shared heads."""
        return self.bbox_head(decoder_outputs['hidden_states'], decoder_outputs['references'])
