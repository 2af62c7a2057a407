"""D2MP, DiffMOT's decoupled diffusion motion predictor (Lv et al., CVPR 2024), as in Kroery/DiffMOT ``models/``
(reference/trackers.md section 2).

* :class:`HistoryMotionEmbedding` (official ``History_motion_embedding``): the last 5 states ``[cx, cy, w, h, dcx,
  dcy, dw, dh]`` (x-type values / image width, y-type / image height) -> ``Linear(8, 256)`` -> sequence-first, a
  learnable cls token appended *at the end* -> 6 post-norm transformer layers (8 heads, ff 512, dropout 0.1). The
  output is ``en_out[0]``, the first *history* token, not the cls token. The official code also computes a sine
  positional encoding that its post-norm layers never read; it has no parameters and no effect, so it is not
  computed here.
* :class:`HMINet`: MFL (ConcatSquash) layers 4 -> 128 -> 256 -> 512, positional encoding, a 3-layer
  ``nn.TransformerEncoder`` (d 512), MFL 512 -> 256, positional encoding, a 3-layer encoder (d 256), MFL 256 -> 128
  -> 4, every MFL conditioned on ``[beta, sin beta, cos beta, context]`` with ``beta = log(t) / 4``. The transformers
  run sequence-first on ``x.unsqueeze(0)``: a sequence of length 1 with the batch as batch (attention never mixes
  tracks). The two template layers ``layer`` and ``layer2`` that ``nn.TransformerEncoder`` deep-copies stay
  registered, as in the official module, so the state dict holds 14,681,120 parameters, of which 12,051,232 are used
  in the forward pass.
* :class:`D2MP`: the decoupled diffusion ``x_t = x_0 + C t + sqrt(t) eps`` with ``C = -x_0``, ``t ~ U(eps, 1)``;
  the net predicts ``C``; loss ``mean(w1 SmoothL1(C_hat, C) + w2 SmoothL1(eps_hat, eps))``, ``w1 = (t^2 - t + 1) /
  t``, ``w2 = (t^2 - t + 1) / (1 - t + eps)``. Sampling is the official one-step sampler (``num_steps`` forced to 1,
  ``bestof=True``): ``x_T ~ N(0, I)``, ``x_0 = clamp((x_T - C_hat(x_T)) - x_T, -1, 1)``, output ``(x_T + x_0) - x_T``
  (the official arithmetic, so ``-C_hat`` up to float32 rounding), drawn from a ``torch.Generator`` the caller seeds
  so that tracking is reproducible. Like the official sampler it draws a second, unused ``(B, 4)`` normal per call
  (its zero-variance ``randn_like``), so a generator seeded ``s`` gives the official numbers under
  ``torch.manual_seed(s)``.

The state-dict keys are the official ``D2MP`` module's (``encoder.*``, ``diffusion.net.*``,
``diffusion.var_sched.*``), so an official checkpoint (``{'ddpm': state_dict}``, DataParallel ``module.`` prefixes)
loads as it is (:func:`load_d2mp_weights`).
"""
from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from mmengine.model import BaseModel
from torch import nn

from vastmat.registry import MODELS


