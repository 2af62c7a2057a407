"""Motion models: the batched Kalman filters (xyah of the SORT/ByteTrack family, xywh NSA of TrackTrack)."""
from .camera_motion import CachedCameraMotion, ECCCameraMotion  # noqa: F401  (registers the components)
from .d2mp import D2MP
from .kalman_filter import KalmanFilterXYAH, KalmanFilterXYWH

__all__ = ["D2MP", "KalmanFilterXYAH", "KalmanFilterXYWH"]
