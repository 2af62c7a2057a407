"""Whole MOT models: a detector or cached detections feeding an online tracker."""
from .data_preprocessor import TrackingDataPreprocessor
from .tracking_by_detection import TrackingByDetection

__all__ = ['TrackingDataPreprocessor', 'TrackingByDetection']
