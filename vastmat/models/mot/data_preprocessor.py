"""Data preprocessor of tracking models that may run without images (cached detections)."""
from __future__ import annotations

from mmdet.models.data_preprocessors import TrackDataPreprocessor

from vastmat.registry import MODELS


@MODELS.register_module()
class TrackingDataPreprocessor(TrackDataPreprocessor):
    """mmdet's ``TrackDataPreprocessor``; when the pipeline loaded no image (``--det-root``), it passes the data
    samples through with ``inputs=None``."""

    def forward(self, data: dict, training: bool = False) -> dict:
        if data.get('inputs') is None or len(data['inputs']) == 0:
            return dict(inputs=None, data_samples=self.cast_data(data['data_samples']))
        return super().forward(data, training)
