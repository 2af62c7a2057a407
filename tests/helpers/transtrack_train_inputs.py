"""The inputs of TransTrack's one-batch golden training test (tests/fixtures/transtrack_train_official): a narrow
network's settings, its weights in the OFFICIAL naming (PeizeSun/TransTrack ``models/deformable_detrtrack_train.py``)
made from a seed (``helpers.detr_official_weights``), the batch, and the values that the random draws of a training
step return.

Both sides use this module: ``make_golden.py`` loads :func:`official_state` into the official model, the test loads it
through the converter (``vastmat.models.mot.transtrack_conversion``) into ours.
"""
from __future__ import annotations

import json
import os.path as osp
import zlib

import torch

from .detr_official_weights import official_detr_weights

FIXTURE_DIR = osp.join(osp.dirname(osp.dirname(osp.abspath(__file__))), 'fixtures', 'transtrack_train_official')
SHAPES = osp.join(FIXTURE_DIR, 'official_shapes.json')

# the narrow network (main_track.py arguments; the official run: 256, 1024, 6, 6, 500, dropout 0.1). ResNet-50 is
# the only backbone the official code builds with 4 levels (resnet18 / 34 are refused); hidden_dim 64 because the
# official input projections use GroupNorm(32, hidden_dim): 64 gives groups of two channels, which do not absorb
# the projections' conv bias (groups of one would: its gradient would be zero).
HIDDEN_DIM, FFN_DIM, NHEADS, ENC_LAYERS, DEC_LAYERS, NUM_QUERIES, NUM_POINTS = 64, 128, 8, 1, 2, 12, 4
OFFICIAL_ARGS = ['--with_box_refine', '--hidden_dim', str(HIDDEN_DIM), '--dim_feedforward', str(FFN_DIM),
                 '--nheads', str(NHEADS), '--enc_layers', str(ENC_LAYERS), '--dec_layers', str(DEC_LAYERS),
                 '--num_queries', str(NUM_QUERIES), '--dropout', '0.0', '--dataset_file', 'mot', '--device', 'cpu']
SEED = 0
BATCH_SHAPE = (2, 3, 64, 96)  # padded batch; image 1 is 48 x 80 (bottom / right padding), image 0 fills it
IMAGE_SIZES = ((64, 96), (48, 80))  # (h, w) of each image before padding
# ground truth in pixels of each (unpadded) image, x1 y1 x2 y2; one class
GT_BOXES = (((4., 6., 30., 40.), (50., 10., 90., 60.), (20., 30., 44., 62.)),
            ((10., 8., 36., 30.), (40., 20., 70., 46.)))

# What the official training step's random draws return (it draws torch.rand(bs), torch.randn(bs), torch.rand(bs),
# torch.randn(bs) per randshift: x shift size, x sign, y shift size, y sign; two randshifts (the previous frame, then
# its previous frame), then torch.randn(1) > 0 for the track branch). Shifts: int(100 * u) px, sign + where the normal
# is > 0: previous frame (+7, -5) / (-3, +11) px, its previous frame (-12, +4) / (+9, -2) px.
SHIFT_DRAWS = ([0.075, 0.031], [0.5, -0.5], [0.055, 0.118], [-0.5, 0.5],
               [0.125, 0.092], [-0.5, 0.5], [0.044, 0.021], [0.5, -0.5])
BRANCH_NORMAL = {'track': 1.0, 'detect': -1.0}  # official: torch.randn(1).item() > 0.0 trains the track decoder
BRANCH_UNIFORM = {'track': 0.25, 'detect': 0.75}  # ours: torch.rand(()).item() < track_prob (0.5)


def official_shapes() -> dict[str, list[int]]:
    """Official state-dict key -> shape of the narrow training model (recorded by make_golden.py)."""
    with open(SHAPES) as f:
        return json.load(f)['narrow']


def official_state(seed: int = SEED) -> dict[str, torch.Tensor]:
    """The narrow model's weights in the official naming, made from ``seed`` by the shared DETR weight rule; the
    box-refinement aliases ``transformer.decoder.bbox_embed.*`` (the same modules as ``bbox_embed.*``) get the values
    of ``bbox_embed.*``, as in a saved official state dict."""
    state = official_detr_weights(official_shapes(), seed)
    for key in state:
        if key.startswith('transformer.decoder.bbox_embed.'):
            state[key] = state[key[len('transformer.decoder.'):]]
    return state


def train_batch() -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The padded batch ``(2, 3, 64, 96)`` of normalised images (zero padding) and each image's boxes."""
    g = torch.Generator().manual_seed(SEED)
    images = torch.zeros(BATCH_SHAPE)
    for i, (h, w) in enumerate(IMAGE_SIZES):
        images[i, :, :h, :w] = torch.randn(3, h, w, generator=g)
    return images, [torch.tensor(b, dtype=torch.float32) for b in GT_BOXES]


def sketch_indices(name: str, numel: int, count: int = 64) -> torch.Tensor:
    """``count`` positions of a flattened tensor of ``numel`` values, drawn from a generator seeded by its name."""
    g = torch.Generator().manual_seed(zlib.crc32(f'sketch:{name}'.encode()))
    return torch.randint(numel, (count,), generator=g)


def sketch(name: str, t: torch.Tensor) -> torch.Tensor:
    """A large tensor summarised (float64): sum, sum of |x|, L2 norm, the dot product with a +-1 vector seeded by its
    name, then 64 of its values at :func:`sketch_indices`."""
    flat = t.detach().flatten().double()
    g = torch.Generator().manual_seed(zlib.crc32(f'sign:{name}'.encode()))
    signs = torch.randint(2, (flat.numel(),), generator=g).double() * 2 - 1
    head = torch.stack([flat.sum(), flat.abs().sum(), flat.norm(), flat @ signs])
    return torch.cat([head, flat[sketch_indices(name, flat.numel())]])


FULL_LIMIT = 2048  # tensors up to this many values are stored whole, larger ones as sketch()
