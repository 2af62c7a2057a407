"""The lowest layer: box conversions, pair geometry and the per-frame tracker input and output. Every other part
of VastMAT may import it; it imports none of them."""
from .bbox import (cxcywh_to_xyxy, ltwh_to_xyah, ltwh_to_xyxy, paired_iou, xyah_to_xyxy, xyxy_to_cxcywh,
                   xyxy_to_ltwh, xyxy_to_xyah)
from .pair_geometry import CDIST_MIN_PAIRS, PairGeometry, ops
from .tracking import FrameDetections, MissingTrackerInput, TrackingFrame, TrackOutput

__all__ = ['ltwh_to_xyxy', 'xyxy_to_ltwh', 'xyxy_to_xyah', 'ltwh_to_xyah', 'xyah_to_xyxy', 'xyxy_to_cxcywh', 'cxcywh_to_xyxy',
           'paired_iou', 'PairGeometry', 'ops',
           'CDIST_MIN_PAIRS', 'TrackingFrame', 'FrameDetections', 'TrackOutput', 'MissingTrackerInput']
