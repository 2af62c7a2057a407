"""The tracks of one video kept as stacked arrays.

:class:`TrackTable` holds the rows: each track is one row of its columns (id, state, last matched frame, start
frame, score, and the columns a table kind declares: a Kalman mean and covariance, an embedding, ...), with growth
and compaction. A column is declared on the table's class (``mean: np.ndarray = column((8, ))``: the shape of one
row and the dtype), so a reader and a type checker see it where the kind is defined (:class:`KalmanTracks`,
:class:`.DiffMOTTracks`, :class:`.TPATable`, ...); on a table it is a plain array attribute. A tracker gathers the
state of some tracks with one fancy index (``table.mean[rows]``) and writes an update back with one assignment (or
steps the rows in place, :meth:`.KalmanFilterXYAH.predict_rows`), never a pass over Python objects.
:class:`TrackList` keeps one list of live rows over a table (TrackTrack, SORT).

:class:`TrackStore` adds the lifecycle of the ByteTrack family (the official ``joint_stracks`` / ``sub_stracks`` /
``remove_duplicate_stracks`` bookkeeping of ByteTrack, FairMOT and DiffMOT) on rows instead of objects: the tracked
and lost lists are int arrays of rows in the official list order. Rows that left both lists are dropped by
:meth:`TrackStore.compact` (every few frames), which keeps the lists' order. The semantics equal the official
lists' (tests/models/trackers/test_track_store.py checks them against the lists transcribed on objects, on random
frame outcomes), the official quirk included: removed tracks are subtracted from the lost list before this
frame's removals are added, so a lost track removed in frame t is still lost (and matchable) in frame t + 1.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np
from numba import njit

from vastmat.structures.pair_kernels import iou_distance_pairs

from .track_lifecycle import LOST, REMOVED, TRACKED

ColumnSpecs = dict[str, tuple[tuple[int, ...], Any]]


class Column(NamedTuple):
    """A declared column of a track table kind: the shape of one row and the dtype (written with :func:`column`)."""

    shape: tuple[int, ...]
    dtype: Any


def column(shape: tuple[int, ...] = (), dtype: Any = np.float64) -> Any:
    """Declare a column on a table kind's class: ``mean: np.ndarray = column((8, ))``.

    The table class keeps the declarations apart (:meth:`TrackTable.declared_columns`) and removes them from its
    attributes; on a table the column is an array attribute (one row per track) that :meth:`TrackTable.reset`
    creates. Typed ``Any``, as ``dataclasses.field``, so that a type checker takes the annotation. (No class
    attribute of the column's name is left: one of a Python class, a descriptor or not, keeps CPython 3.11 from
    specialising the reads of ``table.mean`` on the hot paths, which then cost half as much again.)
    """
    return Column(tuple(shape), dtype)


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


@njit(cache=True, nogil=True, inline='always')
def _append_absent(rows: np.ndarray, out: np.ndarray, count: int,
                   present: np.ndarray) -> int:  # pragma: no cover (compiled)
    """Append the ``rows`` not ``present`` to ``out[count:]`` (marking them); the new count (``rows`` never holds a
    row twice)."""
    for r in rows:
        if not present[r]:
            out[count] = r
            present[r] = True
            count += 1
    return count


@njit(cache=True, nogil=True)
def _merge_lists(tracked: np.ndarray, lost: np.ndarray, activated: np.ndarray, refound: np.ndarray,
                 new_lost: np.ndarray, removed: np.ndarray, state: np.ndarray,
                 removed_flag: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover (compiled)
    """The official list operations of the end of ``update`` on rows (compiled: in numpy they take ~15 calls on
    tens of rows), in place on ``state`` and ``removed_flag``; the new tracked and lost lists, before duplicate removal:
    new_lost rows become lost and removed rows removed; tracked = the still-tracked rows, then activated, then
    refound ones not in it (``joint_stracks`` twice); lost = the lost rows not tracked now, then new_lost, without
    the rows removed in earlier frames (``sub_stracks``; this frame's removals are subtracted next frame, the
    official quirk)."""
    for r in new_lost:
        state[r] = LOST
    for r in removed:
        state[r] = REMOVED
    in_tracked = np.zeros(len(state), np.bool_)
    merged = np.empty(len(tracked) + len(activated) + len(refound), np.int64)
    count = 0
    for r in tracked:
        if state[r] == TRACKED:
            merged[count] = r
            in_tracked[r] = True
            count += 1
    count = _append_absent(activated, merged, count, in_tracked)
    count = _append_absent(refound, merged, count, in_tracked)
    kept_lost = np.empty(len(lost) + len(new_lost), np.int64)
    kept = 0
    for r in lost:
        if not in_tracked[r] and not removed_flag[r]:
            kept_lost[kept] = r
            kept += 1
    for r in new_lost:
        if not removed_flag[r]:
            kept_lost[kept] = r
            kept += 1
    for r in removed:
        removed_flag[r] = True
    return merged[:count], kept_lost[:kept]


class TrackRows:
    """Rows of a :class:`TrackTable` in a given order: the tracks of a matcher call, as
    :func:`.motion_context.matcher_context` reads them (their columns, without a pass over objects)."""

    __slots__ = ('store', 'rows')

    def __init__(self, store: 'TrackTable', rows: np.ndarray) -> None:
        self.store, self.rows = store, rows

    def __len__(self) -> int:
        return len(self.rows)


class TrackTable:
    """Per-track columns of one video as stacked arrays, and the id counter.

    The bookkeeping columns are declared here; a table kind declares its own with :func:`column`.

    Args:
        columns: row shapes known only when the table is built (they replace the declared ones, e.g. a history
            length), or an ad-hoc table's further columns (tests): ``{name: (shape of one row, dtype)}``.
        capacity: rows allocated at first (doubled when full).
    """

    ids: np.ndarray = column((), np.int64)
    state: np.ndarray = column((), np.int8)  # TRACKED, LOST, REMOVED (.track_lifecycle)
    frame_id: np.ndarray = column((), np.int64)  # the last frame the track was matched in (or started)
    start_frame: np.ndarray = column((), np.int64)
    score: np.ndarray = column((), np.float64)

    def __init__(self, columns: ColumnSpecs | None = None, capacity: int = 64) -> None:
        self.column_specs = dict(self.declared_columns(), **(columns or {}))
        self.initial_capacity = capacity
        self.reset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _take_declarations(cls)

    @classmethod
    def declared_columns(cls) -> ColumnSpecs:
        """The columns declared by the class and its bases, the bases' first."""
        specs: ColumnSpecs = {}
        for base in reversed(cls.__mro__):
            specs.update(vars(base).get('_own_columns', {}))
        return specs

    def reset(self) -> None:
        self.size, self.next_id = 0, 1
        for name, (shape, dtype) in self.column_specs.items():
            setattr(self, name, np.zeros((self.initial_capacity, *shape), dtype))

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

    def set_row_shape(self, name: str, shape: tuple[int, ...], where: str = 'TrackTable') -> None:
        """Give a column another row shape (an embedding's dimension, known from the first frame with one); a
        table holding tracks of another shape raises ValueError naming ``where`` (the video and frame)."""
        shape = tuple(shape)
        if getattr(self, name).shape[1:] == shape:
            return
        if self.size:
            raise ValueError(f'{where}: {name} of shape {shape}, the tracks have {getattr(self, name).shape[1:]}')
        dtype = self.column_specs[name][1]
        self.column_specs[name] = (tuple(shape), dtype)
        setattr(self, name, np.zeros((len(self.ids), *shape), dtype))

    def add(self, scores: np.ndarray, frame_id: int, **columns: Any) -> np.ndarray:
        """New tracks, one per score, ids consecutive in the given order, state TRACKED unless ``columns`` set
        another (a value, or one per track); the kind's columns not given are zero. Their rows."""
        unknown = set(columns) - set(self.column_specs)
        if unknown:
            raise KeyError(f'TrackTable.add: unknown column(s) {sorted(unknown)}; the columns are '
                           f'{list(self.column_specs)}')
        count, first = len(scores), self.size
        self._grow(first + count)
        self.size += count
        rows = slice(first, first + count)  # (a slice: assigning to it costs a third of an index array's)
        self.ids[rows] = np.arange(self.next_id, self.next_id + count)
        self.next_id += count
        self.state[rows] = TRACKED
        self.frame_id[rows] = self.start_frame[rows] = frame_id
        self.score[rows] = scores
        for name in self.column_specs:
            if name in columns:
                getattr(self, name)[rows] = columns[name]
            elif name not in _BOOKKEEPING:  # a row freed by keep_rows may hold an old track's values
                getattr(self, name)[rows] = 0
        return np.arange(first, first + count)

    def keep_rows(self, *lists: np.ndarray) -> tuple[np.ndarray, ...]:
        """Drop the rows in none of ``lists`` (the others move up, their order kept); the lists renumbered."""
        live = np.zeros(self.size, bool)
        for rows in lists:
            live[rows] = True
        if live.all():
            return lists
        keep = np.flatnonzero(live)
        new_row = np.full(self.size, -1, np.int64)
        new_row[keep] = np.arange(len(keep))
        for name in self.column_specs:
            column = getattr(self, name)
            column[:len(keep)] = column[keep]
        self.size = len(keep)
        return tuple(new_row[rows] for rows in lists)

    def compact_if_sparse(self, *lists: np.ndarray) -> tuple[np.ndarray, ...]:
        """:meth:`keep_rows` once the rows in none of ``lists`` pile up (more than the listed ones and 64 besides:
        every few frames, not every frame); else the lists as they are."""
        if self.size > 2 * sum(len(rows) for rows in lists) + 64:
            return self.keep_rows(*lists)
        return lists


