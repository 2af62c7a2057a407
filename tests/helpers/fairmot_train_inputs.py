"""Deterministic inputs of the FairMOT training golden test (``tests/fixtures/fairmot_train_official``).

The fixture holds outputs of the official FairMOT training code (ifzhang/FairMOT ``src/lib``), run outside the project
on these inputs (see the fixture's README.md). Both sides get:

* the full-size DLA-34 network (the official one is fixed size) with the weights of :func:`official_weights`, drawn
  from a seed in the OFFICIAL names (``base.*``, ``dla_up.*``, ``ida_up.*``, ``hm.*`` ...; the key -> shape list is
  ``tests/fixtures/fairmot_official/dla34_state_dict_shapes.json``), and the identity classifier and uncertainty
  weights of :func:`loss_weights` (official ``MotLoss`` names ``classifier.*``, ``s_det``, ``s_id``);
* a batch of four tiny 64x96 images (:func:`train_batch`) with boxes in input pixels and identities, from which the
  official ``JointDataset.__getitem__`` and our ``FairMOTHead.get_targets`` build the targets.

:func:`official_weights` with ``centernet=True`` gives a CenterNet COCO DLA-34 (``ctdet_coco_dla_2x.pth`` names and
shapes: ``hm`` 80 classes, ``wh`` 2 channels, no ``id`` head), the starting point of the official experiments.
"""
from __future__ import annotations

import json
import math
import os.path as osp
from collections import OrderedDict

import numpy as np
import torch

SHAPES = osp.join(osp.dirname(osp.dirname(osp.abspath(__file__))), 'fixtures', 'fairmot_official',
                  'dla34_state_dict_shapes.json')
NUM_IDENTITIES = 6  # nID of the golden batch: the identity classifier Linear(128, 6)
REID_DIM = 128
HEIGHT, WIDTH = 64, 96  # network input (multiples of 32): a 16x24 output map
BATCH = 4  # two chunks of two images in the per-GPU case (official 2 GPUs)
CHUNKS = 2
CENTERNET_CLASSES = 80  # COCO
WEIGHT_SEED, LOSS_SEED, IMAGE_SEED = 0, 1, 2

# per image: boxes x1 y1 x2 y2 (input pixels) and identities (-1: a box without identity, no ID loss). Centres are
# kept off the integer grid of the stride-4 map; one box's centre lies beyond the right border (clipped into the map).
# The two chunks of two images hold 7 and 3 boxes: per-chunk normalisation differs clearly from one over the batch
BOXES = (
    ([[10.3, 6.1, 30.9, 40.7], [50.2, 20.6, 71.4, 58.2], [80.5, 2.3, 110.1, 30.9]], [0, 1, 2]),
    ([[40.6, 10.2, 56.2, 26.6], [45.1, 30.3, 90.7, 63.5], [5.5, 40.1, 25.3, 61.9], [60.3, 1.1, 77.9, 15.7]],
     [1, 4, 5, 0]),
    ([[2.2, 3.4, 18.6, 20.2], [30.1, 30.7, 60.3, 62.1]], [3, -1]),
    ([[20.4, 15.2, 70.2, 50.6]], [2]),
)


def shapes(centernet: bool = False) -> "OrderedDict[str, list[int]]":
    """Official FairMOT (or CenterNet COCO) DLA-34 names -> shapes, without ``base.fc`` (unused by the network)."""
    with open(SHAPES) as f:
        table = json.load(f)['state_dict']
    out = OrderedDict((k, v) for k, v in table.items() if not k.startswith('base.fc.'))
    if centernet:
        out = OrderedDict((k, v) for k, v in out.items() if not k.startswith('id.'))
        out['hm.2.weight'], out['hm.2.bias'] = [CENTERNET_CLASSES, 256, 1, 1], [CENTERNET_CLASSES]
        out['wh.2.weight'], out['wh.2.bias'] = [2, 256, 1, 1], [2]
    return out


def official_weights(seed: int = WEIGHT_SEED, centernet: bool = False,
                     float64_draws: bool = False) -> "OrderedDict[str, torch.Tensor]":
    """Weights in the official names, drawn from ``seed`` so that activations stay of order one: convolutions
    ``N(0, 1 / fan_in)``, DCNv2 offset/mask convs ``N(0, 0.25 / fan_in)`` (offsets of about half a pixel), BN weights
    ``1 + N(0, 0.1)``, biases and running means ``N(0, 0.1)``, running variances ``1 + U(0, 0.1)``, the heatmap bias
    ``-2.19 + N(0, 0.1)`` (the official prior); float32.

    ``float64_draws``: drawn and scaled in float64, then rounded to float32 (other values than the float32 draws).
    These are the same bits under ``ATEN_CPU_CAPABILITY`` default, avx2 and avx512; the float32 draws are not (torch
    2.14.1: 39% of ``torch.randn``'s float32 draws differ between default and avx2 / avx512, by up to 3e-3 relative;
    its float64 draws and ``torch.rand`` do not). The float64 training step of the golden test needs this: the
    float32 draws' differences change its float64 gradients by up to 4% of a parameter's largest entry (seed 2)."""
    generator = torch.Generator().manual_seed(seed)
    dtype = torch.float64 if float64_draws else torch.float32
    out = OrderedDict()
    for name, shape in shapes(centernet).items():
        if name.endswith('num_batches_tracked'):
            out[name] = torch.tensor(0, dtype=torch.long)
            continue
        normal = torch.randn(shape, generator=generator, dtype=dtype)
        if name.endswith('running_var'):
            value = 1 + 0.1 * torch.rand(shape, generator=generator, dtype=dtype)
        elif len(shape) == 4:  # conv, transposed conv (depthwise up_*: fan_in = kernel area)
            fan_in = shape[1] * shape[2] * shape[3]
            scale = 0.5 if '.conv_offset_mask.' in name else 1.0
            value = normal * scale / math.sqrt(fan_in)
        elif name == 'hm.2.bias':
            value = -2.19 + 0.1 * normal
        elif name.endswith('.weight') and len(shape) == 1:  # only BatchNorm weights are 1-D here
            value = 1 + 0.1 * normal
        else:
            value = 0.1 * normal
        out[name] = value.float()
    return out


