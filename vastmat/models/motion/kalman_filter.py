"""The DeepSORT/ByteTrack "xyah" Kalman filter (reference/trackers.md 0.1), batched over tracks.

mmdet's ``KalmanFilter`` (the same filter as ByteTrack's) works on one track at a time; ByteTrack's association
spends most of its time in those per-track updates (a Cholesky factorisation each), so this version predicts,
updates and initiates every track of a frame at once: predict and update are one compiled loop each over the stacked
tracks (:mod:`.kalman_kernels`), the noise computed here. It is checked against mmdet's filter track by track in
tests/test_kalman_filter.py.
"""
from __future__ import annotations

import numpy as np

from vastmat.registry import TASK_UTILS

from . import kalman_kernels

_OFF_DIAGONAL_4 = np.flatnonzero(~np.eye(4, dtype=bool))  # the off-diagonal entries of a flattened 4 x 4 matrix
# the 0.95 quantile of the chi-square distribution with N degrees of freedom (DeepSORT's ``chi2inv95``): the gate
# of the squared Mahalanobis distance (4: xyah, 2: centre only)
CHI2INV95 = {1: 3.8415, 2: 5.9915, 3: 7.8147, 4: 9.4877, 5: 11.070, 6: 12.592, 7: 14.067, 8: 15.507, 9: 16.919}