def _take_declarations(cls: type) -> None:
    """Move the :func:`column` declarations of a table class's body to its ``_own_columns``."""
    own = {name: value for name, value in vars(cls).items() if isinstance(value, Column)}
    for name in own:
        delattr(cls, name)
    cls._own_columns = own  # type: ignore[attr-defined]


_take_declarations(TrackTable)
_BOOKKEEPING = frozenset(TrackTable.declared_columns())


class KalmanTracks(TrackTable):
    """A table kind whose tracks carry a Kalman state (the xyah filter of ByteTrack and FairMOT, TrackTrack's xywh
    one): mixed in before :class:`TrackStore` or :class:`TrackList` by the kinds that have it."""

    mean: np.ndarray = column((8, ))  # the centre at 0:2 and its velocity at 4:6
    covariance: np.ndarray = column((8, 8))


class TrackList(TrackTable):
    """A :class:`TrackTable` whose tracks form one list: ``live``, the rows of the tracks alive, in creation order
    (new rows are appended, removals keep the order). TrackTrack's and SORT's lifecycle."""

    def reset(self) -> None:
        super().reset()
        self.live = np.zeros(0, np.int64)

    def add(self, scores: np.ndarray, frame_id: int, **columns: Any) -> np.ndarray:
        """New tracks (:meth:`TrackTable.add`) appended to ``live``; their rows."""
        rows = super().add(scores, frame_id, **columns)
        self.live = np.concatenate([self.live, rows])
        return rows

    def keep(self, alive: np.ndarray) -> None:
        """Keep the live tracks where the bool mask ``alive`` (over ``live``) is True; the rows of the others are
        dropped once they pile up."""
        self.live, = self.compact_if_sparse(self.live[alive])


