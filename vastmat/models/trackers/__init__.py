"""Online trackers (MODELS): each implements :class:`BaseTracker` (``reset`` per video, ``update`` per frame)."""
from .base_tracker import BaseTracker, TrackOutput, check_detections
from .byte_tracker import ByteTracker

__all__ = ['BaseTracker', 'TrackOutput', 'check_detections', 'ByteTracker']
