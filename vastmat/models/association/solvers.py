"""Assignment solvers on a cost matrix: ``solver(cost) -> Assignment``.

* ``LapJV``: ``lap.lapjv(cost, extend_cost=True, cost_limit=thr)``, the ByteTrack family's semantics: the problem is
  padded with dummy rows and columns of cost ``thr / 2``, so leaving a pair unmatched can beat matching it
  (reference/trackers.md 0.2). ``backend='scipy'`` solves the same padded problem with scipy.
* ``Hungarian``: the minimum-cost assignment, then pairs with cost > ``thr`` dropped.
* ``Greedy``: the cheapest remaining pair while it costs < ``thr``.
* ``MutualBest``: TrackTrack's iterative matching: every pair that is the minimum of both its row and its column and
  costs < ``thr`` is taken, their rows and columns closed, the threshold lowered by ``reduce_step``, until a pass
  takes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from vastmat.registry import MATCHERS


@dataclass
class Assignment:
    matches: np.ndarray  # (k, 2) int: row (track), column (detection)
    unmatched_rows: np.ndarray
    unmatched_cols: np.ndarray


def _assignment(pairs: list[tuple[int, int]] | np.ndarray, shape: tuple[int, int]) -> Assignment:
    matches = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    matches = matches[np.lexsort((matches[:, 1], matches[:, 0]))] if len(matches) else matches
    return Assignment(matches, np.setdiff1d(np.arange(shape[0]), matches[:, 0]),
                      np.setdiff1d(np.arange(shape[1]), matches[:, 1]))


def _as_cost(cost) -> np.ndarray:
    cost = np.asarray(cost, dtype=np.float64)
    if cost.ndim != 2:
        raise ValueError(f'a cost matrix must be 2-D, got shape {cost.shape}')
    if np.isnan(cost).any():
        raise ValueError('the cost matrix holds NaN')
    return cost


@MATCHERS.register_module()
class LapJV:
    """Jonker-Volgenant with ``cost_limit`` (ByteTrack's ``linear_assignment(cost, thresh)``)."""

    def __init__(self, cost_limit: float, backend: str = 'lap') -> None:
        if backend not in ('lap', 'scipy'):
            raise ValueError(f"LapJV: backend must be 'lap' or 'scipy', got {backend!r}")
        self.cost_limit, self.backend = cost_limit, backend

    def __call__(self, cost) -> Assignment:
        cost = _as_cost(cost)
        if cost.size == 0:
            return Assignment(np.zeros((0, 2), np.int64), np.arange(cost.shape[0]), np.arange(cost.shape[1]))
        if self.backend == 'lap':
            import lap
            _, x, y = lap.lapjv(cost, extend_cost=True, cost_limit=self.cost_limit)
            rows = np.flatnonzero(x >= 0)  # lap's row -> column map gives the matches in row order
            return Assignment(np.stack([rows, x[rows]], axis=1).astype(np.int64), np.flatnonzero(x < 0),
                              np.flatnonzero(y < 0))
        # the padded problem lap solves: [[cost, L/2 diag-dummies], [L/2 dummies, 0]]
        n, m = cost.shape
        big = np.full((n + m, n + m), self.cost_limit / 2.0)
        big[:n, :m] = cost
        big[n:, m:] = 0.0
        rows, cols = linear_sum_assignment(big)
        return _assignment([(i, j) for i, j in zip(rows, cols) if i < n and j < m], cost.shape)


@MATCHERS.register_module()
class Hungarian:
    """Minimum-cost assignment (scipy), then pairs costing more than ``thr`` are dropped."""

    def __init__(self, thr: float = float('inf')) -> None:
        self.thr = thr

    def __call__(self, cost) -> Assignment:
        cost = _as_cost(cost)
        if cost.size == 0:
            return _assignment([], cost.shape)
        rows, cols = linear_sum_assignment(cost)
        keep = cost[rows, cols] <= self.thr
        return _assignment(np.stack([rows[keep], cols[keep]], axis=1), cost.shape)


@MATCHERS.register_module()
class Greedy:
    """Repeatedly match the cheapest remaining pair while it costs less than ``thr``."""

    def __init__(self, thr: float = float('inf')) -> None:
        self.thr = thr

    def __call__(self, cost) -> Assignment:
        cost = _as_cost(cost)
        pairs, used_rows, used_cols = [], set(), set()
        for flat in np.argsort(cost, axis=None, kind='stable'):
            i, j = divmod(int(flat), cost.shape[1])
            if cost[i, j] >= self.thr:
                break
            if i not in used_rows and j not in used_cols:
                pairs.append((i, j))
                used_rows.add(i)
                used_cols.add(j)
        return _assignment(pairs, cost.shape)


@MATCHERS.register_module()
class MutualBest:
    """TrackTrack's iterative mutual-best matching with a tightening threshold (not Hungarian).

    Args:
        thr: the first pass takes pairs costing less than this (TrackTrack: its match threshold).
        reduce_step: the threshold drops by this after each pass (TrackTrack: 0.05).
        closed_cost: the cost written into matched rows and columns (TrackTrack: 1).
    """

    def __init__(self, thr: float, reduce_step: float = 0.05, closed_cost: float = 1.0) -> None:
        self.thr, self.reduce_step, self.closed_cost = thr, reduce_step, closed_cost

    def __call__(self, cost) -> Assignment:
        cost = _as_cost(cost).copy()
        pairs, thr = [], self.thr
        if cost.size == 0:
            return _assignment(pairs, cost.shape)
        while True:
            row_best = cost.argmin(axis=1)
            col_best = cost.argmin(axis=0)
            rows = np.arange(cost.shape[0])
            mutual = (col_best[row_best] == rows) & (cost[rows, row_best] < thr)
            new = [(int(i), int(row_best[i])) for i in rows[mutual]]
            if not new:
                break
            for i, j in new:
                cost[i, :] = self.closed_cost
                cost[:, j] = self.closed_cost
            pairs += new
            thr -= self.reduce_step
        return _assignment(pairs, cost.shape)
