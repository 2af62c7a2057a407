from .det_metric import VastMATDetMetric, coco_detection_stats
from .dump_detections import DumpTrackingDetections
from .dump_features import DumpReIDFeatures  # noqa: F401  (registers the metric)
from .track_metric import VastMATMetric

__all__ = ['VastMATDetMetric', 'VastMATMetric', 'DumpTrackingDetections', 'coco_detection_stats']
