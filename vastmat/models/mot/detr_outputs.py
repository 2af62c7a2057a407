"""DETR query outputs as tracker detections (shared by TransTrack and MOTIP)."""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from vastmat.structures.tracking import FrameDetections


def queries_to_detections(logits: Tensor, boxes: Tensor, ori_shape: tuple[int, int],
                          features: Tensor | None = None) -> FrameDetections:
    """Every query of one image as a detection, in query order: the score is the largest class ``sigmoid`` (one
    class, ``animal``, in VastMAT), the normalised ``cx, cy, w, h`` box times the original frame size (the official
    DETR ``PostProcess``: no clipping, no top-k), as ``x1 y1 x2 y2``; ``features`` (e.g. the last decoder layer's
    outputs ``hs[-1]``) ride along row by row. Sizes are kept above 1e-9 of the frame (a box of size 0 would be
    dropped by the frame's checks and break the query index identity a tracker may rely on).

    Args:
        logits: ``(num_queries, num_classes)`` class logits.
        boxes: ``(num_queries, 4)`` normalised ``cx, cy, w, h``.
        ori_shape: the original frame's ``(height, width)``.
        features: ``(num_queries, C)`` or None.
    """
    height, width = ori_shape[:2]
    box = boxes.detach().cpu().double()
    size = box[:, 2:].clamp(min=1e-9)
    xyxy = torch.cat([box[:, :2] - size / 2, box[:, :2] + size / 2], dim=1) * box.new_tensor([width, height] * 2)
    scores = logits.detach().sigmoid().max(dim=-1).values.cpu().double()
    feats = None if features is None else features.detach().cpu().double().numpy()
    return FrameDetections(xyxy.numpy(), scores.numpy(), np.zeros(len(scores), np.int64), feats)
