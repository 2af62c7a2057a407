"""The DeepSORT/ByteTrack "xyah" Kalman filter (reference/trackers.md 0.1) and TrackTrack's "xywh" one, batched over
tracks.

mmdet's ``KalmanFilter`` (the same filter as ByteTrack's) works on one track at a time; ByteTrack's association
spends most of its time in those per-track updates (a Cholesky factorisation each), so these filters predict, update
and gate every track of a frame at once: each step is one compiled loop over the stacked tracks
(:mod:`.kalman_kernels`), on rows of a tracker's store in place (``predict_rows``, ``update_rows``) or on copies
(``predict``, ``update``). A filter is its noise: the standard deviation of each noise entry is ``weight * state[source]
+ const`` (the height for xyah, the width or height for xywh), declared here once and read by the loops and by
:meth:`KalmanFilterXYAH.measurement_noise`. Checked against mmdet's filter track by track in
tests/models/motion/test_kalman_filter.py.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from vastmat.registry import TASK_UTILS

from . import kalman_kernels

# the 0.95 quantile of the chi-square distribution with N degrees of freedom (DeepSORT's ``chi2inv95``): the gate
# of the squared Mahalanobis distance (4: xyah, 2: centre only)
CHI2INV95 = {1: 3.8415, 2: 5.9915, 3: 7.8147, 4: 9.4877, 5: 11.070, 6: 12.592, 7: 14.067, 8: 15.507, 9: 16.919}

_NO_SCORES = np.zeros(0)


class NoiseModel(NamedTuple):
    """Standard deviations ``weight * state[source] + const`` per noise entry (``0 * s + c`` is ``c`` and ``w * s +
    0`` is ``w * s`` exactly, so each filter's formula is reproduced bit for bit); ``after_step``: from the predicted
    state (process noise only)."""
    weight: np.ndarray
    source: np.ndarray
    const: np.ndarray
    after_step: bool = False


def _as_states(mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stacked float64 states ``(k, 8)``, ``(k, 8, 8)`` (float64 arrays pass through without a copy)."""
    return (np.asarray(mean, np.float64).reshape(-1, 8), np.asarray(covariance, np.float64).reshape(-1, 8, 8))


def _copied_states(mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """New stacked float64 states ``(k, 8)``, ``(k, 8, 8)`` (the filters' steps on whole arrays return new ones)."""
    return (np.array(mean, np.float64).reshape(-1, 8), np.array(covariance, np.float64).reshape(-1, 8, 8))


def _all_rows(states: np.ndarray) -> np.ndarray:
    return np.arange(len(states))


def _as_measurements(measurement: np.ndarray) -> np.ndarray:
    return np.asarray(measurement, dtype=np.float64).reshape(-1, 4)


def _as_scores(scores: np.ndarray | None) -> np.ndarray:
    return _NO_SCORES if scores is None else np.asarray(scores, np.float64).reshape(-1)


def _check_rows(rows: np.ndarray, *per_row: np.ndarray) -> None:
    """The compiled loops index without bounds checks: one measurement (and score) per row given."""
    for values in per_row:
        if len(values) and len(values) != len(rows):
            raise ValueError(f'Kalman step on {len(rows)} rows given {len(values)} measurements or scores')


@TASK_UTILS.register_module()
class KalmanFilterXYAH:
    """Constant-velocity Kalman filter on ``[cx, cy, a, h, vx, vy, va, vh]``, noise proportional to the height.

    Every method takes stacked tracks: ``mean (k, 8)``, ``covariance (k, 8, 8)``, measurements ``(k, 4)`` xyah.
    """

    def __init__(self, std_weight_position: float = 1. / 20, std_weight_velocity: float = 1. / 160) -> None:
        self.std_weight_position, self.std_weight_velocity = std_weight_position, std_weight_velocity
        self.motion_mat = np.eye(8)
        self.motion_mat[np.arange(4), np.arange(4) + 4] = 1.0
        self.initial_noise_model, self.process_noise_model, self.measurement_noise_model = self._noise_models(
            std_weight_position, std_weight_velocity)

    @staticmethod
    def _noise_models(p: float, v: float) -> tuple[NoiseModel, NoiseModel, NoiseModel]:
        """The initial covariance, the process noise Q (from the current height) and the measurement noise R, as
        DeepSORT's."""
        height, velocity_const = np.full(8, 3), np.array([0, 0, 1e-2, 0, 0, 0, 1e-5, 0])
        return (NoiseModel(np.array([2 * p, 2 * p, 0, 2 * p, 10 * v, 10 * v, 0, 10 * v]), height, velocity_const),
                NoiseModel(np.array([p, p, 0, p, v, v, 0, v]), height, velocity_const),
                NoiseModel(np.array([p, p, 0, p]), height[:4], np.array([0, 0, 1e-1, 0])))

    def initiate_rows(self, mean: np.ndarray, covariance: np.ndarray, rows: np.ndarray,
                      measurement: np.ndarray) -> None:
        """New tracks at ``rows`` of stacked float64 states (a tracker's store), in place: at the measured boxes,
        zero velocity, the initial covariance (one compiled loop, :func:`.kalman_kernels.initiate`)."""
        model, measurement = self.initial_noise_model, _as_measurements(measurement)
        _check_rows(rows, measurement)
        kalman_kernels.initiate(mean, covariance, rows, measurement, model.weight, model.source, model.const)

    def initiate(self, measurement: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """New tracks at the measured boxes, zero velocity (:meth:`initiate_rows` on new arrays)."""
        measurement = _as_measurements(measurement)
        mean, covariance = np.empty((len(measurement), 8)), np.empty((len(measurement), 8, 8))
        self.initiate_rows(mean, covariance, _all_rows(mean), measurement)
        return mean, covariance

    def measurement_noise(self, mean: np.ndarray, scores: np.ndarray | None = None) -> np.ndarray:
        """``(k, 4)`` variances of the measurement noise R (diagonal) at the tracks' states, times ``1 - score``
        with ``scores`` (NSA)."""
        model = self.measurement_noise_model
        std = mean[:, model.source] * model.weight + model.const
        noise_var = std * std
        if scores is not None:
            noise_var = noise_var * (1.0 - _as_scores(scores)[:, None])
        return noise_var

    def project(self, mean: np.ndarray, covariance: np.ndarray,
                scores: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The state distribution in measurement space: ``H x`` and ``H P H^T + R``."""
        mean, covariance = _as_states(mean, covariance)
        projected = covariance[:, :4, :4].copy()
        projected.reshape(len(projected), 16)[:, ::5] += self.measurement_noise(mean, scores)
        return mean[:, :4].copy(), projected

    def predict_rows(self, mean: np.ndarray, covariance: np.ndarray, rows: np.ndarray) -> None:
        """One step of the motion model for the tracks at ``rows`` of stacked float64 states, in place (a tracker's
        store): ``F P F^T + Q`` in one compiled loop (:func:`.kalman_kernels.predict`), bit for bit the matrix
        products."""
        kalman_kernels.predict(mean, covariance, rows, *self.process_noise_model)

    def predict(self, mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One step of the motion model, new arrays (:meth:`predict_rows` on a copy)."""
        mean, covariance = _copied_states(mean, covariance)
        self.predict_rows(mean, covariance, _all_rows(mean))
        return mean, covariance

    def update_rows(self, mean: np.ndarray, covariance: np.ndarray, rows: np.ndarray, measurement: np.ndarray,
                    scores: np.ndarray | None = None) -> None:
        """The correction step of the tracks at ``rows`` with their measurements ``(len(rows), 4)``, in place (one
        compiled loop, :func:`.kalman_kernels.update`: a division by the projected covariance where it is
        diagonal, a solve otherwise); ``scores``: R scaled by ``1 - score`` (NSA, TrackTrack)."""
        model, measurement, scores = self.measurement_noise_model, _as_measurements(measurement), _as_scores(scores)
        _check_rows(rows, measurement, scores)
        kalman_kernels.update(mean, covariance, rows, measurement, model.weight, model.source, model.const, scores)

    def update(self, mean: np.ndarray, covariance: np.ndarray, measurement: np.ndarray,
               scores: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The correction step, new arrays (:meth:`update_rows` on a copy)."""
        mean, covariance = _copied_states(mean, covariance)
        self.update_rows(mean, covariance, _all_rows(mean), measurement, scores)
        return mean, covariance

    def gating_distance(self, mean: np.ndarray, covariance: np.ndarray, measurements: np.ndarray,
                        only_position: bool = False, metric: str = 'maha',
                        rows: np.ndarray | None = None) -> np.ndarray:
        """``(k, m)`` distances between the tracks' projected states and ``(m, 4)`` measurements: the squared
        Mahalanobis distance (``metric='maha'``; compare with ``CHI2INV95[4]``, or ``[2]`` with ``only_position``,
        which keeps the centre only) or the squared Euclidean one (``'gaussian'``), as DeepSORT's / FairMOT's
        ``KalmanFilter.gating_distance``. ``rows``: of the tracks at these rows of stacked float64 states (a
        tracker's store), without gathering them; None: every track given.
        """
        if metric not in ('maha', 'gaussian'):
            raise ValueError(f"gating_distance: metric must be 'maha' or 'gaussian', got {metric!r}")
        # the official z = L^-1 d with L the Cholesky factor of the projected covariance, for every track and
        # measurement in one compiled loop (:func:`.kalman_kernels.gating_distance`); where that covariance is
        # diagonal (these filters keep it so), L is the square root of the diagonal and the solve a division
        if rows is None:
            mean, covariance = _as_states(mean, covariance)
            rows = _all_rows(mean)
        model = self.measurement_noise_model
        return kalman_kernels.gating_distance(mean, covariance, rows, _as_measurements(measurements), model.weight,
                                              model.source, model.const, 2 if only_position else 4,
                                              metric == 'maha')


@TASK_UTILS.register_module()
class KalmanFilterXYWH(KalmanFilterXYAH):
    """TrackTrack's constant-velocity Kalman filter on ``[cx, cy, w, h, vcx, vcy, vw, vh]`` (reference/trackers.md
    section 3), batched over tracks; noise proportional to the width (x-like entries) and height (y-like entries).

    * initiate: std ``[2w, 2h, 2w, 2h, 10w, 10h, 10w, 10h]`` (no position/velocity weight, unlike BoT-SORT);
    * predict: Q std ``sp [w, h, w, h]``, ``sv [w, h, w, h]`` from the *predicted* mean;
    * update (NSA): R = ``(sp [w, h, w, h])^2 * (1 - score)``, the variance (not the std) scaled by the score.
    """

    @staticmethod
    def _noise_models(p: float, v: float) -> tuple[NoiseModel, NoiseModel, NoiseModel]:
        width_height = np.array([2, 3, 2, 3, 2, 3, 2, 3])
        return (NoiseModel(np.array([2.0, 2.0, 2.0, 2.0, 10.0, 10.0, 10.0, 10.0]), width_height, np.zeros(8)),
                NoiseModel(np.array([p, p, p, p, v, v, v, v]), width_height, np.zeros(8), after_step=True),
                NoiseModel(np.full(4, p), width_height[:4], np.zeros(4)))

    @staticmethod
    def warp(mean: np.ndarray, covariance: np.ndarray, affine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Camera motion compensation (BoT-SORT/TrackTrack ``apply_cmc``): the 2x2 part of the ``(2, 3)`` affine
        rotates every (x, y)-like pair of the state, its translation moves the centre."""
        affine = np.asarray(affine, np.float64).reshape(2, 3)
        rotation = np.kron(np.eye(4), affine[:, :2])
        mean = mean @ rotation.T
        mean[:, :2] += affine[:, 2]
        return mean, rotation @ covariance @ rotation.T
