"""MOTIP's learned identity modules (Gao et al., "Multiple Object Tracking as ID Prediction", CVPR 2025).

Ports of the official ``models/motip/trajectory_modeling.py`` and ``models/motip/id_decoder.py`` (MCG-NJU/MOTIP,
HEAD 5cfbcd4) with the official parameter names, so an official checkpoint's ``trajectory_modeling.*`` and
``id_decoder.*`` entries load with ``load_state_dict(strict=True)`` (published configs: ``USE_AUX_LOSS: False``, one
``embed_to_word`` shared by all layers).

Tokens of the ID decoder are ``[feature (feature_dim) | id embedding (id_dim)]``:

* trajectory tokens: historical detections (features after :class:`MOTIPTrajectoryModeling`) with the embedding of
  their ID label (``word_to_embed`` applied to a one-hot over the K ID words plus the newborn word K);
* unknown tokens: the detections to identify, with the newborn word's embedding.

Layer 0 is cross-attention (unknown -> trajectory) + FFN; layers 1..L-1 first run self-attention among the unknowns
of the same (clip, group, frame). Cross-attention lets an unknown token at time ``t`` see only trajectory tokens at
times ``< t`` and adds a learnable bias ``rel_pos_embeds[layer, t - t', head]``. All blocks are post-norm residual;
``nn.MultiheadAttention`` uses ``add_zero_attn=True`` (a zero key/value each query may always attend to, so a query
with nothing visible gets a finite output). Logits are ``embed_to_word`` of the id half of the last layer's tokens.

The official code does its reshapes with einops; here they are plain torch reshapes/permutes.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmengine.model import BaseModule
from torch import Tensor
from torch.utils.checkpoint import checkpoint

from vastmat.registry import MODELS


class MOTIPFFN(nn.Module):
    """``linear2(activation(linear1(x)))``, the official ``models/ffn.py`` (GELU here, as MOTIP builds it).

    Written by hand because the parameter names must be the official ``linear1`` / ``linear2`` (mmcv's ``FFN``
    names them ``layers.0.0`` / ``layers.1`` and adds its own residual).
    """

    def __init__(self, d_model: int, d_ffn: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ffn)
        self.activation = nn.GELU()
        self.linear2 = nn.Linear(d_ffn, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.activation(self.linear1(x)))


def _xavier_matrices(module: nn.Module, skip: tuple[str, ...] = ()) -> None:
    """The official initialisation: ``xavier_uniform_`` on every parameter with more than one dimension."""
    for name, param in module.named_parameters():
        if param.dim() > 1 and not any(s in name for s in skip):
            nn.init.xavier_uniform_(param)


@MODELS.register_module()
class MOTIPTrajectoryModeling(BaseModule):
    """``x = LN(x + FFN_adapter(x)); x = LN(x + FFN(x))`` on the trajectory features (official TrajectoryModeling).

    Args:
        detr_dim: channels of the DETR embeddings (``hs[-1]``).
        ffn_dim_ratio: hidden width of both FFNs = ratio x input width.
        feature_dim: output channels; the residual around the adapter needs ``feature_dim == detr_dim`` (the
            official module has the same constraint, it fails at the first forward).
    """

    def __init__(self, detr_dim: int = 256, ffn_dim_ratio: int = 2, feature_dim: int = 256,
                 init_cfg: dict | list | None = None) -> None:
        super().__init__(init_cfg=init_cfg)
        if detr_dim != feature_dim:
            raise ValueError(f'MOTIPTrajectoryModeling: detr_dim ({detr_dim}) must equal feature_dim ({feature_dim}): '
                             'the adapter is residual (x + FFN(x)) and then normalised over feature_dim')
        self.detr_dim = detr_dim
        self.ffn_dim_ratio = ffn_dim_ratio
        self.feature_dim = feature_dim
        self.adapter = MOTIPFFN(detr_dim, detr_dim * ffn_dim_ratio)
        self.norm = nn.LayerNorm(feature_dim)
        self.ffn = MOTIPFFN(feature_dim, feature_dim * ffn_dim_ratio)
        self.ffn_norm = nn.LayerNorm(feature_dim)
        _xavier_matrices(self)

    def forward(self, trajectory_features: Tensor) -> Tensor:
        """``(..., detr_dim)`` -> ``(..., feature_dim)``."""
        if trajectory_features.shape[-1] != self.detr_dim:
            raise ValueError(f'MOTIPTrajectoryModeling: trajectory_features must end with detr_dim={self.detr_dim} '
                             f'channels, got shape {tuple(trajectory_features.shape)}')
        x = self.norm(trajectory_features + self.adapter(trajectory_features))
        return self.ffn_norm(x + self.ffn(x))


@MODELS.register_module()
class MOTIPIDDecoder(BaseModule):
    """MOTIP's ID decoder (official ``IDDecoder`` with ``use_aux_loss=False``, shared ``embed_to_word``).

    Args:
        feature_dim: channels of the trajectory / unknown features.
        id_dim: channels of the ID embeddings.
        ffn_dim_ratio: FFN hidden width = ratio x (feature_dim + id_dim).
        num_layers: decoder layers (layer 0 has no self-attention).
        head_dim: channels per attention head; ``num_heads = (feature_dim + id_dim) // head_dim``.
        num_id_vocabulary: K, the number of ID words; the newborn word is K, the logits have K + 1 classes.
        rel_pe_length: number of relative time offsets with a learned bias; every time index given to
            :meth:`forward` must lie in ``[0, rel_pe_length)``.
        with_cp: run each layer under ``torch.utils.checkpoint`` while gradients are needed (the official
            ``USE_DECODER_CHECKPOINT``; saves memory on long clips).

    Parameters (official names): ``word_to_embed`` (Linear K+1 -> id_dim, no bias), ``embed_to_word_layers``
    (``num_layers`` references to ONE Linear id_dim -> K+1 without bias: one parameter, ``num_layers`` state-dict
    entries, as the official), ``rel_pos_embeds`` ``(num_layers, rel_pe_length, num_heads)``, and per layer
    ``self_attn_layers`` / ``self_attn_norm_layers`` (``num_layers - 1``), ``cross_attn_layers``,
    ``cross_attn_norm_layers``, ``ffn_layers`` (:class:`MOTIPFFN`), ``ffn_norm_layers``.
    """

    def __init__(self, feature_dim: int = 256, id_dim: int = 256, ffn_dim_ratio: int = 2, num_layers: int = 6,
                 head_dim: int = 32, num_id_vocabulary: int = 50, rel_pe_length: int = 30, with_cp: bool = False,
                 init_cfg: dict | list | None = None) -> None:
        super().__init__(init_cfg=init_cfg)
        embed_dim = feature_dim + id_dim
        if head_dim <= 0 or embed_dim % head_dim != 0:
            raise ValueError(f'MOTIPIDDecoder: feature_dim + id_dim ({embed_dim}) must be a multiple of head_dim '
                             f'({head_dim})')
        for name, value in (('num_layers', num_layers), ('num_id_vocabulary', num_id_vocabulary),
                            ('rel_pe_length', rel_pe_length), ('id_dim', id_dim), ('feature_dim', feature_dim)):
            if value < 1:
                raise ValueError(f'MOTIPIDDecoder: {name} must be >= 1, got {value}')
        self.feature_dim = feature_dim
        self.id_dim = id_dim
        self.ffn_dim_ratio = ffn_dim_ratio
        self.num_layers = num_layers
        self.head_dim = head_dim
        self.num_heads = embed_dim // head_dim
        self.num_id_vocabulary = num_id_vocabulary
        self.rel_pe_length = rel_pe_length
        self.with_cp = with_cp

        num_words = num_id_vocabulary + 1
        self.word_to_embed = nn.Linear(num_words, id_dim, bias=False)
        embed_to_word = nn.Linear(id_dim, num_words, bias=False)
        self.embed_to_word_layers = nn.ModuleList([embed_to_word] * num_layers)
        self.rel_pos_embeds = nn.Parameter(torch.zeros(num_layers, rel_pe_length, self.num_heads))

        def attn() -> nn.MultiheadAttention:
            return nn.MultiheadAttention(embed_dim, self.num_heads, dropout=0.0, batch_first=True, add_zero_attn=True)

        self.self_attn_layers = nn.ModuleList([attn() for _ in range(num_layers - 1)])
        self.self_attn_norm_layers = nn.ModuleList([nn.LayerNorm(embed_dim) for _ in range(num_layers - 1)])
        self.cross_attn_layers = nn.ModuleList([attn() for _ in range(num_layers)])
        self.cross_attn_norm_layers = nn.ModuleList([nn.LayerNorm(embed_dim) for _ in range(num_layers)])
        self.ffn_layers = nn.ModuleList([MOTIPFFN(embed_dim, embed_dim * ffn_dim_ratio) for _ in range(num_layers)])
        self.ffn_norm_layers = nn.ModuleList([nn.LayerNorm(embed_dim) for _ in range(num_layers)])
        _xavier_matrices(self, skip=('rel_pos_embeds',))

    @property
    def embed_to_word(self) -> nn.Linear:
        """The classifier shared by all layers."""
        return self.embed_to_word_layers[self.num_layers - 1]

    # ------------------------------------------------------------------------------------------------------------
    def _check_inputs(self, trajectory_features: Tensor, trajectory_id_labels: Tensor, trajectory_times: Tensor,
                      trajectory_masks: Tensor, unknown_features: Tensor, unknown_times: Tensor,
                      unknown_masks: Tensor) -> None:
        where = 'MOTIPIDDecoder.forward'
        for name, feats in (('trajectory_features', trajectory_features), ('unknown_features', unknown_features)):
            if feats.dim() != 5 or feats.shape[-1] != self.feature_dim:
                raise ValueError(f'{where}: {name} must be (B, G, T, N, feature_dim={self.feature_dim}), '
                                 f'got shape {tuple(feats.shape)}')
        traj_shape = tuple(trajectory_features.shape[:4])
        unk_shape = tuple(unknown_features.shape[:4])
        if traj_shape[:2] != unk_shape[:2]:
            raise ValueError(f'{where}: trajectory (B, G) = {traj_shape[:2]} and unknown (B, G) = {unk_shape[:2]} '
                             'differ')
        for name, tensor, shape in (('trajectory_id_labels', trajectory_id_labels, traj_shape),
                                    ('trajectory_times', trajectory_times, traj_shape),
                                    ('trajectory_masks', trajectory_masks, traj_shape),
                                    ('unknown_times', unknown_times, unk_shape),
                                    ('unknown_masks', unknown_masks, unk_shape)):
            if tuple(tensor.shape) != shape:
                raise ValueError(f'{where}: {name} must have shape (B, G, T, N) = {shape} like the features, '
                                 f'got {tuple(tensor.shape)}')
            if name.endswith('masks'):
                if tensor.dtype != torch.bool:
                    raise TypeError(f'{where}: {name} must be bool (True = absent), got {tensor.dtype}')
            elif tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.dtype == torch.bool:
                raise TypeError(f'{where}: {name} must be an integer tensor, got {tensor.dtype}')
        for name, times in (('trajectory_times', trajectory_times), ('unknown_times', unknown_times)):
            if times.numel() and (int(times.min()) < 0 or int(times.max()) >= self.rel_pe_length):
                raise ValueError(f'{where}: {name} must lie in [0, rel_pe_length={self.rel_pe_length}), got values in '
                                 f'[{int(times.min())}, {int(times.max())}]; the clip or trajectory window is longer '
                                 'than rel_pe_length (raise rel_pe_length or shorten the window)')
        visible = trajectory_id_labels[~trajectory_masks]
        if visible.numel() and (int(visible.min()) < 0 or int(visible.max()) > self.num_id_vocabulary):
            raise ValueError(f'{where}: unmasked trajectory_id_labels must lie in [0, num_id_vocabulary='
                             f'{self.num_id_vocabulary}], got values in [{int(visible.min())}, {int(visible.max())}]')

    def _layer(self, layer: int, unknown: Tensor, trajectory: Tensor, self_padding: Tensor, cross_padding: Tensor,
               cross_mask: Tensor, rel_t: Tensor) -> Tensor:
        """One decoder layer on ``unknown`` ``(BG, T2, N2, C)``; ``trajectory`` ``(BG, T*N, C)``."""
        bg, t2, n2, c = unknown.shape
        if layer > 0:  # self-attention among the unknowns of one (clip, group, frame)
            x = unknown.reshape(bg * t2, n2, c)
            out = self.self_attn_layers[layer - 1](x, x, x, key_padding_mask=self_padding, need_weights=False)[0]
            unknown = self.self_attn_norm_layers[layer - 1](x + out).reshape(bg, t2, n2, c)
        query = unknown.reshape(bg, t2 * n2, c)
        # (BG, T2*N2, T*N, H) bias -> (BG*H, T2*N2, T*N): clip-major, heads inner, as nn.MultiheadAttention expects
        bias = self.rel_pos_embeds[layer][rel_t]
        attn_mask = (cross_mask.unsqueeze(-1) + bias).permute(0, 3, 1, 2).reshape(
            bg * self.num_heads, t2 * n2, trajectory.shape[1])
        out = self.cross_attn_layers[layer](query, trajectory, trajectory, key_padding_mask=cross_padding,
                                            attn_mask=attn_mask, need_weights=False)[0]
        x = self.cross_attn_norm_layers[layer](query + out)
        x = self.ffn_norm_layers[layer](x + self.ffn_layers[layer](x))
        return x.reshape(bg, t2, n2, c)

    def forward(self, trajectory_features: Tensor, trajectory_id_labels: Tensor, trajectory_times: Tensor,
                trajectory_masks: Tensor, unknown_features: Tensor, unknown_times: Tensor, unknown_masks: Tensor,
                return_id_embeds: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """ID logits of the unknown tokens.

        Args:
            trajectory_features: ``(B, G, T, N, feature_dim)`` (after :class:`MOTIPTrajectoryModeling`).
            trajectory_id_labels: ``(B, G, T, N)`` integer labels in ``[0, K]`` where unmasked (masked entries are
                ignored; the official padding uses -1).
            trajectory_times: ``(B, G, T, N)`` integer time indices in ``[0, rel_pe_length)``.
            trajectory_masks: ``(B, G, T, N)`` bool, True = absent (never attended to).
            unknown_features: ``(B, G, T2, N2, feature_dim)``.
            unknown_times: ``(B, G, T2, N2)`` integer time indices in ``[0, rel_pe_length)``.
            unknown_masks: ``(B, G, T2, N2)`` bool, True = absent (not attended to by the other unknowns; their own
                logits are computed but meaningless).
            return_id_embeds: also return the id half of the last layer's unknown tokens.

        Returns:
            logits ``(B, G, T2, N2, K + 1)``; with ``return_id_embeds`` also ``(B, G, T2, N2, id_dim)``, the tokens'
            last ``id_dim`` channels before ``embed_to_word`` (TCEI's ``after_id_decoder_id_embeds``, there flattened
            to ``(-1, id_dim)``).
        """
        self._check_inputs(trajectory_features, trajectory_id_labels, trajectory_times, trajectory_masks,
                           unknown_features, unknown_times, unknown_masks)
        B, G, T, N = trajectory_features.shape[:4]
        T2, N2 = unknown_features.shape[2:4]
        BG, K, D = B * G, self.num_id_vocabulary, self.feature_dim + self.id_dim
        dtype = self.word_to_embed.weight.dtype
        device = trajectory_features.device
        trajectory_masks, unknown_masks = trajectory_masks.to(device), unknown_masks.to(device)
        words = self.word_to_embed.weight.t()  # (K + 1, id_dim): word_to_embed of a one-hot = a row of this

        # Tokens. Masked trajectory labels become the newborn word: they are never attended to, so their value is
        # irrelevant (the official one-hot of its -1 padding is the same row K).
        labels = trajectory_id_labels.to(device=device, dtype=torch.long).masked_fill(trajectory_masks, K)
        trajectory = torch.cat([trajectory_features.to(dtype), words[labels]], dim=-1).reshape(BG, T * N, D)
        newborn = words[K].expand(B, G, T2, N2, self.id_dim)
        unknown = torch.cat([unknown_features.to(dtype), newborn], dim=-1).reshape(BG, T2, N2, D)

        # Masks. Self-attention: bool padding over the unknowns of one frame. Cross-attention: float -inf padding
        # over the trajectory tokens, plus -inf where the trajectory token is not strictly earlier than the unknown
        # token, plus the relative-time bias indexed by t_unknown - t_trajectory (clamped at 0 where masked anyway).
        self_padding = unknown_masks.reshape(BG * T2, N2)
        cross_padding = torch.zeros(BG, T * N, dtype=dtype, device=device).masked_fill(
            trajectory_masks.reshape(BG, T * N), float('-inf'))
        t_traj = trajectory_times.to(device=device, dtype=torch.long).reshape(BG, 1, T * N)
        t_unk = unknown_times.to(device=device, dtype=torch.long).reshape(BG, T2 * N2, 1)
        cross_mask = torch.zeros(BG, T2 * N2, T * N, dtype=dtype, device=device).masked_fill(
            t_traj >= t_unk, float('-inf'))
        rel_t = (t_unk - t_traj).clamp(min=0)

        use_cp = self.with_cp and torch.is_grad_enabled()
        for layer in range(self.num_layers if unknown.numel() else 0):  # nothing to decode without unknowns
            args = (layer, unknown, trajectory, self_padding, cross_padding, cross_mask, rel_t)
            unknown = checkpoint(self._layer, *args, use_reentrant=False) if use_cp else self._layer(*args)

        id_embeds = unknown[..., -self.id_dim:].reshape(B, G, T2, N2, self.id_dim)
        logits = F.linear(id_embeds, self.embed_to_word.weight)
        if return_id_embeds:
            return logits, id_embeds
        return logits

    # ------------------------------------------------------------------- the runtime tracker's incremental decoding
    # A runtime window changes by one frame per frame, but forward() projects every trajectory token to keys and
    # values in every layer again (most of its time on the CPU). The tracker keeps each observed token's projections
    # from the frame it entered the window (trajectory_keys_values) and decodes the new frame's detections against
    # them (decode_against_keys_values): forward's operations on the tokens that are not masked (a masked token's
    # attention weight is exactly 0 there).
    def trajectory_keys_values(self, features: Tensor, labels: Tensor) -> Tensor:
        """Every layer's cross-attention keys and values of ``M`` trajectory tokens: ``features (M, feature_dim)``
        (after trajectory modelling), ``labels (M,)`` in ``[0, K]``; returns ``(num_layers, 2, num_heads, M,
        head_dim)`` (keys then values, as the attention's packed key-value projection, split into heads)."""
        dtype = self.word_to_embed.weight.dtype
        d = self.feature_dim + self.id_dim
        tokens = torch.cat([features.to(dtype), self.word_to_embed.weight.t()[labels.long()]], dim=-1)
        projected = torch.stack([F.linear(tokens, attn.in_proj_weight[d:], attn.in_proj_bias[d:])
                                 for attn in self.cross_attn_layers])  # (L, M, 2D)
        m = len(tokens)
        return projected.view(self.num_layers, m, 2, self.num_heads, d // self.num_heads).permute(0, 2, 3, 1, 4)

    def decode_against_keys_values(self, unknown_features: Tensor, keys_values: Tensor, padding: Tensor,
                                   rel_times: Tensor) -> tuple[Tensor, Tensor]:
        """:meth:`forward` of one frame's ``n`` unknown tokens (``B = G = T2 = 1``, none masked) against ``M``
        trajectory tokens that are all earlier than them (a runtime window), given as their
        :meth:`trajectory_keys_values` ``(num_layers, 2, num_heads, M, head_dim)`` (any strides with contiguous
        head channels). ``padding (M,)`` bool, True = absent (ignored); ``rel_times (M,)`` the unknowns' time minus
        each token's, in ``[1, rel_pe_length)``, and 0 for nn.MultiheadAttention's ``add_zero_attn`` token (a zero
        key and value that takes no relative-time bias; the caller keeps exactly one, unmasked). Returns the logits
        ``(n, K + 1)`` and the id embeddings ``(n, id_dim)``."""
        n, m = unknown_features.shape[0], keys_values.shape[3]
        dtype = self.word_to_embed.weight.dtype
        device = unknown_features.device
        d, heads = self.feature_dim + self.id_dim, self.num_heads
        head_dim = d // heads
        newborn = self.word_to_embed.weight.t()[self.num_id_vocabulary].expand(n, self.id_dim)
        x = torch.cat([unknown_features.to(dtype), newborn], dim=-1)
        if n == 0:
            return F.linear(x[:, -self.id_dim:], self.embed_to_word.weight), x[:, -self.id_dim:]
        self_padding = torch.zeros((1, n), dtype=torch.bool, device=device)
        key_padding = torch.zeros(m, dtype=dtype, device=device).masked_fill(padding, float('-inf'))
        zero_slot = rel_times == 0
        rel_times = rel_times.long()
        for layer in range(self.num_layers):
            if layer > 0:
                y = x[None]
                out = self.self_attn_layers[layer - 1](y, y, y, key_padding_mask=self_padding, need_weights=False)[0]
                x = self.self_attn_norm_layers[layer - 1](y + out)[0]
            attn = self.cross_attn_layers[layer]
            q = F.linear(x, attn.in_proj_weight[:d], attn.in_proj_bias[:d]).view(n, heads, head_dim).transpose(0, 1)
            bias = self.rel_pos_embeds[layer][rel_times].masked_fill(zero_slot[:, None], 0.0).t()  # (heads, M)
            mask = (bias + key_padding)[:, None].expand(heads, n, m)
            out = F.scaled_dot_product_attention(q[None], keys_values[layer, 0][None], keys_values[layer, 1][None],
                                                 attn_mask=mask[None])[0]
            out = F.linear(out.transpose(0, 1).reshape(n, d), attn.out_proj.weight, attn.out_proj.bias)
            x = self.cross_attn_norm_layers[layer](x + out)
            x = self.ffn_norm_layers[layer](x + self.ffn_layers[layer](x))
        id_embeds = x[:, -self.id_dim:]
        return F.linear(id_embeds, self.embed_to_word.weight), id_embeds
