"""Compiled (numba) steps of the constant-velocity Kalman filters (:mod:`.kalman_filter`) over stacked tracks:
``mean (n, 8)``, ``covariance (n, 8, 8)``, the first four state entries measured, the last four their velocities. Each
step works on the rows it is given, in place: a tracker's table (:class:`~vastmat.models.trackers.TrackTable`) is
stepped where it lies, without gathering its rows into new arrays and scattering them back (the gather
and scatter were about as costly as the step).

Why compiled: a frame's tens of tracks make the batched numpy filter a sequence of ~20 small operations per step,
each costing its call overhead (~1-3 us) rather than arithmetic (measured: predict and update were ~40 and ~65 us of a
ByteTrack frame); one loop does a step in a few microseconds. numpy, scipy and filterpy offer no batched filter step
below that overhead. The filters declare their noise (:class:`.kalman_filter.NoiseModel`: each standard deviation
``weight * state[source] + const``); the loops compute it from each row's state.

``predict`` performs the numpy path's slice additions in the same order (bit for bit equal to ``F P F^T + Q`` with
matrix products, each entry summing at most two non-zero terms); ``update`` forms the gain as the numpy path does (a
division where the projected covariance is diagonal, a solve otherwise), with products summed in index order
(equal to numpy's batched products within rounding; tests/models/motion/test_kalman_filter.py compares them with
mmdet's filter).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline='always')
def _noise_std(x: np.ndarray, i: int, weight: np.ndarray, source: np.ndarray,
               const: np.ndarray) -> float:  # pragma: no cover (compiled)
    """Entry ``i`` of a noise model's standard deviations at state ``x`` (:class:`.kalman_filter.NoiseModel`)."""
    return x[source[i]] * weight[i] + const[i]


@njit(cache=True, nogil=True)
def predict(mean: np.ndarray, covariance: np.ndarray, rows: np.ndarray, weight: np.ndarray, source: np.ndarray,
            const: np.ndarray, after_step: bool) -> None:  # pragma: no cover (compiled)
    """One constant-velocity step of the tracks at ``rows``, in place: ``x += v`` and ``P = F P F^T + Q``, Q
    diagonal with the standard deviations of the noise model ``weight, source, const`` at the state before the
    step (or after it, ``after_step``). A row listed twice steps twice."""
    noise_std = np.empty(8)
    for t in range(len(rows)):
        x, cov = mean[rows[t]], covariance[rows[t]]
        if not after_step:
            for i in range(8):
                noise_std[i] = _noise_std(x, i, weight, source, const)
        for i in range(4):
            x[i] += x[i + 4]
        if after_step:
            for i in range(8):
                noise_std[i] = _noise_std(x, i, weight, source, const)
        for i in range(4):  # F P: row i gains row i + 4
            for j in range(8):
                cov[i, j] += cov[i + 4, j]
        for i in range(8):  # (F P) F^T: column j gains column j + 4
            for j in range(4):
                cov[i, j] += cov[i, j + 4]
        for i in range(8):
            cov[i, i] += noise_std[i] * noise_std[i]


