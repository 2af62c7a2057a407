"""vastmat.models.trackers.track_store: the lifecycle on stacked arrays equals the object lifecycle
(:class:`TrackLifecycle`) on random frame outcomes: the same tracked and lost lists (ids, in order) and the same
reported tracks every frame, duplicates, the removed-track quirk and compaction included."""
import numpy as np
import pytest

from helpers.object_lifecycle import Track, TrackLifecycle
from vastmat.models.trackers.track_lifecycle import NEW, REMOVED, TRACKED
from vastmat.models.trackers.track_store import TrackList, TrackStore, TrackTable


class BoxTrack(Track):
    __slots__ = ('box', )

    def __init__(self, track_id, score, frame_id, box):
        super().__init__(track_id, score, frame_id)
        self.box = box


def object_boxes(tracks):
    return np.array([t.box for t in tracks]).reshape(-1, 4)


def store_boxes(store, rows):
    return store.box[rows]


class CountingStore(TrackStore):
    """Counts the tracks duplicate removal drops (so the test knows it ran)."""
    dropped = 0

    def _remove_duplicates(self, tracked, lost):
        kept = super()._remove_duplicates(tracked, lost)
        self.dropped += len(tracked) + len(lost) - len(kept[0]) - len(kept[1])
        return kept


def random_box(rng, near=None):
    if near is not None and rng.random() < 0.5:  # a near copy: duplicates happen
        return near + rng.normal(0, 2, 4)
    x, y = rng.uniform(0, 500, 2)
    w, h = rng.uniform(10, 80, 2)
    return np.array([x, y, x + w, y + h])


@pytest.mark.parametrize('seed', range(6))
def test_the_store_lifecycle_equals_the_object_lifecycle(seed):
    rng = np.random.default_rng(seed)
    objects = TrackLifecycle(object_boxes, duplicate_thresh=0.3)
    store = CountingStore(dict(box=((4, ), np.float64)), store_boxes, duplicate_thresh=0.3, capacity=2)
    row_of = lambda store, ids: np.array([int(np.flatnonzero(store.ids[:store.size] == i)[0])  # noqa: E731
                                          for i in ids], np.int64)
    ids = lambda tracks: [t.track_id for t in tracks]  # noqa: E731
    quirk = 0
    for frame_id in range(1, 120):
        confirmed, unconfirmed = objects.confirmed_and_unconfirmed()
        pool = objects.pool(confirmed)
        s_confirmed, s_unconfirmed = store.confirmed_and_unconfirmed()
        s_pool = store.pool(s_confirmed)
        assert store.ids[s_pool].tolist() == ids(pool) and store.ids[s_unconfirmed].tolist() == ids(unconfirmed)

        matched = [t for t in pool if rng.random() < 0.6]
        activated = [t for t in matched if t.state == TRACKED]
        refound = [t for t in matched if t.state != TRACKED]
        quirk += sum(t.state == REMOVED for t in refound)  # removed last frame, still lost, matched again
        new_lost = [t for t in pool if t not in matched and t.state == TRACKED and rng.random() < 0.8]
        kept_unconfirmed = [t for t in unconfirmed if rng.random() < 0.5]
        removed = [t for t in unconfirmed if t not in kept_unconfirmed]
        activated += kept_unconfirmed
        scores = {t.track_id: float(rng.random()) for t in matched + kept_unconfirmed}
        boxes = {t.track_id: random_box(rng, t.box) for t in matched + kept_unconfirmed}
        for t in matched + kept_unconfirmed:
            t.mark_matched(scores[t.track_id], frame_id)
            t.box = boxes[t.track_id]
        rows = row_of(store, list(scores))
        store.mark_matched(rows, np.array(list(scores.values())), frame_id)
        store.box[rows] = np.array(list(boxes.values())).reshape(-1, 4)

        fresh_boxes = [random_box(rng, pool[0].box if pool else None) for _ in range(rng.integers(0, 4))]
        fresh_scores = rng.random(len(fresh_boxes))
        fresh = [BoxTrack(objects.new_id(), float(s), frame_id, b) for s, b in zip(fresh_scores, fresh_boxes)]
        s_fresh = store.add(fresh_scores, frame_id, box=np.array(fresh_boxes).reshape(-1, 4))
        assert store.ids[s_fresh].tolist() == ids(fresh)
        stale = objects.stale_lost(frame_id, 3)
        assert store.ids[store.stale_lost(frame_id, 3)].tolist() == ids(stale)

        args = (activated + fresh, refound, new_lost, removed + stale)
        s_args = [row_of(store, ids(part)) for part in args]
        reported = objects.finish_frame(*args)
        s_reported = store.finish_frame(*s_args)
        assert store.ids[s_reported].tolist() == ids(reported), frame_id
        assert store.ids[store.tracked].tolist() == ids(objects.tracked), frame_id
        assert store.ids[store.lost].tolist() == ids(objects.lost), frame_id
        assert store.state[store.tracked].tolist() == [t.state for t in objects.tracked]
        assert store.state[store.lost].tolist() == [t.state for t in objects.lost]
        if frame_id % 7 == 0:
            size = store.size
            store.compact()
            assert store.size <= size
            assert store.ids[store.tracked].tolist() == ids(objects.tracked)
            assert store.ids[store.lost].tolist() == ids(objects.lost)
            assert np.array_equal(store.box[store.tracked], object_boxes(objects.tracked))
    assert store.next_id == objects.next_id > 30
    assert store.dropped > 0 and quirk > 0  # duplicate removal and the removed-track quirk happened


