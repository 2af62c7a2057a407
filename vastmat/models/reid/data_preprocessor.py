"""The data preprocessor of VastMAT's ReID models."""
from __future__ import annotations

import torch
from mmdet.models.data_preprocessors import ReIDDataPreprocessor

from vastmat.registry import MODELS


@MODELS.register_module()
class VastMATReIDDataPreprocessor(ReIDDataPreprocessor):
    """mmdet's ``ReIDDataPreprocessor`` (BGR to RGB, normalisation, labels) with the crops of all samples
    concatenated into one ``(N, C, H, W)`` batch, labels in the same order (as ``LinearReIDHead`` concatenates them).

    mmdet's version stacks the samples (each ``(n, C, H, W)``: n = P x K for a triplet sample, 1 otherwise) into
    ``(B, n, C, H, W)``, which ``BaseReID`` accepts only for B = 1, so testing takes one crop per iteration; and it
    decides on BGR to RGB from the size of a sample's first axis (n), not its channels, so ``to_rgb`` never applies.
    Here a test batch of B crops is one forward pass and ``to_rgb`` converts. Samples may be given without data
    samples (feature extraction), then no labels are handled.
    """

    def forward(self, data: dict, training: bool = False) -> dict:
        inputs = data['inputs']
        if isinstance(inputs, (list, tuple)):
            shapes = sorted({tuple(x.shape[-3:]) for x in inputs})
            if len(shapes) > 1:
                raise ValueError(f'VastMATReIDDataPreprocessor: crops of different sizes {shapes} (C, H, W) in one '
                                 "batch: resize them to one size in the pipeline (Resize with keep_ratio=False)")
            inputs = torch.cat([x if x.dim() == 4 else x[None] for x in inputs]) if inputs else inputs
        samples = data.get('data_samples')
        if samples is None:
            from mmdet.structures import ReIDDataSample
            out = super().forward(dict(inputs=inputs, data_samples=[ReIDDataSample()]), training)
            return dict(inputs=out['inputs'], data_samples=None)
        return super().forward(dict(data, inputs=inputs), training)