# ----------------------------------------------------------------------------------------------- history encoder
class HistoryEncoderLayer(nn.Module):
    """The official condition encoder's ``TransformerEncoderLayer`` (post-norm path; its ``pos`` argument is unused
    on that path, so it is not taken)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1) -> None:
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, src: torch.Tensor) -> torch.Tensor:
        src = self.norm1(src + self.dropout1(self.self_attn(src, src, value=src)[0]))
        return self.norm2(src + self.dropout2(self.linear2(self.dropout(F.relu(self.linear1(src))))))


class HistoryMotionEmbedding(nn.Module):
    """Official ``History_motion_embedding``: ``(B, 5, 8)`` conditions -> ``(B, 1, d_model)`` context."""

    def __init__(self, d_model: int = 256, nhead: int = 8, dim_feedforward: int = 512, dropout: float = 0.1,
                 num_layers: int = 6) -> None:
        super().__init__()
        self.cascade_num = num_layers
        self.cls_token = nn.Parameter(torch.randn(1, 1, d_model))
        self.trca = nn.ModuleList(HistoryEncoderLayer(d_model, nhead, dim_feedforward, dropout)
                                  for _ in range(num_layers))
        self.proj = nn.Linear(8, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2:
            x = x.unsqueeze(0)
        x = x.to(self.cls_token)
        q_patch = self.proj(x).permute(1, 0, 2)  # (S, B, d): sequence first
        b, d = q_patch.shape[1], q_patch.shape[2]
        tokens = torch.cat([q_patch, self.cls_token.expand(1, b, d)], dim=0)  # cls token appended at the end
        for layer in self.trca:
            tokens = layer(tokens)
        return tokens[0].reshape(b, 1, d)  # [faithful] the first history token, not the cls token


# ------------------------------------------------------------------------------------------------------- denoiser
class PositionalEncoding(nn.Module):
    """Sinusoidal encoding added to a sequence-first input (official ``models/common.py``)."""

    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000) -> None:
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe.unsqueeze(0).transpose(0, 1))  # (max_len, 1, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(x + self.pe[:x.size(0), :])


class MFL(nn.Module):
    """ConcatSquash-style layer: ``Linear(x) * sigmoid(gate(ctx)) + bias(ctx)`` (official ``MFL``)."""

    def __init__(self, dim_in: int, dim_out: int, dim_ctx: int) -> None:
        super().__init__()
        self._layer = nn.Linear(dim_in, dim_out)
        self._hyper_bias = nn.Linear(dim_ctx, dim_out, bias=False)
        self._hyper_gate = nn.Linear(dim_ctx, dim_out)

    def forward(self, ctx: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self._layer(x) * torch.sigmoid(self._hyper_gate(ctx)) + self._hyper_bias(ctx)


class HMINet(nn.Module):
    """The official denoiser: predicts ``C`` from ``(x_t, beta, context)``."""

    def __init__(self, point_dim: int = 4, context_dim: int = 256, tf_layer: int = 3) -> None:
        super().__init__()
        dim_ctx = context_dim + 3
        # registration order as the official module (same parameter order, same initial draws under a seed)
        self.pos_emb = PositionalEncoding(d_model=2 * context_dim, dropout=0.1, max_len=24)
        self.pos_emb2 = PositionalEncoding(d_model=context_dim, dropout=0.1, max_len=24)
        self.concat1 = MFL(point_dim, context_dim // 2, dim_ctx)
        self.concat1_2 = MFL(context_dim // 2, context_dim, dim_ctx)
        self.concat1_3 = MFL(context_dim, 2 * context_dim, dim_ctx)
        # [faithful] `layer` and `layer2` are templates that nn.TransformerEncoder deep-copies; the official module
        # keeps them registered (unused parameters in the state dict)
        self.layer = nn.TransformerEncoderLayer(d_model=2 * context_dim, nhead=4, dim_feedforward=4 * context_dim)
        self.transformer_encoder = nn.TransformerEncoder(self.layer, num_layers=tf_layer, enable_nested_tensor=False)
        self.layer2 = nn.TransformerEncoderLayer(d_model=context_dim, nhead=4, dim_feedforward=2 * context_dim)
        self.transformer_encoder2 = nn.TransformerEncoder(self.layer2, num_layers=tf_layer,
                                                          enable_nested_tensor=False)
        self.concat3 = MFL(2 * context_dim, context_dim, dim_ctx)
        self.concat4 = MFL(context_dim, context_dim // 2, dim_ctx)
        self.linear = MFL(context_dim // 2, point_dim, dim_ctx)

    def forward(self, x: torch.Tensor, beta: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        batch_size = x.size(0)
        beta = beta.view(batch_size, 1)
        context = context.view(batch_size, -1)
        ctx = torch.cat([beta, torch.sin(beta), torch.cos(beta), context], dim=-1)  # (B, context_dim + 3)
        x = self.concat1_3(ctx, self.concat1_2(ctx, self.concat1(ctx, x)))
        # sequence-first with sequence length 1: the batch stays the batch (do not switch to batch_first)
        x = self.transformer_encoder(self.pos_emb(x.unsqueeze(0)))[0]
        x = self.concat3(ctx, x)
        x = self.transformer_encoder2(self.pos_emb2(x.unsqueeze(0)))[0]
        return self.linear(ctx, self.concat4(ctx, x))


class VarianceSchedule(nn.Module):
    """The official ``VarianceSchedule(num_steps=100, beta_T=5e-2, mode='linear')``: built, never read by D2MP's
    loss or one-step sampler; kept for the official state-dict keys (its buffers)."""

    def __init__(self, num_steps: int = 100, beta_1: float = 1e-4, beta_T: float = 5e-2) -> None:
        super().__init__()
        self.num_steps = num_steps
        betas = torch.cat([torch.zeros([1]), torch.linspace(beta_1, beta_T, steps=num_steps)])
        alphas = 1 - betas
        alpha_bars = torch.cumsum(torch.log(alphas), dim=0).exp()
        sigmas_flex = torch.sqrt(betas)
        sigmas_inflex = torch.zeros_like(sigmas_flex)
        sigmas_inflex[1:] = torch.sqrt((1 - alpha_bars[:-1]) / (1 - alpha_bars[1:]) * betas[1:])
        for name, value in (('betas', betas), ('alphas', alphas), ('alpha_bars', alpha_bars),
                            ('sigmas_flex', sigmas_flex), ('sigmas_inflex', sigmas_inflex)):
            self.register_buffer(name, value)


class DecoupledDiffusion(nn.Module):
    """Official ``D2MP_OB``: the net, the (unused) variance schedule and ``eps``."""

    def __init__(self, net: HMINet, eps: float = 0.001) -> None:
        super().__init__()
        self.net = net
        self.var_sched = VarianceSchedule()
        self.eps = eps


# ----------------------------------------------------------------------------------------------------------- D2MP
@MODELS.register_module()
class D2MP(BaseModel):
    """DiffMOT's motion model, trainable with ``tools/train.py`` (mmengine ``BaseModel``).

    ``forward(inputs, data_samples, mode)``: ``inputs`` are ``(B, 5, 8)`` normalised conditions, ``data_samples``
    the ``(B, 4)`` normalised next-frame deltas (:class:`vastmat.datasets.TrajectoryWindowDataset`); ``mode='loss'``
    gives ``dict(loss=...)``, ``'predict'`` the sampled deltas, ``'tensor'`` the context embedding.

    Args:
        encoder_dim: context size (official ``encoder_dim`` 256).
        tf_layer: layers of each HMINet transformer (official 3).
        eps: the lower bound of ``t`` and the weight's guard (official 0.001).
        checkpoint: weights to load (a D2MP runner checkpoint, a tracking model's checkpoint holding
            ``tracker.motion.*``, or an official DiffMOT ``{'ddpm': ...}`` file); None: initial weights.
    """

    def __init__(self, encoder_dim: int = 256, tf_layer: int = 3, eps: float = 0.001, checkpoint: str | None = None,
                 data_preprocessor: dict | None = None, init_cfg: dict | None = None) -> None:
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        self.encoder = HistoryMotionEmbedding(d_model=encoder_dim)
        self.diffusion = DecoupledDiffusion(HMINet(point_dim=4, context_dim=encoder_dim, tf_layer=tf_layer), eps)
        self.checkpoint = checkpoint
        self.has_weights = False  # set once weights are loaded (checkpoint or a state dict with our keys)
        if checkpoint is not None:
            load_d2mp_weights(self, checkpoint)

    @property
    def eps(self) -> float:
        return self.diffusion.eps

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: Any) -> None:
        if any(key.startswith(prefix + 'encoder.') for key in state_dict):
            self.has_weights = True
        super()._load_from_state_dict(state_dict, prefix, *args)

    # --------------------------------------------------------------------------------------------------- training
    def loss_from(self, conditions: torch.Tensor, deltas: torch.Tensor, t: torch.Tensor | None = None,
                  noise: torch.Tensor | None = None) -> torch.Tensor:
        """The official weighted decoupled loss; ``t (B,)`` and ``noise (B, 4)`` are drawn (in that order, as the
        official code) unless given."""
        context = self.encoder(conditions)
        x_0 = deltas.to(context)
        if t is None:
            t = torch.rand(x_0.shape[0], device=x_0.device) * (1. - self.eps) + self.eps
        if noise is None:
            noise = torch.randn_like(x_0)
        beta = t.log() / 4
        c = -x_0
        time = t.reshape(-1, 1)
        x_noisy = x_0 + c * time + torch.sqrt(time) * noise
        c_pred = self.diffusion.net(x_noisy, beta=beta, context=context)
        noise_pred = (x_noisy - (time - 1) * c_pred) / time.sqrt()
        weight1 = (time ** 2 - time + 1) / time
        weight2 = (time ** 2 - time + 1) / (1 - time + self.eps)
        loss = (weight1 * F.smooth_l1_loss(c_pred, c, reduction='none')
                + weight2 * F.smooth_l1_loss(noise_pred, noise, reduction='none'))
        return loss.mean()

    def forward(self, inputs: torch.Tensor, data_samples: torch.Tensor | None = None, mode: str = 'tensor') -> Any:
        if mode == 'loss':
            if data_samples is None:
                raise ValueError('D2MP: mode="loss" needs the target deltas as data_samples')
            return dict(loss=self.loss_from(inputs, data_samples))
        if mode == 'predict':
            return self.predict_deltas(inputs)
        if mode == 'tensor':
            return self.encoder(inputs)
        raise ValueError(f'D2MP: unknown mode {mode!r} (loss, predict, tensor)')

    # -------------------------------------------------------------------------------------------------- inference
    def sample(self, context: torch.Tensor, generator: torch.Generator | None = None, net: Any = None) -> torch.Tensor:
        """The official one-step sampler on ``(B, d)`` contexts: ``(B, 4)`` deltas (``net``: the denoiser, by
        default ``diffusion.net``)."""
        batch = context.shape[0]
        net = self.diffusion.net if net is None else net
        x_t = torch.randn((batch, 4), generator=generator, device=context.device, dtype=context.dtype)
        ones = torch.ones((batch, ), device=context.device, dtype=context.dtype)
        c_pred = net(x_t, beta=ones.log() / 4, context=context)
        # t = s = 1: noise_pred = (x_t - 0 * C) / 1 = x_t and x_0 = x_t - C * 1 - 1 * noise_pred, clamped; the step to
        # t = 0 gives (x_t + C' * 0 - C' * 1 - 1 * noise_pred) + 0 * randn with C' = -x_0 (the official operations,
        # which round as -C_hat does not)
        noise_pred = x_t - 0 * c_pred
        x_0 = (x_t - c_pred) - noise_pred
        x_0.clamp_(-1., 1.)
        out = (x_t + (-x_0) * 0 + x_0) - noise_pred
        torch.randn((batch, 4), generator=generator, device=context.device, dtype=context.dtype)  # [faithful] unused
        return out

    def predict_deltas(self, conds: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """``(k, 5, 8)`` normalised histories -> ``(k, 4)`` normalised next-frame ``[dcx, dcy, dw, dh]``.

        In eval mode without autograd the inference path (:func:`_encode_fast`, :func:`_hminet_fast`) computes the
        same function with fewer operations; otherwise the modules run as in training.
        """
        if conds.shape[0] == 0:
            return conds.new_zeros((0, 4))
        conds = conds.to(self.encoder.cls_token)
        fast = not self.training and not torch.is_grad_enabled()
        if not fast:
            return self.sample(self.encoder(conds).reshape(conds.shape[0], -1), generator)
        return self.sample(_encode_fast(self.encoder, conds), generator, net=_FastNet(self.diffusion.net))


# ------------------------------------------------------------------------------------------------ inference path
# Written by hand for speed (no library offers it): per frame the tracker predicts every track in one call, and on a
# CPU the module path spends much of its time in operations whose results are not needed. Same function as the
# modules in eval mode, up to float32 rounding (tests/models/trackers/test_diffmot.py):
# * the history encoder's last layer only needs its first token's output (keys and values still use all tokens);
# * HMINet's attention runs over one token: softmax of one score is 1, so the attention output is
#   out_proj(v_proj(x)); the query and key projections are skipped.


def _encode_fast(encoder: HistoryMotionEmbedding, x: torch.Tensor) -> torch.Tensor:
    """``(k, 5, 8)`` -> ``(k, d)``: the encoder's output, batch-first attention over each track's 6 tokens."""
    k = x.shape[0]
    tokens = F.linear(x, encoder.proj.weight, encoder.proj.bias)
    d = tokens.shape[-1]
    tokens = torch.cat([tokens, encoder.cls_token.expand(k, 1, d)], dim=1)  # (k, 6, d), cls token last
    last = len(encoder.trca) - 1
    for i, layer in enumerate(encoder.trca):
        attn = layer.self_attn
        heads = attn.num_heads
        w, b = attn.in_proj_weight, attn.in_proj_bias
        source = tokens
        if i == last:  # only the first token's output is read
            q = F.linear(tokens[:, :1], w[:d], b[:d])
            kv = F.linear(tokens, w[d:], b[d:])
            key, value = kv[..., :d], kv[..., d:]
            source = tokens[:, :1]
        else:
            qkv = F.linear(tokens, w, b)
            q, key, value = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.reshape(k, t.shape[1], heads, d // heads).transpose(1, 2)

        out = F.scaled_dot_product_attention(split(q), split(key), split(value))
        out = out.transpose(1, 2).reshape(k, source.shape[1], d)
        out = F.layer_norm(source + F.linear(out, attn.out_proj.weight, attn.out_proj.bias), (d, ),
                           layer.norm1.weight, layer.norm1.bias, layer.norm1.eps)
        ff = F.linear(F.relu(F.linear(out, layer.linear1.weight, layer.linear1.bias)), layer.linear2.weight,
                      layer.linear2.bias)
        tokens = F.layer_norm(out + ff, (d, ), layer.norm2.weight, layer.norm2.bias, layer.norm2.eps)
    return tokens[:, 0]


def _single_token_layer(layer: nn.TransformerEncoderLayer, x: torch.Tensor) -> torch.Tensor:
    """A post-norm ``nn.TransformerEncoderLayer`` (relu, eval) on a sequence of one token, ``(B, d)``."""
    attn = layer.self_attn
    d = x.shape[-1]
    value = F.linear(x, attn.in_proj_weight[2 * d:], attn.in_proj_bias[2 * d:])
    x = F.layer_norm(x + F.linear(value, attn.out_proj.weight, attn.out_proj.bias), (d, ), layer.norm1.weight,
                     layer.norm1.bias, layer.norm1.eps)
    ff = F.linear(F.relu(F.linear(x, layer.linear1.weight, layer.linear1.bias)), layer.linear2.weight,
                  layer.linear2.bias)
    return F.layer_norm(x + ff, (d, ), layer.norm2.weight, layer.norm2.bias, layer.norm2.eps)


class _FastNet:
    """HMINet's eval-mode forward through :func:`_single_token_layer` (callable like the net)."""

    def __init__(self, net: HMINet) -> None:
        self.net = net

    def __call__(self, x: torch.Tensor, beta: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        net = self.net
        batch_size = x.size(0)
        beta = beta.view(batch_size, 1)
        ctx = torch.cat([beta, torch.sin(beta), torch.cos(beta), context.view(batch_size, -1)], dim=-1)
        x = net.concat1_3(ctx, net.concat1_2(ctx, net.concat1(ctx, x)))
        x = x + net.pos_emb.pe[0]
        for layer in net.transformer_encoder.layers:
            x = _single_token_layer(layer, x)
        x = net.concat3(ctx, x) + net.pos_emb2.pe[0]
        for layer in net.transformer_encoder2.layers:
            x = _single_token_layer(layer, x)
        return net.linear(ctx, net.concat4(ctx, x))


def load_d2mp_weights(model: D2MP, checkpoint: str) -> None:
    """Load ``checkpoint`` into ``model`` (weights-only): a runner checkpoint of D2MP (``state_dict``), of a tracking
    model holding one (``tracker.motion.*``), or an official DiffMOT file (``ddpm``, ``module.`` prefixes)."""
    # the project's weights-only loader (numpy data allowed, code refused); imported here, at load time, because
    # vastmat.engine sits above the models
    from vastmat.engine.checkpoint import safe_load
    data = safe_load(checkpoint, map_location='cpu')
    state = data.get('state_dict', data.get('ddpm', data)) if isinstance(data, dict) else None
    if not isinstance(state, dict):
        raise KeyError(f'{checkpoint}: not a checkpoint (expected a dict with state_dict or ddpm)')
    own = set(model.state_dict())
    for prefix in ('', 'module.', 'tracker.motion.', 'model.'):
        picked = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix) and k[len(prefix):] in own}
        if picked:
            break
    missing = sorted(own - set(picked))
    if missing:
        raise KeyError(f'{checkpoint}: not a D2MP checkpoint; {len(missing)} of its {len(own)} weights are missing, '
                       f'e.g. {missing[:3]} (keys found: {list(state)[:3]})')
    model.load_state_dict(picked, strict=True)
    model.has_weights = True
