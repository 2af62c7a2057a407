"""Deterministic inputs for the D2MP training golden test (``tests/fixtures/d2mp_train_official``).

The fixture holds the output of one training step of the official DiffMOT code (Kroery/DiffMOT ``models/`` and the
optimizer of ``diffmot.py``), run outside the project on these inputs (see the fixture's README.md); the port must
give the same loss, gradients and parameters after the step. Both sides get:

* the narrow D2MP of :mod:`helpers.diffmot_inputs` (``ENCODER_DIM``, ``TF_LAYER``) with the weights of
  :func:`d2mp_train_state` (:func:`helpers.diffmot_inputs.golden_d2mp_state` with the last MFL unscaled, so that
  the loss is not tiny and both branches of the smooth L1 occur);
* the batch of :func:`d2mp_train_batch`: conditions and targets built the way the official ``DiffMOTDataset`` builds
  them from a track's boxes, and the diffusion times ``t`` and noise of the loss.
"""
from __future__ import annotations

import torch

from helpers.diffmot_inputs import ENCODER_DIM, TF_LAYER, golden_d2mp_state  # noqa: F401 (re-exported)

BATCH = 8
EPS = 0.001  # official `eps` (configs/dancetrack.yaml), the D2MP default
INTERVAL = 5  # official `interval`: 5 conditions per sample
DROPOUT_SEED = 0  # torch.manual_seed just before the forward of the 'given' case (dropout masks)
DRAWN_SEED = 1  # torch.manual_seed just before the forward of the 'drawn' case (dropout, t and noise)
DELTA_SCALE = 1.0  # golden_d2mp_state's scale of the last MFL (its default 0.01 suits tracking, not a loss)


def d2mp_train_state(model_state: dict) -> dict:
    """The weights of both sides: ``golden_d2mp_state(model_state, seed=0, delta_scale=DELTA_SCALE)``."""
    return golden_d2mp_state(model_state, seed=0, delta_scale=DELTA_SCALE)


def d2mp_train_batch(batch: int = BATCH, seed: int = 0, eps: float = EPS) -> dict:
    """A training batch from ``torch.Generator().manual_seed(seed)`` (float32), in this order of draws:

    * per track, ``INTERVAL + 2`` normalised boxes ``[cx, cy, w, h]``: a start ``U(0.2, 0.8)`` (centre),
      ``U(0.03, 0.2)`` (w), ``U(0.05, 0.3)`` (h), a velocity ``N(0, 0.01)`` (centre) / ``N(0, 0.002)`` (size) and a
      jitter ``N(0, 0.002)`` per box; ``box_k = start + k velocity + jitter_k``;
    * ``conditions (B, 5, 8)``: as the official dataset, ``concat(boxes[1:6], boxes[1:6] - boxes[0:5])``;
      ``deltas (B, 4)``: ``boxes[6] - boxes[5]``;
    * ``u (B,)``: ``U(0, 1)``, what the official ``torch.rand(B)`` returns; ``t = u * (1. - eps) + eps`` (the
      official expression, so the same float32 values);
    * ``noise (B, 4)``: ``N(0, 1)``, what the official ``torch.randn_like(x_0)`` returns.
    """
    g = torch.Generator().manual_seed(seed)
    n = INTERVAL + 2
    low = torch.tensor([0.2, 0.2, 0.03, 0.05])
    high = torch.tensor([0.8, 0.8, 0.2, 0.3])
    start = low + (high - low) * torch.rand(batch, 1, 4, generator=g)
    velocity = torch.randn(batch, 1, 4, generator=g) * torch.tensor([0.01, 0.01, 0.002, 0.002])
    jitter = torch.randn(batch, n, 4, generator=g) * 0.002
    boxes = start + torch.arange(n, dtype=torch.float32).reshape(1, n, 1) * velocity + jitter
    moves = boxes[:, 1:] - boxes[:, :-1]
    conditions = torch.cat([boxes[:, 1:INTERVAL + 1], moves[:, :INTERVAL]], dim=2)
    deltas = boxes[:, INTERVAL + 1] - boxes[:, INTERVAL]
    u = torch.rand(batch, generator=g)
    noise = torch.randn(batch, 4, generator=g)
    return dict(conditions=conditions, deltas=deltas, u=u, t=u * (1. - eps) + eps, noise=noise)
