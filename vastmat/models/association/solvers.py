"""Assignment solvers on a cost matrix: ``solver(cost) -> Assignment``.

* ``LapJV``: ``lap.lapjv(cost, extend_cost=True, cost_limit=thr)``, the ByteTrack family's semantics: the problem is
  padded with dummy rows and columns of cost ``thr / 2``, so leaving a pair unmatched can beat matching it
  (reference/trackers.md 0.2). ``backend='scipy'`` finds the same optimum with scipy on the unpadded matrix (see
  :class:`LapJV`), five times faster than lap on a frame's tens of boxes: the default with a finite limit;
  ``backend='lap'`` calls lap.
* ``Hungarian``: the minimum-cost assignment, then pairs with cost > ``thr`` dropped.
* ``Greedy``: the cheapest remaining pair while it costs < ``thr``.
* ``MutualBest``: TrackTrack's iterative matching: every pair that is the minimum of both its row and its column and
  costs < ``thr`` is taken, their rows and columns closed, the threshold lowered by ``reduce_step``, until a pass
  takes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy.optimize import linear_sum_assignment

from vastmat.registry import MATCHERS


@dataclass
class Assignment:
    matches: np.ndarray  # (k, 2) int: row (track), column (detection)
    unmatched_rows: np.ndarray
    unmatched_cols: np.ndarray


def _unmatched(matched: np.ndarray, size: int) -> np.ndarray:
    """``0 .. size - 1`` without ``matched``, ascending (np.setdiff1d's result; a mask costs less than its sort)."""
    free = np.ones(size, bool)
    free[matched] = False
    return free.nonzero()[0]


def _assignment(pairs: list[tuple[int, int]] | np.ndarray, shape: tuple[int, int]) -> Assignment:
    matches = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    matches = matches[np.lexsort((matches[:, 1], matches[:, 0]))] if len(matches) else matches
    return Assignment(matches, _unmatched(matches[:, 0], shape[0]), _unmatched(matches[:, 1], shape[1]))


def _as_cost(cost) -> np.ndarray:
    cost = np.asarray(cost, dtype=np.float64)
    if cost.ndim != 2:
        raise ValueError(f'a cost matrix must be 2-D, got shape {cost.shape}')
    cost = np.ascontiguousarray(cost)  # a transposed matrix is copied: one compiled signature of the loops below
    total = cost.sum()  # NaN where any entry is (one reduction; the entries are checked only then)
    if total != total and np.isnan(cost).any():
        raise ValueError('the cost matrix holds NaN')
    return cost


def _row_matches(x: np.ndarray) -> np.ndarray:
    """``(k, 2)`` pairs ``(row, x[row])`` of the rows with ``x[row] >= 0`` (a row -> column map), in row order."""
    rows = (x >= 0).nonzero()[0]
    matches = np.empty((len(rows), 2), np.int64)
    matches[:, 0] = rows
    matches[:, 1] = x[rows]
    return matches


@MATCHERS.register_module()
class LapJV:
    """The minimum-cost assignment with ``cost_limit`` of ByteTrack's ``linear_assignment(cost, thresh)``:
    ``lap.lapjv(cost, extend_cost=True, cost_limit=L)``.

    lap pads the problem with dummy rows and columns of cost ``L / 2`` (and 0 between dummies); a pair is then worth
    matching only for the ``L - cost`` it saves over two dummies, so the padded optimum is the matching that
    minimises the sum of ``min(cost - L, 0)`` over its pairs, keeping those with ``cost < L``. ``backend='scipy'``
    solves exactly that with scipy's ``linear_sum_assignment`` on the unpadded ``(n, m)`` matrix (pairs at 0 are
    left unmatched); ``backend='lap'`` calls lap. Both give the same optimum
    (tests/models/association/test_association.py checks them against each other and against enumeration) and
    could differ only between equally good matchings: with a finite limit those are pairs of exactly equal cost
    below it, which measured scores make rare (every golden test passes with either), and scipy takes ~6 us where
    lap takes ~40 on a frame's 20 x 14 matrix, so it is the default there.
    ``cost_limit=inf`` is the full minimum-cost assignment, where the many pairs of cost 1 (no overlap) make equally
    good matchings common and which of them is taken decides the official order of unmatched tracks (DiffMOT): lap
    by default.
    """

    def __init__(self, cost_limit: float, backend: str | None = None) -> None:
        if backend is None:
            backend = 'scipy' if cost_limit != float('inf') else 'lap'
        if backend not in ('lap', 'scipy'):
            raise ValueError(f"LapJV: backend must be 'lap' or 'scipy', got {backend!r}")
        self.cost_limit, self.backend = cost_limit, backend

    def __call__(self, cost) -> Assignment:
        cost = _as_cost(cost)
        n, m = cost.shape
        if cost.size == 0:
            return Assignment(np.zeros((0, 2), np.int64), np.arange(n), np.arange(m))
        if self.backend == 'lap':
            import lap
            _, x, y = lap.lapjv(cost, extend_cost=True, cost_limit=self.cost_limit)
            # lap's row -> column map gives the matches in row order
            return Assignment(_row_matches(x), (x < 0).nonzero()[0], (y < 0).nonzero()[0])
        if self.cost_limit == float('inf'):
            rows, cols = linear_sum_assignment(cost)
            return Assignment(*_split_assignment(rows, cols, cost, True, n, m))
        # pairs at 0 save nothing over two dummies: left unmatched
        gain = _gain_below_limit(cost, self.cost_limit)
        rows, cols = linear_sum_assignment(gain)
        return Assignment(*_split_assignment(rows, cols, gain, False, n, m))


# LapJV's steps around scipy's solver as compiled loops: on a frame's tens of boxes the solver takes ~3 us and the
# numpy steps around it (the gain, the taken pairs, the unmatched rows and columns: ~10 calls) took ~14 us more.
@njit(cache=True, nogil=True)
def _gain_below_limit(cost: np.ndarray, limit: float) -> np.ndarray:  # pragma: no cover (compiled)
    """``min(cost - limit, 0)``."""
    gain = np.empty(cost.shape)
    for i in range(cost.shape[0]):
        for j in range(cost.shape[1]):
            gain[i, j] = min(cost[i, j] - limit, 0.0)
    return gain


@njit(cache=True, nogil=True)
def _split_assignment(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, take_all: bool, n: int,
                      m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover (compiled)
    """scipy's pairs (rows ascending) as an :class:`Assignment`'s arrays: the pairs taken (all, or those with a
    negative ``values`` entry) in row order, then the rows and the columns left, ascending."""
    matches = np.empty((len(rows), 2), np.int64)
    matched_row, matched_col = np.zeros(n, np.bool_), np.zeros(m, np.bool_)
    count = 0
    for k in range(len(rows)):
        if take_all or values[rows[k], cols[k]] < 0:
            matches[count, 0], matches[count, 1] = rows[k], cols[k]
            matched_row[rows[k]] = matched_col[cols[k]] = True
            count += 1
    return matches[:count], np.flatnonzero(~matched_row), np.flatnonzero(~matched_col)


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
        cost = _as_cost(cost)
        if cost.size == 0:
            return _assignment([], cost.shape)
        return _assignment(_mutual_best_pairs(cost, self.thr, self.reduce_step, self.closed_cost), cost.shape)


@njit(cache=True, nogil=True)
def _mutual_best_pairs(cost: np.ndarray, thr: float, reduce_step: float,
                       closed_cost: float) -> np.ndarray:  # pragma: no cover (compiled)
    """:class:`MutualBest`'s passes as one compiled loop (a frame's passes were ~10 numpy calls each on a matrix of
    tens of boxes, all call overhead): each pass takes, in row order, every row whose first minimum's column has
    its first minimum in that row (numpy's ``argmin`` ties) and costs < ``thr``; then closes their rows and columns
    with ``closed_cost`` and lowers ``thr``, until a pass takes nothing. The pairs in the order taken."""
    cost = cost.copy()
    n, m = cost.shape
    pairs = np.empty((min(n, m), 2), np.int64)
    count = 0
    row_best, col_best = np.empty(n, np.int64), np.empty(m, np.int64)
    while True:
        for i in range(n):
            row_best[i] = cost[i].argmin()
        for j in range(m):
            col_best[j] = cost[:, j].argmin()
        start = count
        for i in range(n):
            j = row_best[i]
            if col_best[j] == i and cost[i, j] < thr:
                if count == pairs.shape[0]:  # only with thr > closed_cost, where closed pairs are taken again
                    grown = np.empty((2 * count + 1, 2), np.int64)
                    grown[:count] = pairs[:count]
                    pairs = grown
                pairs[count, 0], pairs[count, 1] = i, j
                count += 1
        if count == start:
            return pairs[:count]
        for k in range(start, count):
            cost[pairs[k, 0], :] = closed_cost
            cost[:, pairs[k, 1]] = closed_cost
        thr -= reduce_step
