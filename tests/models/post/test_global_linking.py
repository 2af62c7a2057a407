"""The global linker on hand-made videos: a crossing, a long occlusion, an animal that leaves and returns, a count
too small, an empty video; its two solvers agree; bad input and bad counts fail with a message."""
import numpy as np
import pytest

from vastmat.models.post import GlobalLinker
from vastmat.models.post.tracklets import build_tracklets, max_concurrent


def animal(track_id, frames, start, velocity, size=20.0, score=0.9):
    """Rows ``frame, id, x1, y1, x2, y2, score`` of a box moving at ``velocity`` (px a frame) from ``start`` at
    the first of ``frames`` (its position follows the frame number, so a gap keeps the motion going)."""
    frames = np.asarray(list(frames), float)
    centre = np.asarray(start, float) + (frames - frames[0])[:, None] * np.asarray(velocity, float)
    return np.column_stack([frames, np.full(len(frames), track_id), centre - size / 2, centre + size / 2,
                            np.full(len(frames), score)])


def video(*tracks):
    rows = np.concatenate(tracks)
    return rows[np.lexsort((rows[:, 1], rows[:, 0]))]


def identities_of(out, truth_rows):
    """The output identities of the rows that match ``truth_rows`` (same frame and box)."""
    keys = {(int(r[0]), round(r[2], 6)): int(r[1]) for r in out}
    return {keys[(int(r[0]), round(r[2], 6))] for r in truth_rows if (int(r[0]), round(r[2], 6)) in keys}


def assert_one_box_per_identity_and_frame(out):
    pairs = out[:, :2].astype(int)
    assert len(np.unique(pairs, axis=0)) == len(pairs)


def test_long_occlusion_is_linked_and_the_other_animal_kept_apart():
    before = animal(1, range(1, 21), (100, 100), (2, 0))
    after = animal(2, range(36, 61), (100 + 35 * 2, 100), (2, 0))  # hidden 15 frames, same motion
    other = animal(3, range(1, 61), (400, 300), (0, 1))
    linker = GlobalLinker()
    out = linker(video(before, after, other), 'occluded')
    assert len(identities_of(out, np.concatenate([before, after]))) == 1
    assert identities_of(out, other) != identities_of(out, before)
    report = linker.reports['occluded']
    assert (report.tracklets, report.identities, report.links) == (3, 2, 1)
    assert report.forced_out_detections == 0 and report.estimated_num_animals == 2
    assert len(out) == 20 + 25 + 60  # nothing dropped without a count


def test_crossing_keeps_each_animal_on_its_course():
    # two animals on one line cross at frame ~50; the tracker lost both around the crossing and started new tracks
    # that it numbered the wrong way round (id 3 is B, id 4 is A): motion decides, not the ids
    a1, b1 = animal(1, range(1, 44), (0, 100), (2, 0)), animal(2, range(1, 44), (200, 100), (-2, 0))
    a2 = animal(4, range(58, 101), (0 + 57 * 2, 100), (2, 0))
    b2 = animal(3, range(58, 101), (200 - 57 * 2, 100), (-2, 0))
    out = GlobalLinker()(video(a1, b1, a2, b2), 'crossing')
    ids_a, ids_b = identities_of(out, np.concatenate([a1, a2])), identities_of(out, np.concatenate([b1, b2]))
    assert len(ids_a) == 1 and len(ids_b) == 1 and ids_a != ids_b
    for identity in np.unique(out[:, 1]):
        x = out[out[:, 1] == identity][:, 2]
        assert np.all(np.diff(x) > 0) or np.all(np.diff(x) < 0)  # each identity keeps one direction


def test_animal_that_leaves_and_returns_needs_the_known_count():
    # leaves at frame 30 and comes back 50 frames later, beyond max_gap (30): unknown count, two identities
    leaves = animal(1, range(1, 31), (300, 100), (5, 0))
    returns = animal(2, range(81, 121), (445, 100), (-5, 0))
    rows = video(leaves, returns)
    free = GlobalLinker()
    assert len(np.unique(free(rows, 'v')[:, 1])) == 2
    assert free.reports['v'].estimated_num_animals == 1
    known = GlobalLinker(num_animals=1)
    out = known(rows, 'v')
    assert np.unique(out[:, 1]).tolist() == [1] and len(out) == len(rows)
    assert known.reports['v'].forced_out_detections == 0
    # a maximum instead (animals come and go): links stay within max_gap, so the count forces one tracklet out
    capped = GlobalLinker(max_animals=1)
    out = capped(rows, 'v')
    report = capped.reports['v']
    assert (report.identities, report.forced_out_tracklets, report.forced_out_detections) == (1, 1, 30)
    assert len(out) == 40  # the longer, surer tracklet is the one kept


