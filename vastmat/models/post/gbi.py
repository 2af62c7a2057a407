"""GBI, gradient-boosting interpolation (TrackTrack ``3. Tracker/utils/gbi.py``), as a per-video post-processor."""
from __future__ import annotations

import numpy as np

from vastmat.registry import TASK_UTILS

from .aflink import round_like_results_file


def linear_interpolation(rows: np.ndarray, interval: int) -> np.ndarray:
    """The official ``linear_interpolation`` on rows ``frame, id, left, top, width, height, score``: rows sorted by
    id then frame (``np.lexsort``); within an id, a gap ``f_pre + 1 < f < f_pre + interval`` is filled with rows
    ``row_pre + (row - row_pre) / (f - f_pre) * i`` (every column, the score too); sorted by id then frame again.

    Written out rather than taken from mmdet's ``InterpolateTracklets``, whose gap rule (``1 < gap <
    max_num_frames``) and track-length condition differ.
    """
    rows = rows[np.lexsort([rows[:, 0], rows[:, 1]])]
    new = []
    id_pre, f_pre, row_pre = -1, -1, np.zeros(rows.shape[1])
    for row in rows:
        f_curr, id_curr = row[:2].astype(int)
        if id_curr == id_pre:
            if f_pre + 1 < f_curr < f_pre + interval:
                for i, _ in enumerate(range(f_pre + 1, f_curr), start=1):
                    new.append(row_pre + (row - row_pre) / (f_curr - f_pre) * i)
        else:
            id_pre = id_curr
        row_pre, f_pre = row, f_curr
    out = np.concatenate([rows, np.array(new).reshape(-1, rows.shape[1])])
    return out[np.lexsort([out[:, 0], out[:, 1]])]


@TASK_UTILS.register_module()
class GBInterpolation:
    """Linear interpolation of short gaps, then gradient-boosting smoothing of every track (TrackTrack's GBI, run on
    MOT17/20): ``rows -> rows``.

    1. :func:`linear_interpolation` with ``interval`` on ``frame, id, left, top, width, height, score``.
    2. Per track, four ``sklearn`` ``GradientBoostingRegressor(n_estimators=115, learning_rate=0.065,
       min_samples_split=6)`` fits of frame -> left, top, width, height (one regressor refitted for each
       coordinate, as the official), evaluated at the track's frames.
    3. Every row's score is 1 (the official writes conf 1).

    The official works on left, top, width, height (its results file); rows come in and go out as ``frame, id,
    x1, y1, x2, y2, score`` with ``x2 = left + width``. The output is sorted by frame, then id (the official's order
    follows a Python set of ids; the rows are the same). With a single feature and no subsampling the regressor is
    deterministic, so ``random_state`` stays sklearn's default as in the official.

    Args:
        interval: gaps of ``interval - 1`` missing frames or more are not filled (official 30).
        tau: accepted and unused, as in the official ``gb_interpolation(..., tau)``.
        n_estimators, learning_rate, min_samples_split: the regressor's (official 115, 0.065, 6).
        round_input: round left, top, width, height to 0.1 px and scores to 0.01 first, as the official tracker's
            results file that the official GBI reads (``write_results``). Only for reproducing the official
            pipeline's numbers.
    """

    def __init__(self, interval: int = 30, tau: float | None = None, n_estimators: int = 115,
                 learning_rate: float = 0.065, min_samples_split: int = 6, round_input: bool = False) -> None:
        try:
            from sklearn import config_context
            from sklearn.ensemble import GradientBoostingRegressor
        except ImportError as exc:
            raise ImportError('GBInterpolation needs scikit-learn (requirements/optional.txt): pip install '
                              'scikit-learn') from exc
        self._regressor, self._sklearn_config = GradientBoostingRegressor, config_context
        for name, value, least in (('n_estimators', n_estimators, 1), ('min_samples_split', min_samples_split, 2)):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ValueError(f'GBInterpolation: {name} must be an integer of at least {least}, got {value!r}')
        if not isinstance(learning_rate, (int, float)) or not 0 < learning_rate < float('inf'):
            raise ValueError(f'GBInterpolation: learning_rate must be a positive number, got {learning_rate!r}')
        self.interval, self.tau = interval, tau
        self.n_estimators, self.learning_rate, self.min_samples_split = n_estimators, learning_rate, min_samples_split
        self.round_input = round_input

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, np.float64).reshape(-1, 7)
        if len(rows) == 0:
            return rows.copy()
        if not np.isfinite(rows).all():
            bad = rows[~np.isfinite(rows).all(axis=1)]
            raise ValueError(f'GBInterpolation: {len(bad)} row(s) with NaN or infinite values, the first {bad[0]}')
        if self.round_input:
            rows = round_like_results_file(rows)
        ltwh_rows = np.column_stack([rows[:, :4], rows[:, 4:6] - rows[:, 2:4], rows[:, 6]])
        filled = linear_interpolation(ltwh_rows, self.interval)
        out = []
        for track_id in np.unique(filled[:, 1]):
            track = filled[filled[:, 1] == track_id]
            t = track[:, 0].reshape(-1, 1)
            regressor = self._regressor(n_estimators=self.n_estimators, learning_rate=self.learning_rate,
                                        min_samples_split=self.min_samples_split)
            smooth = []
            # the rows are checked finite above and the parameters in __init__: sklearn's checks of both, repeated
            # for each of the 115 trees of each fit, took a third of GBI's time (the same output without them)
            with self._sklearn_config(assume_finite=True, skip_parameter_validation=True):
                for column in range(2, 6):
                    regressor.fit(t, track[:, column])
                    smooth.append(regressor.predict(t))
            left, top, width, height = smooth
            out.append(np.column_stack([t[:, 0], np.full(len(t), track_id), left, top, left + width, top + height,
                                        np.ones(len(t))]))
        out = np.concatenate(out)
        return out[np.lexsort((out[:, 1], out[:, 0]))]
