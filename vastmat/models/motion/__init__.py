"""Motion models: the batched xyah Kalman filter of the SORT/ByteTrack family."""
from .kalman_filter import KalmanFilterXYAH, tlwh_to_xyah, xyah_to_xyxy, xyxy_to_xyah

__all__ = ['KalmanFilterXYAH', 'xyah_to_xyxy', 'xyxy_to_xyah', 'tlwh_to_xyah']
