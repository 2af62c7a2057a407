from .det_metric import VastMATDetMetric, coco_detection_stats
from .track_metric import VastMATMetric

__all__ = ['VastMATDetMetric', 'VastMATMetric', 'coco_detection_stats']
