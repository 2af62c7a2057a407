"""The tracks of one video kept as stacked arrays (issue 30): the lifecycle of :mod:`.track_lifecycle` (the official
``joint_stracks`` / ``sub_stracks`` / ``remove_duplicate_stracks`` bookkeeping) on rows instead of objects.

Each track is one row of the store's columns (id, state, activation, last matched frame, start frame, score, and the
columns a tracker declares: a Kalman mean and covariance, an embedding, ...), for the whole time it is in the tracked
or the lost list. The lists are int arrays of rows in the official list order, so a tracker gathers the state of a
list with one fancy index (``store.mean[pool]``) and writes an update back with one assignment, never a pass over
Python objects. Rows that left both lists are dropped by :meth:`TrackStore.compact` (every few frames), which keeps
the lists' order.

The semantics equal :class:`.TrackLifecycle`'s, the official quirk included (tests/test_track_store.py checks both on
random frame outcomes): removed tracks are subtracted from the lost list before this frame's removals are added, so
a lost track removed in frame t is still lost (and matchable) in frame t + 1.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from vastmat.structures.pair_kernels import iou_distance_pairs

from .track_lifecycle import LOST, REMOVED, TRACKED

_BOOKKEEPING = dict(ids=((), np.int64), state=((), np.int8), activated=((), bool), frame_id=((), np.int64),
                    start_frame=((), np.int64), score=((), np.float64), removed=((), bool))


def _as_rows(rows: Any) -> np.ndarray:
    """Row indices as a 1-D int64 array (the trackers' arrays pass through without a copy)."""
    if isinstance(rows, np.ndarray) and rows.dtype == np.int64 and rows.ndim == 1:
        return rows
    return np.asarray(rows, np.int64).reshape(-1)


def _member(rows: np.ndarray, size: int) -> np.ndarray:
    """A mask over the store's rows, True at ``rows`` (membership by row; np.isin sorts, and costs ten times more
    on the tens of rows of a frame)."""
    mask = np.zeros(size, bool)
    mask[rows] = True
    return mask


def _joint(a: np.ndarray, b: np.ndarray, size: int) -> np.ndarray:
    """``a`` then the rows of ``b`` not in ``a``, in ``b``'s order (official ``joint_stracks``; ``b`` never holds a
    row twice here, so its own repeats need no check)."""
    if not len(b):
        return a
    if not len(a):
        return b
    return np.concatenate([a, b[~_member(a, size)[b]]])


class TrackRows:
    """Rows of a :class:`TrackStore` in a given order: the tracks of a matcher call, as
    :func:`.motion_context.matcher_context` reads them (their columns, without a pass over objects)."""

    __slots__ = ('store', 'rows')

    def __init__(self, store: 'TrackStore', rows: np.ndarray) -> None:
        self.store, self.rows = store, rows

    def __len__(self) -> int:
        return len(self.rows)


class TrackStore:
    """The tracked and lost lists of one video over stacked per-track columns, the removed tracks and the id counter.

    Args:
        columns: the tracker's own columns, ``{name: (shape of one row, dtype)}``, e.g. ``mean=((8,), float)``.
        boxes: ``x1 y1 x2 y2`` of rows of the store (their current state), for duplicate removal.
        duplicate_thresh: IoU distance below which a tracked and a lost track are duplicates (official 0.15).
        capacity: rows allocated at first (doubled when full).
    """

    def __init__(self, columns: dict[str, tuple[tuple[int, ...], Any]] | None = None,
                 boxes: Callable[['TrackStore', np.ndarray], np.ndarray] | None = None,
                 duplicate_thresh: float = 0.15, capacity: int = 64) -> None:
        self.column_specs = dict(_BOOKKEEPING, **(columns or {}))
        self.boxes, self.duplicate_thresh, self.initial_capacity = boxes, duplicate_thresh, capacity
        self.reset()

    # ------------------------------------------------------------------------------------------------------- rows
    def reset(self) -> None:
        self.size, self.next_id = 0, 1
        for name, (shape, dtype) in self.column_specs.items():
            setattr(self, name, np.zeros((self.initial_capacity, *shape), dtype))
        self.tracked = np.zeros(0, np.int64)
        self.lost = np.zeros(0, np.int64)

    def _grow(self, needed: int) -> None:
        capacity = len(self.ids)
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        for name, (shape, dtype) in self.column_specs.items():
            grown = np.zeros((capacity, *shape), dtype)
            grown[:self.size] = getattr(self, name)[:self.size]
            setattr(self, name, grown)

    def set_row_shape(self, name: str, shape: tuple[int, ...]) -> None:
        """Give a column another row shape (an embedding's dimension, known from the first frame); the store must
        have no rows."""
        if self.size:
            raise ValueError(f'TrackStore: column {name!r} cannot change its shape while the store holds tracks')
        dtype = self.column_specs[name][1]
        self.column_specs[name] = (tuple(shape), dtype)
        setattr(self, name, np.zeros((len(self.ids), *shape), dtype))

    def add(self, scores: np.ndarray, frame_id: int, **columns: np.ndarray) -> np.ndarray:
        """New tracks (official ``activate``), one per score, ids consecutive in the given order; their rows.
        A track started in the video's first frame is confirmed at once."""
        count = len(scores)
        rows = np.arange(self.size, self.size + count)
        self._grow(self.size + count)
        self.size += count
        self.ids[rows] = np.arange(self.next_id, self.next_id + count)
        self.next_id += count
        self.state[rows], self.activated[rows], self.removed[rows] = TRACKED, frame_id == 1, False
        self.frame_id[rows] = self.start_frame[rows] = frame_id
        self.score[rows] = scores
        for name, values in columns.items():
            getattr(self, name)[rows] = values
        return rows

    def mark_matched(self, rows: np.ndarray, scores: np.ndarray, frame_id: int) -> None:
        """Official ``update`` / ``re_activate`` bookkeeping of matched rows (the tracker updates its own columns)."""
        self.score[rows], self.frame_id[rows] = scores, frame_id
        self.state[rows], self.activated[rows] = TRACKED, True

    # ----------------------------------------------------------------------------------------------------- lists
    def confirmed_and_unconfirmed(self) -> tuple[np.ndarray, np.ndarray]:
        """The tracked rows split into confirmed (activated) and unconfirmed ones, each in list order."""
        activated = self.activated[self.tracked]
        return self.tracked[activated], self.tracked[~activated]

    def pool(self, confirmed: np.ndarray) -> np.ndarray:
        """The first association's rows: confirmed tracked ones, then the lost ones."""
        return _joint(confirmed, self.lost, self.size)

    def stale_lost(self, frame_id: int, max_time_lost: int) -> np.ndarray:
        """Lost rows not matched for more than ``max_time_lost`` frames (to be removed by :meth:`finish_frame`)."""
        return self.lost[frame_id - self.frame_id[self.lost] > max_time_lost]

    def finish_frame(self, activated: np.ndarray, refound: np.ndarray, new_lost: np.ndarray,
                     removed: np.ndarray) -> np.ndarray:
        """The official end of ``update`` (:meth:`.TrackLifecycle.finish_frame` on rows): merge the frame's outcome
        into the lists, drop duplicates, and return the rows reported in this frame (tracked and activated)."""
        activated, refound, new_lost, removed = _as_rows(activated), _as_rows(refound), _as_rows(new_lost), _as_rows(
            removed)
        self.state[new_lost] = LOST
        self.state[removed] = REMOVED
        tracked = self.tracked[self.state[self.tracked] == TRACKED]
        tracked = _joint(_joint(tracked, activated, self.size), refound, self.size)
        lost = np.concatenate([self.lost[~_member(tracked, self.size)[self.lost]], new_lost])
        lost = lost[~self.removed[lost]]  # the removed ids of earlier frames
        self.removed[removed] = True
        self.tracked, self.lost = self._remove_duplicates(tracked, lost)
        if self.size > 2 * (len(self.tracked) + len(self.lost)) + 64:  # rows that left both lists pile up
            self.compact()
        return self.tracked[self.activated[self.tracked]]

    def _remove_duplicates(self, tracked: np.ndarray, lost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Of a tracked and a lost track with ``1 - IoU < thresh`` (+1 pixel IoU), drop the one tracked for fewer
        frames (official ``remove_duplicate_stracks``; equal ages drop the tracked one)."""
        if not len(tracked) or not len(lost):
            return tracked, lost
        boxes = self.boxes(self, np.concatenate([tracked, lost]))  # one conversion for both lists
        p, q = iou_distance_pairs(boxes[:len(tracked)], boxes[len(tracked):], 1.0, self.duplicate_thresh)
        if not len(p):
            return tracked, lost
        age_tracked = self.frame_id[tracked] - self.start_frame[tracked]
        age_lost = self.frame_id[lost] - self.start_frame[lost]
        older = age_tracked[p] > age_lost[q]
        keep_tracked, keep_lost = np.ones(len(tracked), bool), np.ones(len(lost), bool)
        keep_lost[q[older]] = False
        keep_tracked[p[~older]] = False
        return tracked[keep_tracked], lost[keep_lost]

    # -------------------------------------------------------------------------------------------------- compaction
    def compact(self) -> None:
        """Drop the rows in neither list (the rows of the lists move up, their order kept)."""
        live = np.zeros(self.size, bool)
        live[self.tracked] = live[self.lost] = True
        if live.all():
            return
        keep = np.flatnonzero(live)
        new_row = np.full(self.size, -1, np.int64)
        new_row[keep] = np.arange(len(keep))
        for name in self.column_specs:
            column = getattr(self, name)
            column[:len(keep)] = column[keep]
        self.size = len(keep)
        self.tracked, self.lost = new_row[self.tracked], new_row[self.lost]