@njit(cache=True, nogil=True)
def update(mean: np.ndarray, covariance: np.ndarray, rows: np.ndarray, measurement: np.ndarray, weight: np.ndarray,
           source: np.ndarray, const: np.ndarray, scores: np.ndarray) -> None:  # pragma: no cover (compiled)
    """The correction step of the tracks at ``rows``, in place, with measurements ``(len(rows), 4)``: ``S = H P H^T
    + R``, ``K = P H^T S^-1``, ``x += K (z - H x)``, ``P -= K S K^T``; R diagonal, the squared standard deviations
    of the noise model ``weight, source, const`` at the state, times ``1 - score`` where ``scores`` (one per row)
    are given (NSA). A row listed twice is corrected twice, in order."""
    projected = np.empty((4, 4))
    gain_t = np.empty((4, 8))  # K^T = S^-1 H P (S symmetric)
    gain_s = np.empty((8, 4))
    innovation = np.empty(4)
    for t in range(len(rows)):
        x, cov = mean[rows[t]], covariance[rows[t]]
        diagonal = True
        for i in range(4):
            for j in range(4):
                projected[i, j] = cov[i, j]
                if i != j and cov[i, j] != 0.0:
                    diagonal = False
            std = _noise_std(x, i, weight, source, const)
            projected[i, i] += std * std * (1.0 - scores[t]) if len(scores) else std * std
        if diagonal:
            for i in range(4):
                for j in range(8):
                    gain_t[i, j] = cov[i, j] / projected[i, i]
        else:
            gain_t[:, :] = np.linalg.solve(projected, np.ascontiguousarray(cov[:4, :]))
        for i in range(4):
            innovation[i] = measurement[t, i] - x[i]
        for i in range(8):
            correction = 0.0
            for j in range(4):
                correction += gain_t[j, i] * innovation[j]
            x[i] += correction
            for j in range(4):  # K S
                total = 0.0
                for m in range(4):
                    total += gain_t[m, i] * projected[m, j]
                gain_s[i, j] = total
        for i in range(8):  # P - (K S) K^T (the gain is complete: P may change now)
            for j in range(8):
                total = 0.0
                for m in range(4):
                    total += gain_s[i, m] * gain_t[m, j]
                cov[i, j] -= total


@njit(cache=True, nogil=True)
def gating_distance(mean: np.ndarray, covariance: np.ndarray, rows: np.ndarray, measurements: np.ndarray,
                    weight: np.ndarray, source: np.ndarray, const: np.ndarray, dims: int,
                    mahalanobis: bool) -> np.ndarray:  # pragma: no cover (compiled)
    """``(len(rows), m)`` distances of ``(m, 4)`` measurements to the projected states of the tracks at ``rows`` over
    the first ``dims`` coordinates: squared Mahalanobis (``S = H P H^T + R``, R as :func:`update`'s without scores;
    ``z = L^-1 d``, L the Cholesky factor of S, a division by its square-rooted diagonal where S is diagonal) or
    squared Euclidean."""
    k, m = len(rows), measurements.shape[0]
    out = np.empty((k, m))
    projected = np.empty((dims, dims))
    scale = np.empty(dims)
    d, z = np.empty(dims), np.empty(dims)
    for t in range(k):
        x, cov = mean[rows[t]], covariance[rows[t]]
        diagonal = True
        for i in range(dims):
            for j in range(dims):
                projected[i, j] = cov[i, j]
                if i != j and cov[i, j] != 0.0:
                    diagonal = False
            std = _noise_std(x, i, weight, source, const)
            projected[i, i] += std * std
        if not mahalanobis:
            scale[:] = 1.0
        elif diagonal:
            for i in range(dims):
                scale[i] = np.sqrt(projected[i, i])
        else:
            projected[:, :] = np.linalg.cholesky(projected)
        for j in range(m):
            for i in range(dims):
                d[i] = measurements[j, i] - x[i]
            if mahalanobis and not diagonal:  # forward substitution, L z = d
                for i in range(dims):
                    total = d[i]
                    for c in range(i):
                        total -= projected[i, c] * z[c]
                    z[i] = total / projected[i, i]
            else:
                for i in range(dims):
                    z[i] = d[i] / scale[i] if mahalanobis else d[i]
            total = 0.0
            for i in range(dims):
                total += z[i] * z[i]
            out[t, j] = total
    return out


@njit(cache=True, nogil=True)
def initiate(mean: np.ndarray, covariance: np.ndarray, rows: np.ndarray, measurement: np.ndarray,
             weight: np.ndarray, source: np.ndarray, const: np.ndarray) -> None:  # pragma: no cover (compiled)
    """New tracks at ``rows``, in place: the state the measurement ``(len(rows), 4)`` with zero velocity, the
    covariance diagonal with the squared standard deviations of the noise model ``weight, source, const`` at it."""
    for t in range(len(rows)):
        x, cov = mean[rows[t]], covariance[rows[t]]
        for i in range(4):
            x[i] = measurement[t, i]
            x[i + 4] = 0.0
        cov[:, :] = 0.0
        for i in range(8):
            std = _noise_std(x, i, weight, source, const)
            cov[i, i] = std * std