def loss_weights(seed: int = LOSS_SEED) -> "OrderedDict[str, torch.Tensor]":
    """The official ``MotLoss`` parameters: ``classifier`` (Linear(128, NUM_IDENTITIES), PyTorch's default init
    range), ``s_det`` and ``s_id`` moved off their initial -1.85 / -1.05 so that their gradients are not trivial."""
    generator = torch.Generator().manual_seed(seed)
    bound = 1 / math.sqrt(REID_DIM)
    return OrderedDict(
        s_det=torch.tensor([-1.7]), s_id=torch.tensor([-1.2]),
        **{'classifier.weight': (torch.rand(NUM_IDENTITIES, REID_DIM, generator=generator) * 2 - 1) * bound,
           'classifier.bias': (torch.rand(NUM_IDENTITIES, generator=generator) * 2 - 1) * bound})


def train_batch() -> tuple[torch.Tensor, list[tuple[np.ndarray, np.ndarray]]]:
    """``images (BATCH, 3, HEIGHT, WIDTH)`` in [0, 1] (the official input: RGB / 255, no mean / std) and per image
    ``(boxes (n, 4) float64 x1 y1 x2 y2 in input pixels, identities (n,) int64)``."""
    generator = torch.Generator().manual_seed(IMAGE_SEED)
    images = torch.rand(BATCH, 3, HEIGHT, WIDTH, generator=generator)
    annotations = [(np.asarray(b, np.float64), np.asarray(i, np.int64)) for b, i in BOXES]
    return images, annotations


def official_labels(boxes: np.ndarray, identities: np.ndarray) -> np.ndarray:
    """The official label rows ``class, identity, cx, cy, w, h`` (normalised by the input size, float32 as
    ``np.loadtxt(..., dtype=np.float32)`` reads them) that ``JointDataset.get_data`` returns for these boxes."""
    labels = np.zeros((len(boxes), 6), np.float32)
    labels[:, 1] = identities
    labels[:, 2] = (boxes[:, 0] + boxes[:, 2]) / 2 / WIDTH
    labels[:, 3] = (boxes[:, 1] + boxes[:, 3]) / 2 / HEIGHT
    labels[:, 4] = (boxes[:, 2] - boxes[:, 0]) / WIDTH
    labels[:, 5] = (boxes[:, 3] - boxes[:, 1]) / HEIGHT
    return labels


def fingerprint(value: torch.Tensor, samples: int = 32) -> np.ndarray:
    """A small summary of a large tensor for the fixture: ``[sum, L2 norm, sum(x * sin(0.37 j + 0.1)), then
    `samples` entries at evenly spaced flat positions]`` (all entries when fewer), float64."""
    flat = value.detach().double().flatten()
    n = flat.numel()
    probe = torch.sin(torch.arange(n, dtype=torch.float64) * 0.37 + 0.1)
    picks = torch.from_numpy(np.unique(np.linspace(0, n - 1, min(n, samples)).round().astype(np.int64)))
    head = torch.stack([flat.sum(), flat.norm(), (flat * probe).sum()])
    return torch.cat([head, flat[picks]]).numpy()


# letterbox cases: source height, width -> network input height, width (both pad directions, odd pads)
LETTERBOX_CASES = ((37, 53, 32, 48), (50, 21, 64, 96), (29, 91, 64, 96), (45, 80, 36, 64))


# label rows (class, identity, cx, cy, w, h normalised by the source image) of every letterbox image
LETTERBOX_LABELS = np.array([[0, 5, 0.3, 0.4, 0.2, 0.3], [0, -1, 0.7, 0.6, 0.25, 0.5]], np.float32)


def letterbox_images() -> list[np.ndarray]:
    """Random BGR uint8 images of the ``LETTERBOX_CASES`` source sizes (``np.random.default_rng(0)``)."""
    generator = np.random.default_rng(0)
    return [generator.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w, _, _ in LETTERBOX_CASES]


# the official training augmentation (JointDataset.get_data with augment=True: HSV, letterbox, random affine, flip) of
# one image and its labels, after random.seed(seed) for each of these seeds
AUGMENT_SEEDS = (0, 1, 2, 3)
AUGMENT_SOURCE = (45, 80)  # source height, width (letterboxed to HEIGHT x WIDTH)
AUGMENT_LABELS = np.array([[0, 0, 0.3, 0.4, 0.3, 0.5], [0, 1, 0.7, 0.6, 0.35, 0.6], [0, 2, 0.5, 0.15, 0.07, 0.12]],
                          np.float32)


def augment_image() -> np.ndarray:
    """A smooth BGR uint8 image of ``AUGMENT_SOURCE`` (gradients and a checker, so that HSV and warps show)."""
    h, w = AUGMENT_SOURCE
    y, x = np.mgrid[0:h, 0:w]
    image = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), ((x // 8 + y // 8) % 2) * 200 + 30], axis=2)
    return image.astype(np.uint8)
