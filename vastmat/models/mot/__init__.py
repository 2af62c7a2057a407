"""Whole MOT models: a detector or cached detections feeding an online tracker."""
from .data_preprocessor import TrackingDataPreprocessor
from .motip import MOTIP
from .official_detr import COCO_CATEGORY_IDS, official_deformable_detr_state_dict, official_one_class_head
from .tracking_by_detection import TrackingByDetection
from .transtrack import TransTrack, TransTrackDeformableDETR, random_shift, shift_boxes

__all__ = ['COCO_CATEGORY_IDS', 'MOTIP', 'TrackingDataPreprocessor', 'TrackingByDetection', 'TransTrack',
           'TransTrackDeformableDETR', 'official_deformable_detr_state_dict', 'official_one_class_head',
           'random_shift', 'shift_boxes']