def _as_states(mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stacked float64 states ``(k, 8)``, ``(k, 8, 8)`` (the trackers' arrays pass through without a copy)."""
    return (np.asarray(mean, np.float64).reshape(-1, 8), np.asarray(covariance, np.float64).reshape(-1, 8, 8))


def _as_measurements(measurement: np.ndarray) -> np.ndarray:
    return np.asarray(measurement, dtype=np.float64).reshape(-1, 4)


def _diagonal(projected_cov: np.ndarray) -> np.ndarray | None:
    """The ``(k, 4)`` diagonals of ``(k, 4, 4)`` projected covariances, or None where any is not diagonal. This
    filter keeps the four coordinates uncorrelated (initiate, predict and update never mix them), so its own are;
    a caller's full covariance is not."""
    flat = projected_cov.reshape(len(projected_cov), 16)
    return None if flat[:, _OFF_DIAGONAL_4].any() else flat[:, ::5]


@TASK_UTILS.register_module()
class KalmanFilterXYAH:
    """Constant-velocity Kalman filter on ``[cx, cy, a, h, vx, vy, va, vh]``, noise proportional to the height.

    Every method takes stacked tracks: ``mean (k, 8)``, ``covariance (k, 8, 8)``, measurements ``(k, 4)`` xyah.
    """

    def __init__(self, std_weight_position: float = 1. / 20, std_weight_velocity: float = 1. / 160) -> None:
        self.std_weight_position, self.std_weight_velocity = std_weight_position, std_weight_velocity
        self.motion_mat = np.eye(8)
        self.motion_mat[np.arange(4), np.arange(4) + 4] = 1.0
        p, v = std_weight_position, std_weight_velocity
        # the noise standard deviations as h * weight + constant (0 * h + c is c, p * h + 0 is p * h exactly): the
        # process noise of predict and the measurement noise of update, in one operation each
        self._process_weight, self._process_const = np.array([p, p, 0, p, v, v, 0, v]), np.array(
            [0, 0, 1e-2, 0, 0, 0, 1e-5, 0])
        self._measure_weight, self._measure_const = np.array([p, p, 0, p]), np.array([0, 0, 1e-1, 0])

    @staticmethod
    def _diag(std: np.ndarray) -> np.ndarray:
        out = np.zeros(std.shape + (std.shape[-1], ))
        idx = np.arange(std.shape[-1])
        out[:, idx, idx] = std ** 2
        return out

    def initiate(self, measurement: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """New tracks at the measured boxes, zero velocity."""
        measurement = np.asarray(measurement, dtype=np.float64).reshape(-1, 4)
        mean = np.concatenate([measurement, np.zeros_like(measurement)], axis=1)
        p, v, h = self.std_weight_position, self.std_weight_velocity, measurement[:, 3]
        const = np.ones_like(h)
        std = np.stack([2 * p * h, 2 * p * h, 1e-2 * const, 2 * p * h,
                        10 * v * h, 10 * v * h, 1e-5 * const, 10 * v * h], axis=1)
        return mean, self._diag(std)

    def predict(self, mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One step of the motion model (process noise from the current height): ``F P F^T + Q`` in one compiled
        loop (:func:`.kalman_kernels.predict`), bit for bit the matrix products."""
        mean, covariance = _as_states(mean, covariance)
        return kalman_kernels.predict(mean, covariance, mean[:, 3:4] * self._process_weight + self._process_const)

    def project(self, mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The state distribution in measurement space."""
        std = mean[:, 3:4] * self._measure_weight + self._measure_const
        projected = covariance[:, :4, :4].copy()
        projected.reshape(len(projected), 16)[:, ::5] += std * std
        return mean[:, :4].copy(), projected

    def update(self, mean: np.ndarray, covariance: np.ndarray,
               measurement: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The correction step with measured xyah boxes (one compiled loop, :func:`.kalman_kernels.update`: a
        division by the projected covariance where it is diagonal, a solve otherwise)."""
        mean, covariance = _as_states(mean, covariance)
        std = mean[:, 3:4] * self._measure_weight + self._measure_const
        return kalman_kernels.update(mean, covariance, _as_measurements(measurement), std * std)

    def gating_distance(self, mean: np.ndarray, covariance: np.ndarray, measurements: np.ndarray,
                        only_position: bool = False, metric: str = 'maha') -> np.ndarray:
        """``(k, m)`` distances between the tracks' projected states and ``(m, 4)`` xyah measurements: the squared
        Mahalanobis distance (``metric='maha'``; compare with ``CHI2INV95[4]``, or ``[2]`` with ``only_position``,
        which keeps the centre only) or the squared Euclidean one (``'gaussian'``), as DeepSORT's / FairMOT's
        ``KalmanFilter.gating_distance``.
        """
        if metric not in ('maha', 'gaussian'):
            raise ValueError(f"gating_distance: metric must be 'maha' or 'gaussian', got {metric!r}")
        measurements = np.asarray(measurements, dtype=np.float64).reshape(-1, 4)
        projected_mean, projected_cov = self.project(mean, covariance)
        dims = 2 if only_position else 4
        d = measurements[None, :, :dims] - projected_mean[:, None, :dims]  # (k, m, dims)
        if metric == 'gaussian':
            return np.sum(d * d, axis=2)
        # the official z = L^-1 d with L the Cholesky factor, for every track in one batched solve (scipy's
        # triangular solve takes one matrix at a time). Where the projected covariance is diagonal (_diagonal), L is
        # the square root of the diagonal and the solve a division
        diagonal = _diagonal(projected_cov)
        if diagonal is not None:
            z = d / np.sqrt(diagonal[:, None, :dims])  # (k, m, dims)
            return np.sum(z * z, axis=2)
        chol = np.linalg.cholesky(projected_cov[:, :dims, :dims])
        z = np.linalg.solve(chol, d.transpose(0, 2, 1))  # (k, dims, m)
        return np.sum(z * z, axis=1)


@TASK_UTILS.register_module()
class KalmanFilterXYWH(KalmanFilterXYAH):
    """TrackTrack's constant-velocity Kalman filter on ``[cx, cy, w, h, vcx, vcy, vw, vh]`` (reference/trackers.md
    section 3), batched over tracks; noise proportional to the width (x-like entries) and height (y-like entries).

    * initiate: std ``[2w, 2h, 2w, 2h, 10w, 10h, 10w, 10h]`` (no position/velocity weight, unlike BoT-SORT);
    * predict: Q std ``sp [w, h, w, h]``, ``sv [w, h, w, h]`` from the *predicted* mean;
    * update (NSA): R = ``(sp [w, h, w, h])^2 * (1 - score)``, the variance (not the std) scaled by the score.
    """

    def initiate(self, measurement: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        measurement = np.asarray(measurement, dtype=np.float64).reshape(-1, 4)
        mean = np.concatenate([measurement, np.zeros_like(measurement)], axis=1)
        w, h = measurement[:, 2:3], measurement[:, 3:4]
        std = np.concatenate([2 * w, 2 * h, 2 * w, 2 * h, 10 * w, 10 * h, 10 * w, 10 * h], axis=1)
        return mean, self._diag(std)

    def _wh4(self, mean: np.ndarray) -> np.ndarray:
        w, h = mean[:, 2:3], mean[:, 3:4]
        return np.concatenate([w, h, w, h], axis=1)

    def predict(self, mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One step (the noise from the *predicted* width and height), one compiled loop as the xyah filter's."""
        mean, covariance = _as_states(mean, covariance)
        wh4 = self._wh4(mean[:, :4] + mean[:, 4:])  # the predicted width and height
        std = np.concatenate([self.std_weight_position * wh4, self.std_weight_velocity * wh4], axis=1)
        return kalman_kernels.predict(mean, covariance, std)

    def project(self, mean: np.ndarray, covariance: np.ndarray,
                scores: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The state in measurement space; with ``scores`` the NSA noise ``R (1 - score)``."""
        noise = self._diag(self.std_weight_position * self._wh4(mean))
        if scores is not None:
            noise = noise * (1.0 - np.asarray(scores, np.float64).reshape(-1, 1, 1))
        return mean[:, :4].copy(), covariance[:, :4, :4] + noise

    def update(self, mean: np.ndarray, covariance: np.ndarray, measurement: np.ndarray,
               scores: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The correction step with measured xywh boxes and their detection scores (NSA), one compiled loop."""
        mean, covariance = _as_states(mean, covariance)
        noise_var = (self.std_weight_position * self._wh4(mean)) ** 2
        if scores is not None:
            noise_var = noise_var * (1.0 - np.asarray(scores, np.float64).reshape(-1, 1))
        return kalman_kernels.update(mean, covariance, _as_measurements(measurement), noise_var)

    @staticmethod
    def warp(mean: np.ndarray, covariance: np.ndarray, affine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Camera motion compensation (BoT-SORT/TrackTrack ``apply_cmc``): the 2x2 part of the ``(2, 3)`` affine
        rotates every (x, y)-like pair of the state, its translation moves the centre."""
        affine = np.asarray(affine, np.float64).reshape(2, 3)
        rotation = np.kron(np.eye(4), affine[:, :2])
        mean = mean @ rotation.T
        mean[:, :2] += affine[:, 2]
        return mean, rotation @ covariance @ rotation.T
