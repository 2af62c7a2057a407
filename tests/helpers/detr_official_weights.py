"""Deterministic weights in the official Deformable DETR naming (fundamentalvision/Deformable-DETR and the codes built
on it: MOTIP, TransTrack), from a seed: both sides of a golden test use them (the official model in a scratch folder
loads them as they are; ours through :func:`vastmat.models.mot.official_detr.official_deformable_detr_state_dict`).
No weights are stored: a fixture keeps the official key -> shape list (JSON) and the seed."""
from __future__ import annotations

import json
import math

import torch


DRAWS = {'float32': torch.float32, 'float64': torch.float64}


def official_detr_weights(shapes: dict[str, list[int]], seed: int = 0,
                          draw: str = 'float32') -> dict[str, torch.Tensor]:
    """Float32 tensors for ``shapes`` (official key -> shape), drawn in sorted-key order from one
    ``torch.Generator().manual_seed(seed)``, scaled by the key's role so that a random ResNet-50 and DETR give finite,
    moderate outputs: ``running_var`` 0.5 + U(0, 1); ``running_mean`` and biases 0.1 N(0, 1); norm weights (BN,
    GN, LayerNorm: 1-d ``weight`` of a module named ``bn*``, ``norm*``, ``downsample.1`` or ``input_proj.i.1``)
    1 + 0.1 N(0, 1), the last BN of a bottleneck (``bn3``) 0.2 + 0.05 N(0, 1); embeddings (``level_embed``,
    ``query_embed``) N(0, 1); other weights N(0, 1) / sqrt(fan_in).

    ``draw``: the dtype of the draws (``torch.randn`` / ``torch.rand``) and of the scaling. ``'float32'`` (the
    values of TransTrack's golden fixture and of MOTIP's converter test) depends on the CPU: torch's float32 normal
    sampler takes a vectorised path under AVX2 / AVX-512 and a scalar one under ``ATEN_CPU_CAPABILITY=default``, and
    the two differ in the last bits of about 4 draws in 10. ``'float64'`` draws and scales in float64, then rounds
    to float32: the same values under every capability (MOTIP's training golden)."""
    if draw not in DRAWS:
        raise ValueError(f"official_detr_weights: draw must be one of {sorted(DRAWS)}, got {draw!r}")
    dtype = DRAWS[draw]
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for key in sorted(shapes):
        shape = [int(s) for s in shapes[key]]
        x = torch.randn(shape, generator=gen, dtype=dtype)
        name = key.rsplit('.', 1)[-1]
        module = key.rsplit('.', 2)[-2] if key.count('.') >= 1 else ''
        if name == 'running_var':
            x = 0.5 + torch.rand(shape, generator=gen, dtype=dtype)
        elif name in ('running_mean', 'bias') or name.endswith('_bias'):
            x = 0.1 * x
        elif len(shape) == 1 and name == 'weight':
            x = (0.2 + 0.05 * x) if module == 'bn3' else 1.0 + 0.1 * x
        elif 'level_embed' in key or 'query_embed' in key:
            pass
        else:
            fan_in = math.prod(shape[1:]) if len(shape) > 1 else 1
            x = x / math.sqrt(fan_in)
        out[key] = x.to(torch.float32).contiguous()
    return out


def read_shapes(path: str) -> dict[str, list[int]]:
    """An official key -> shape list (JSON) written by a fixture's driver."""
    with open(path) as f:
        shapes = json.load(f)
    if not isinstance(shapes, dict) or not shapes:
        raise ValueError(f'{path}: expected a JSON object of official key -> shape list')
    return shapes