def test_count_too_small_forces_out_the_least_sure_tracklet_and_reports_it(caplog):
    a = animal(1, range(1, 41), (100, 100), (1, 0))
    b = animal(2, range(1, 41), (300, 100), (1, 0))
    c = animal(3, range(1, 41), (500, 100), (1, 0), score=0.4)
    linker = GlobalLinker(num_animals={'three': 2})
    out = linker(video(a, b, c), 'three')
    assert np.unique(out[:, 1]).tolist() == [1, 2]
    assert_one_box_per_identity_and_frame(out)
    assert identities_of(out, c) == set()  # the low-score animal is the one left without an identity
    report = linker.reports['three']
    assert (report.num_animals, report.forced_out_tracklets, report.forced_out_detections) == (2, 1, 40)
    # another video than the one the dict names: no count
    assert len(np.unique(linker(video(a, b, c), 'other')[:, 1])) == 3


def test_empty_video():
    linker = GlobalLinker(num_animals=2)
    out = linker(np.zeros((0, 7)), 'empty')
    assert out.shape == (0, 7)
    report = linker.reports['empty']
    assert (report.tracklets, report.identities, report.links, report.forced_out_detections) == (0, 0, 0, 0)


def test_solvers_agree_on_a_busy_video():
    rng = np.random.default_rng(0)
    tracks, next_id = [], 1
    for k in range(6):  # six animals, each track broken into pieces by gaps of 1 to 12 frames
        frame, start, velocity = 1, rng.uniform(0, 800, 2), rng.normal(0, 2, 2)
        while frame < 300:
            length = int(rng.integers(10, 60))
            tracks.append(animal(next_id, range(frame, min(frame + length, 300)),
                                 start + (frame - 1) * velocity, velocity, size=30))
            frame += length + int(rng.integers(1, 13))
            next_id += 1
    rows = video(*tracks)
    for options in ({}, dict(num_animals=6), dict(num_animals=4), dict(max_animals=5)):
        highs, networkx = GlobalLinker(**options), GlobalLinker(solver='networkx', **options)
        out = highs(rows, 'v')
        np.testing.assert_array_equal(out, networkx(rows, 'v'))
        assert_one_box_per_identity_and_frame(out)
        if options.get('num_animals') == 6:
            assert highs.reports['v'].identities == 6 and highs.reports['v'].forced_out_detections == 0


def test_appearance_decides_where_motion_cannot():
    # two still animals hidden at the same place reappear side by side: only their embeddings tell them apart
    a1, b1 = animal(1, range(1, 11), (100, 100), (0, 0)), animal(2, range(1, 11), (100, 120), (0, 0))
    a2, b2 = animal(3, range(16, 26), (100, 120), (0, 0)), animal(4, range(16, 26), (100, 100), (0, 0))
    rows = video(a1, b1, a2, b2)
    looks = {1: [1, 0], 2: [0, 1], 3: [1, 0], 4: [0, 1]}  # track 3 looks like track 1, though it is where 2 was
    features = np.array([looks[int(i)] for i in rows[:, 1]], float)
    out = GlobalLinker(appearance_weight=5.0)(rows, 'v', features=features)
    assert len(identities_of(out, np.concatenate([a1, a2]))) == 1
    assert len(identities_of(out, np.concatenate([b1, b2]))) == 1


def test_bad_input_and_counts_fail_with_a_message():
    rows = video(animal(1, range(1, 5), (0, 0), (1, 0)))
    with pytest.raises(ValueError, match='id 1 appears twice in frame 2'):
        GlobalLinker()(np.concatenate([rows, rows[1:2]]), 'dup')
    bad = rows.copy()
    bad[0, 3] = np.nan
    with pytest.raises(ValueError, match='nan'):
        GlobalLinker()(bad, 'nan')
    flat = rows.copy()
    flat[0, 4] = flat[0, 2]
    with pytest.raises(ValueError, match='frame 1 id 1: a box with no width or height'):
        GlobalLinker()(flat, 'flat')
    for count, message in ((0, 'must be 1 or more'), (-2, 'must be 1 or more'), (2.5, 'not a whole number'),
                           ('two', 'not a whole number')):
        with pytest.raises(ValueError, match=message):
            GlobalLinker(num_animals=count)
    with pytest.raises(ValueError, match=r"max_animals\['v'\]"):
        GlobalLinker(max_animals={'v': 0})
    with pytest.raises(TypeError, match='unknown option'):
        GlobalLinker(max_gapp=3)


def test_tracklets_and_concurrency():
    rows = video(animal(5, range(3, 9), (0, 0), (2, 1)), animal(7, range(8, 12), (50, 0), (0, 0)))
    tracklets = build_tracklets(rows, window=3)
    assert tracklets.ids.tolist() == [5, 7]
    assert tracklets.start.tolist() == [3, 8] and tracklets.end.tolist() == [8, 11]
    np.testing.assert_allclose(tracklets.tail_velocity[0], [2, 1])
    np.testing.assert_allclose(tracklets.head_velocity[1], [0, 0])
    assert max_concurrent(tracklets) == 2 and max_concurrent(tracklets, min_length=5) == 1
