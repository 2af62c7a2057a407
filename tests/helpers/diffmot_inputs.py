"""Deterministic inputs for the DiffMOT golden tests (``tests/fixtures/diffmot_official``).

The golden files hold the output of the official DiffMOT tracker code (Kroery/DiffMOT ``tracker/DiffMOTtracker.py``
with its ``models/``), run outside the project on these inputs (see the fixtures' README.md); the port must give the
same tracks. Both sides get:

* D2MP weights from :func:`golden_d2mp_state` (a narrow D2MP: context 32, one layer per HMINet transformer; numpy
  ``default_rng(seed)``, no torch random state), loaded into the official ``D2MP`` module by its own state-dict keys;
* the diffusion noise: the official code draws from torch's global generator seeded with ``torch.manual_seed(0)`` at
  every video start, the port from its ``torch.Generator`` seeded 0 (the same stream);
* detections: ``AnimalTrack-10fps-sim/dets/<video>.txt`` (float64 values, image size from seqinfo.ini) and, for the
  appearance path, the same rows with feature columns from :func:`write_feature_dets`.
"""
from __future__ import annotations

import os
import os.path as osp
import zlib

import numpy as np

VIDEOS = ('chicken_3', 'deer_4', 'penguin_4')
ENCODER_DIM, TF_LAYER = 32, 1
FEATURE_DIM = 16


def golden_d2mp_state(model_state: dict, seed: int = 0, delta_scale: float = 0.01) -> dict:
    """Parameters for every floating entry of a D2MP state dict except the fixed buffers (positional encodings,
    the variance schedule), drawn in sorted-key order from ``np.random.default_rng(seed)``: matrices
    ``N(0, 1) / sqrt(fan_in)``, LayerNorm weights ``1 + 0.05 N``, other vectors ``0.05 N``; the last MFL
    (``diffusion.net.linear``, whose output is ``-delta``) is scaled by ``delta_scale`` so that predicted moves are
    a few pixels. Returns a state dict of float32 tensors (the buffers copied from ``model_state``)."""
    import torch
    rng = np.random.default_rng(seed)
    out = {}
    for key in sorted(model_state):
        value = model_state[key]
        if key.endswith('.pe') or '.var_sched.' in key:
            out[key] = value.clone()
            continue
        shape = tuple(value.shape)
        draw = rng.standard_normal(shape)
        if len(shape) >= 2:
            array = draw / np.sqrt(shape[-1])
        elif '.norm' in key and key.endswith('.weight'):
            array = 1.0 + 0.05 * draw
        else:
            array = 0.05 * draw
        if key.startswith('diffusion.net.linear.'):
            array = array * delta_scale
        out[key] = torch.from_numpy(array.astype(np.float32))
    return out


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Plain IoU of ltwh boxes, (n, m)."""
    ax2, ay2, bx2, by2 = a[:, 0] + a[:, 2], a[:, 1] + a[:, 3], b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]
    iw = np.clip(np.minimum(ax2[:, None], bx2) - np.maximum(a[:, None, 0], b[:, 0]), 0, None)
    ih = np.clip(np.minimum(ay2[:, None], by2) - np.maximum(a[:, None, 1], b[:, 1]), 0, None)
    inter = iw * ih
    return inter / (a[:, 2:].prod(1)[:, None] + b[:, 2:].prod(1) - inter)


def write_feature_dets(data_root: str, out_dir: str, videos=VIDEOS) -> str:
    """``out_dir/<video>.txt``: the rows of ``data_root/dets/<video>.txt`` (text copied) plus ``FEATURE_DIM``
    feature columns (``%.6f``), a simulated appearance: a detection whose best plain IoU with a ground-truth box of
    its frame (``data_root/gt/<video>/gt/gt.txt``) is >= 0.5 gets ``base(id) + 0.5 noise``, others ``noise``, every
    vector L2-normalised. ``base(id) = default_rng(crc32('<video>:<id>')).standard_normal(FEATURE_DIM)``; the noise
    rows of a frame come from ``default_rng(crc32('<video>:<frame>'))``, one row per detection in file order."""
    os.makedirs(out_dir, exist_ok=True)
    for video in videos:
        lines = [ln.strip() for ln in open(osp.join(data_root, 'dets', f'{video}.txt')) if ln.strip()]
        rows = np.array([[float(x) for x in ln.split(',')[:7]] for ln in lines])
        gt = np.loadtxt(osp.join(data_root, 'gt', video, 'gt', 'gt.txt'), delimiter=',', ndmin=2)
        out = []
        for frame in np.unique(rows[:, 0]):
            index = np.flatnonzero(rows[:, 0] == frame)
            noise = np.random.default_rng(zlib.crc32(f'{video}:{int(frame)}'.encode())).standard_normal(
                (len(index), FEATURE_DIM))
            truth = gt[gt[:, 0] == frame]
            iou = _iou(rows[index, 2:6], truth[:, 2:6]) if len(truth) else np.zeros((len(index), 0))
            for k, i in enumerate(index):
                vector = noise[k]
                if iou.shape[1] and iou[k].max() >= 0.5:
                    gt_id = int(truth[int(iou[k].argmax()), 1])
                    base = np.random.default_rng(zlib.crc32(f'{video}:{gt_id}'.encode())).standard_normal(FEATURE_DIM)
                    vector = base + 0.5 * vector
                vector = vector / np.linalg.norm(vector)
                out.append((i, lines[i] + ',' + ','.join(f'{v:.6f}' for v in vector)))
        with open(osp.join(out_dir, f'{video}.txt'), 'w') as f:
            f.write('\n'.join(line for _, line in sorted(out)) + '\n')
    return out_dir
