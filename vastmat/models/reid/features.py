"""Appearance features of boxes in a frame, without a dataset or runner: the same crops, resizing and
normalisation as the ReID configs' test pipeline (``LoadCachedFrame``, ``CropReIDInstance``, ``Resize`` with
``keep_ratio=False``), so they equal what ``tools/test.py REID_CONFIG --dump-feats`` writes."""
from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from mmdet.structures import ReIDDataSample

from vastmat.datasets.reid_crops import crop_box


@torch.no_grad()
def reid_features(model: Any, image: np.ndarray, bboxes: np.ndarray, input_size: tuple[int, int],
                  batch_size: int = 256) -> np.ndarray:
    """L2-normalised features ``(k, d)`` float64 of the boxes ``(k, 4)`` (x1 y1 x2 y2, pixels of ``image``).

    Args:
        model: a ReID model in eval mode (mmdet ``BaseReID``): its ``data_preprocessor`` (BGR to RGB,
            normalisation), then ``model(inputs, mode='tensor')``.
        image: the frame, ``(H, W, 3)`` BGR uint8 as ``mmcv.imread`` gives it.
        input_size: ``(height, width)`` of the crops, the config's ``Resize`` scale reversed (384, 128 for
            ``scale=(128, 384)``).
    """
    bboxes = np.asarray(bboxes, np.float64).reshape(-1, 4)
    height, width = input_size
    # cv2's bilinear resize, which mmcv's imresize (mmdet's Resize) calls
    crops = [cv2.resize(crop_box(image, box), (width, height), interpolation=cv2.INTER_LINEAR) for box in bboxes]
    features = []
    for start in range(0, len(crops), batch_size):
        batch = torch.from_numpy(np.stack(crops[start:start + batch_size]).transpose(0, 3, 1, 2).copy())
        samples = [ReIDDataSample() for _ in range(len(batch))]
        inputs = model.data_preprocessor(dict(inputs=batch, data_samples=samples), False)['inputs']
        out = model(inputs, mode='tensor')
        out = out[-1] if isinstance(out, (tuple, list)) else out
        features.append(F.normalize(out.detach().cpu().double(), dim=1).numpy())
    return np.concatenate(features) if features else np.zeros((0, 0))