def test_add_grows_and_reset_starts_over():
    store = TrackStore(dict(mean=((8, ), np.float64)), capacity=1)
    rows = store.add(np.array([0.9, 0.8, 0.7]), 1, mean=np.arange(24.0).reshape(3, 8))
    assert rows.tolist() == [0, 1, 2] and store.ids[rows].tolist() == [1, 2, 3] and store.activated[rows].all()
    assert store.mean[2, 7] == 23.0 and len(store.mean) >= 3
    later = store.add(np.array([0.5]), 5)
    assert store.ids[later].tolist() == [4] and not store.activated[later].any()
    store.reset()
    assert store.size == 0 and store.next_id == 1 and not len(store.tracked)


def test_table_rows_freed_by_compaction_come_back_clean():
    """TrackTable: keep_rows renumbers the lists in order; a row it freed and add reuses holds
    no value of the track it held before; add names an unknown column."""
    table = TrackTable(dict(velocity=((2, ), np.float64), seen=((), bool)), capacity=2)
    rows = table.add(np.array([0.9, 0.8, 0.7]), 3, velocity=np.ones((3, 2)), seen=True, state=NEW)
    assert table.state[rows].tolist() == [NEW] * 3 and table.start_frame[rows].tolist() == [3] * 3
    live, other = table.keep_rows(rows[[2, 0]], rows[:1])
    assert live.tolist() == [1, 0] and other.tolist() == [0] and table.size == 2
    assert table.ids[live].tolist() == [3, 1]
    reused = table.add(np.array([0.5]), 4)
    assert reused.tolist() == [2] and table.ids[2] == 4 and table.state[2] == TRACKED
    assert table.velocity[2].tolist() == [0.0, 0.0] and not table.seen[2]  # not row 2's old (1, 1) and True
    with pytest.raises(KeyError, match='speed'):
        table.add(np.array([0.5]), 4, speed=1.0)


def test_track_list_keeps_creation_order_and_compacts():
    """TrackList (TrackTrack's and SORT's lifecycle): new rows are appended to ``live``; keep drops tracks in
    order, and once dropped rows pile up they are compacted away, ids and columns moving with their rows."""
    table = TrackList(dict(box=((4, ), np.float64)))
    table.add(np.ones(100), 1, box=np.arange(400.0).reshape(100, 4))
    assert table.live.tolist() == list(range(100))
    table.keep(np.arange(100) % 5 == 3)  # rows 3, 8, ..., 98
    assert table.size == 100 and table.live.tolist() == list(range(3, 100, 5))  # 100 <= 2 * 20 + 64: not yet
    table.add(np.ones(10), 2)
    table.keep(np.r_[True, np.zeros(18, bool), True, np.zeros(10, bool)])
    assert table.size == 2 and table.live.tolist() == [0, 1]  # compacted: rows 3 and 98 moved up
    assert table.ids[table.live].tolist() == [4, 99] and table.box[1].tolist() == [392.0, 393.0, 394.0, 395.0]
    table.add(np.ones(1), 3)
    assert table.live.tolist() == [0, 1, 2] and table.ids[2] == 111
