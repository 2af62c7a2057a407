"""Appearance (ReID) models: mmdet's ``BaseReID`` (ResNet, ``GlobalAveragePooling``, ``LinearReIDHead`` with
triplet and cross-entropy losses) with a data preprocessor that batches crops, and feature extraction on frames."""
from .data_preprocessor import VastMATReIDDataPreprocessor
from .features import reid_features

__all__ = ['VastMATReIDDataPreprocessor', 'reid_features']
