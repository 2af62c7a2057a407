"""Motion models: the batched xyah Kalman filter of the SORT/ByteTrack family."""
from .kalman_filter import KalmanFilterXYAH

__all__ = ['KalmanFilterXYAH']
