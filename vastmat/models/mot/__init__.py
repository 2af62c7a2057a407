"""Whole MOT models: a detector or cached detections feeding an online tracker."""
from .data_preprocessor import TrackingDataPreprocessor
from .tracking_by_detection import TrackingByDetection
from .transtrack import TransTrack, TransTrackDeformableDETR, random_shift, shift_boxes

__all__ = ['TrackingDataPreprocessor', 'TrackingByDetection', 'TransTrack', 'TransTrackDeformableDETR', 'random_shift',
           'shift_boxes']