class TrackStore(TrackTable):
    """The tracked and lost lists of one video over a :class:`TrackTable`, and the removed tracks.

    Args:
        columns: row shapes known only when the store is built, or an ad-hoc store's further columns
            (:class:`TrackTable`).
        boxes: ``x1 y1 x2 y2`` of rows of the store (their current state), for duplicate removal.
        duplicate_thresh: IoU distance below which a tracked and a lost track are duplicates (official 0.15).
        capacity: rows allocated at first (doubled when full).
    """

    # the ByteTrack family's lifecycle: confirmed by a second detection, removed (its id is never matched again)
    activated: np.ndarray = column((), bool)
    removed: np.ndarray = column((), bool)

    def __init__(self, columns: ColumnSpecs | None = None,
                 boxes: Callable[['TrackStore', np.ndarray], np.ndarray] | None = None,
                 duplicate_thresh: float = 0.15, capacity: int = 64) -> None:
        self.boxes, self.duplicate_thresh = boxes, duplicate_thresh
        super().__init__(columns, capacity)

    def reset(self) -> None:
        super().reset()
        self.tracked = np.zeros(0, np.int64)
        self.lost = np.zeros(0, np.int64)

    def add(self, scores: np.ndarray, frame_id: int, **columns: Any) -> np.ndarray:
        """New tracks (official ``activate``), one per score, ids consecutive in the given order; their rows.
        A track started in the video's first frame is confirmed at once."""
        return super().add(scores, frame_id, activated=frame_id == 1, removed=False, **columns)

    def mark_matched(self, rows: np.ndarray, scores: np.ndarray, frame_id: int,
                     keep_score: np.ndarray | None = None) -> None:
        """Official ``update`` / ``re_activate`` bookkeeping of matched rows (the tracker updates its own columns).
        ``keep_score``: a mask of the rows that keep their score (FairMOT's and DiffMOT's ``re_activate`` does not
        copy it; ByteTrack's does)."""
        if keep_score is not None:
            scores = np.where(keep_score, self.score[rows], scores)
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
        """The official end of ``update`` on rows: merge the frame's outcome into the lists, drop duplicates, and
        return the rows reported in this frame (tracked and activated).

        Args:
            activated: rows matched while tracked, and new rows.
            refound: lost rows matched again.
            new_lost: tracked rows not matched in this frame.
            removed: rows removed in this frame (unconfirmed without a match, stale lost ones).
        """
        tracked, lost = _merge_lists(self.tracked, self.lost, _as_rows(activated), _as_rows(refound),
                                     _as_rows(new_lost), _as_rows(removed), self.state, self.removed)
        self.tracked, self.lost = self.compact_if_sparse(*self._remove_duplicates(tracked, lost))
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

    def compact(self) -> None:
        """Drop the rows in neither list (the rows of the lists move up, their order kept)."""
        self.tracked, self.lost = self.keep_rows(self.tracked, self.lost)


class KalmanTrackStore(KalmanTracks, TrackStore):
    """The ByteTrack family's store (ByteTrack, FairMOT): the xyah Kalman state and the detection taken last."""

    detection_box: np.ndarray = column((4, ))  # ltwh
