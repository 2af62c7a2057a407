"""Whole MOT models: a detector or cached detections feeding an online tracker."""
from .cached_detections import CachedDetections
from .data_preprocessor import TrackingDataPreprocessor
from .tracking_by_detection import CACHED_DETS_PIPELINE, TrackingByDetection

__all__ = ['CachedDetections', 'TrackingDataPreprocessor', 'TrackingByDetection', 'CACHED_DETS_PIPELINE']
