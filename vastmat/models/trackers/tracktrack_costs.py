"""TrackTrack's cost terms of TPA other than the geometric one (kamkyu94/TrackTrack, reference/trackers.md section
3): the corner directions and velocities, the official ``angle_distance`` (direction term), ``conf_distance``
(confidence term) and the cosine (appearance) distance. :class:`.TrackTrackTracker` weights them into its cost.
"""
from __future__ import annotations

import numpy as np
from numba import njit


_CORNER_X, _CORNER_Y, _CORNER_DY = np.array([0, 0, 2, 2]), np.array([1, 3, 1, 3]), np.array([1, 1, 1, 1])


def corner_directions(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Unit directions of the four corners from ``start`` to ``end`` boxes of broadcastable shapes ``(..., 4)``:
    ``(..., 4, 2)`` for the corners lt, lb, rt, rb (official ``get_vel`` / ``get_vel_t_d``). Faithful quirk: the
    'lb' and 'rb' y-components are ``y2_end - y1_start`` while their norms use ``y2_end - y2_start``."""
    d = end - start
    squared = d ** 2
    # corners lt, lb, rt, rb: x from x1, x1, x2, x2; norms over (dx1, dy1), (dx1, dy2), (dx2, dy1), (dx2, dy2)
    norms = np.sqrt(squared[..., _CORNER_X] + squared[..., _CORNER_Y]) + 1e-5
    out = np.empty(d.shape[:-1] + (4, 2))
    np.divide(d[..., _CORNER_X], norms, out=out[..., 0])
    np.divide(d[..., _CORNER_DY], norms, out=out[..., 1])
    lower = end[..., 3] - start[..., 1]  # the quirk: 'lb' / 'rb' y-components
    np.divide(lower, norms[..., 1], out=out[..., 1, 1])
    np.divide(lower, norms[..., 3], out=out[..., 3, 1])
    return out


def corner_velocities(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """:func:`corner_directions` of every pair of ``start (n, 4)`` and ``end (m, 4)`` boxes: ``(n, m, 4, 2)``."""
    return corner_directions(start[:, None, :], end[None, :, :])


@njit(cache=True, nogil=True)
def _corner_dots(track_velocity: np.ndarray, prev_boxes: np.ndarray, det_boxes: np.ndarray, rows: np.ndarray,
                 cols: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    """``(k, 4)`` per pair (``rows[k]``, ``cols[k]``) and corner: the track's velocity dotted with the corner's unit
    direction from its previous box to the detection, clipped to [-1, 1] (:func:`corner_directions`' operations,
    element by element)."""
    dots = np.empty((len(rows), 4))
    d = np.empty(4)
    for k in range(len(rows)):
        start, end, velocity = prev_boxes[rows[k]], det_boxes[cols[k]], track_velocity[rows[k]]
        for i in range(4):
            d[i] = end[i] - start[i]
        lower = end[3] - start[1]  # the quirk: 'lb' / 'rb' y-components
        for c in range(4):  # lt, lb, rt, rb: x from dx1, dx1, dx2, dx2; norms over dy1, dy2, dy1, dy2
            dx, dy = d[0 if c < 2 else 2], d[1 if c % 2 == 0 else 3]
            norm = np.sqrt(dx * dx + dy * dy) + 1e-5
            dot = velocity[c, 0] * (dx / norm) + velocity[c, 1] * ((lower if c % 2 else d[1]) / norm)
            dots[k, c] = min(max(dot, -1.0), 1.0)
    return dots


@njit(cache=True, nogil=True)
def _mean_corner_angles(angles: np.ndarray, rows: np.ndarray, cols: np.ndarray, det_scores: np.ndarray,
                        shape: tuple[int, int]) -> np.ndarray:  # pragma: no cover (compiled)
    """``(n, m)``: per pair the corners' ``|angle| / pi / 4`` added corner by corner, times the detection score
    (the official accumulation); 0 for the pairs not given."""
    out = np.zeros(shape)
    for k in range(len(rows)):
        total = np.abs(angles[k, 0]) / np.pi / 4 + np.abs(angles[k, 1]) / np.pi / 4
        total += np.abs(angles[k, 2]) / np.pi / 4
        total += np.abs(angles[k, 3]) / np.pi / 4
        out[rows[k], cols[k]] = total * det_scores[cols[k]]
    return out


def angle_distance(track_velocity: np.ndarray, prev_boxes: np.ndarray, det_boxes: np.ndarray,
                   det_scores: np.ndarray, pairs: np.ndarray | None = None) -> np.ndarray:
    """Official ``angle_distance``: per corner, the angle between the track's velocity ``(n, 4, 2)`` and the
    direction from its box ``delta_t`` frames ago to each detection, over pi, averaged over the corners, times the
    detection score. ``pairs``: a ``(n, m)`` bool mask of the pairs wanted (the others are 0).

    Two compiled loops around numpy's ``arccos`` (the official's, whose SIMD results a compiled ``acos`` does not
    always match in the last bit): the per-pair arithmetic of a frame's matrix was ~30 numpy calls."""
    shape = (len(prev_boxes), len(det_boxes))
    # C-contiguous float64 arrays (copies of views, of numpy's strided indices): one compiled signature of each
    # loop, the one vastmat.apis.compile_kernels caches
    rows, cols = map(np.ascontiguousarray, np.nonzero(pairs if pairs is not None else np.ones(shape, bool)))
    angles = np.arccos(_corner_dots(np.ascontiguousarray(track_velocity, np.float64).reshape(-1, 4, 2),
                                    np.ascontiguousarray(prev_boxes, np.float64).reshape(-1, 4),
                                    np.ascontiguousarray(det_boxes, np.float64).reshape(-1, 4), rows, cols))
    return _mean_corner_angles(angles, rows, cols, np.ascontiguousarray(det_scores, np.float64), shape)


def confidence_distance(scores: np.ndarray, prev_scores: np.ndarray, det_scores: np.ndarray) -> np.ndarray:
    """Official ``conf_distance``: ``|s_t + (s_t - s_{t-1}) - s_det|``, the track's score linearly extrapolated."""
    projected = scores + (scores - prev_scores)
    return np.abs(projected[:, None] - det_scores[None, :])


def cosine_distance(track_features: np.ndarray, det_features: np.ndarray) -> np.ndarray:
    """``clip(1 - f_t . f_d, 0, 1)``."""
    return np.clip(1 - track_features @ det_features.T, 0., 1.)
