from .det_metric import VastMATDetMetric, coco_detection_stats
from .dump_detections import DumpTrackingDetections
from .track_metric import VastMATMetric

__all__ = ['VastMATDetMetric', 'VastMATMetric', 'DumpTrackingDetections', 'coco_detection_stats']
