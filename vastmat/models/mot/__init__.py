"""Whole MOT models: a detector or cached detections feeding an online tracker."""
from .data_preprocessor import TrackingDataPreprocessor
from .motip import MOTIP
from .tracking_by_detection import TrackingByDetection
from .transtrack import TransTrack, TransTrackDeformableDETR, random_shift, shift_boxes

__all__ = ['MOTIP', 'TrackingDataPreprocessor', 'TrackingByDetection', 'TransTrack', 'TransTrackDeformableDETR',
           'random_shift', 'shift_boxes']
