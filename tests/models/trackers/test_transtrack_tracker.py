"""TransTrackTracker (TransTrack's association): the official code's own output on query outputs built from real data
(tests/fixtures/transtrack_official, made by running PeizeSun/TransTrack's models/tracker.py outside the project on
the inputs of tests/helpers/transtrack_inputs.py; its README says how), then the rules on hand-built frames: the
first-frame initialisation, the query-index propagation, the 1.2 rejection, the 32-frame memory, the output order,
the matcher swap and the input errors. The expected values of the hand-built frames without a matcher swap are the
official tracker's (the same functions were run against it outside the project, README.md)."""
import gzip
import os.path as osp

import numpy as np
import pytest

from helpers.common import REPO, SHARED_DATA, assert_same_tracks, read_results

from vastmat.models.trackers import TransTrackTracker
from vastmat.structures.tracking import FrameDetections, MissingTrackerInput, TrackingFrame

GOLDEN = osp.join(REPO, 'tests', 'fixtures', 'transtrack_official')
AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')

# variant: (tracker arguments, videos, rows of the official output, sha256 of the inputs it read; README.md)
VARIANTS = {
    'default': (dict(track_thresh=0.4, max_age=32),
                ['chicken_3', 'deer_6', 'dolphin_4', 'duck_5', 'horse_4', 'penguin_5', 'pig_3', 'zebra_5'], 19662,
                '795ed96b00250a69c8e50ae6fb21b0ef942a4cd8be95c05ce0a3b8f5efe17f85'),
    'thresh0.5_age8': (dict(track_thresh=0.5, max_age=8), ['chicken_5', 'goose_4', 'rabbit_4'], 3165,
                       'a92e24c9833fd01da7f4299e4e0ae4d1e64c685a8c723277468609b3e089d32e'),
}


# ------------------------------------------------------------------------------------------ the official output
@pytest.fixture(scope='module')
def queries():
    if not osp.isdir(AT10):
        pytest.skip(f'shared data not found at {AT10}')
    from helpers.transtrack_inputs import video_queries
    return {variant: {v: video_queries(v) for v in videos} for variant, (_, videos, _, _) in VARIANTS.items()}


def read_golden(variant: str, video: str, tmp_path):
    path = tmp_path / f'{variant}-{video}.txt'
    with gzip.open(osp.join(GOLDEN, variant, f'{video}.txt.gz'), 'rt') as f:
        path.write_text(f.read())
    return read_results(path)


@pytest.mark.parametrize('variant', sorted(VARIANTS))
def test_equals_the_official_tracker(queries, variant, tmp_path):
    """Same rows in the same order, the same ids (not only up to relabelling: the official writer's renumbering is
    the identity), boxes to 0.01 px, scores to 1e-6."""
    from helpers.transtrack_inputs import inputs_digest, tracking_frames
    from vastmat.datasets.formats import track_rows_to_results
    args, videos, expected_rows, sha = VARIANTS[variant]
    assert inputs_digest(queries[variant]) == sha, (
        f'tests/helpers/transtrack_inputs.py no longer builds the inputs the official {variant} run read')
    tracker = TransTrackTracker(**args)
    total = 0
    for video in videos:
        tracker.reset()
        rows = []
        for frame in tracking_frames(video, queries[variant][video]):
            out = tracker.update(frame)
            rows += [[frame.frame_id, i, *b, s] for i, b, s in zip(out.ids, out.bboxes, out.scores)]
        ours, theirs = track_rows_to_results(np.array(rows)), read_golden(variant, video, tmp_path)
        total += assert_same_tracks(ours, theirs, f'{variant}/{video}', atol=0.01)
        np.testing.assert_array_equal(ours.frames, theirs.frames, err_msg=video)
        np.testing.assert_array_equal(ours.ids, theirs.ids, err_msg=f'{video}: ids or their order differ')
        np.testing.assert_allclose(ours.boxes, theirs.boxes, rtol=0, atol=0.01, err_msg=video)
        np.testing.assert_allclose(ours.scores, theirs.scores, rtol=0, atol=1e-6, err_msg=video)
    assert total == expected_rows


def test_the_inputs_exercise_every_rule(queries):
    """The golden inputs hold rejections, frames without detections and revivals at the edge of the memory."""
    from helpers.transtrack_inputs import tracking_frames
    tracker = TransTrackTracker()
    revived_after = set()
    empty_frames = 0
    for video in ('duck_5', 'chicken_3'):
        tracker.reset()
        last_seen = {}
        for frame in tracking_frames(video, queries['default'][video]):
            stale = {t.track_id for t in tracker.unmatched}
            out = tracker.update(frame)
            empty_frames += len(out) == 0
            for i in out.ids.tolist():
                if i in stale:
                    revived_after.add(frame.frame_id - last_seen[i] - 1)
                last_seen[i] = frame.frame_id
    assert empty_frames >= 10
    assert 31 in revived_after and max(revived_after) == 31  # revived after 31 unmatched frames, never after 32


# -------------------------------------------------------------------------------------------- hand-built frames
def box(x, y=0.0, w=100.0, h=100.0):
    return [x, y, x + w, y + h]


PAD = box(5000, 5000, 10, 10)  # a padding query's box


def frame(t, boxes, scores, track_boxes=None, video='v'):
    """A TrackingFrame of the given queries (``track_boxes``: the previous frame's queries relocated; default: the
    current boxes, i.e. every query stands still)."""
    boxes = np.array(boxes, np.float64).reshape(-1, 4)
    track_boxes = boxes if track_boxes is None else np.array(track_boxes, np.float64).reshape(-1, 4)
    return TrackingFrame(FrameDetections(boxes, np.array(scores, np.float64)), t, video_name=video,
                         extra_dets=dict(tracking=FrameDetections(track_boxes, np.full(len(track_boxes), 0.5))))


def ids_of(out):
    return out.ids.tolist()


def test_first_frame_starts_a_track_per_query_at_or_above_track_thresh():
    tracker = TransTrackTracker()
    out = tracker.update(frame(1, [box(0), box(200), box(400), box(600), box(800)], [0.3, 0.9, 0.5, 0.4, 0.39],
                               track_boxes=[PAD] * 5))  # the first frame's track rows are not read
    assert ids_of(out) == [1, 2, 3]  # queries 1, 2, 3 in query order; 0.4 is enough (>=)
    np.testing.assert_array_equal(out.bboxes, [box(200), box(400), box(600)])
    np.testing.assert_allclose(out.scores, [0.9, 0.5, 0.4], atol=1e-6)
    # a new video (frame 1 again) resets the tracker as the official engine does: ids restart at 1
    out = tracker.update(frame(1, [box(0), PAD], [0.9, 0.1], video='w'))
    assert ids_of(out) == [1]


def test_tracks_follow_the_track_decoder_box_of_their_query():
    """Frame 2's query order is shuffled and the object jumped far: only the track decoder's box for the previous
    query slot (row i of extra_dets['tracking']) links it to its track."""
    tracker = TransTrackTracker()
    tracker.update(frame(1, [box(0), PAD, box(1000)], [0.9, 0.1, 0.8]))
    # previous query 0 (id 1) was relocated to x=3000, previous query 2 (id 2) stayed at x=1000
    out = tracker.update(frame(2, [box(1005), box(3010), PAD], [0.7, 0.95, 0.2],
                               track_boxes=[box(3000), PAD, box(1000)]))
    assert ids_of(out) == [2, 1]  # matched detections in query order
    np.testing.assert_array_equal(out.bboxes, [box(1005), box(3010)])  # the detection boxes are reported
    np.testing.assert_allclose(out.scores, [0.7, 0.95], atol=1e-6)


def test_rejection_at_giou_minus_0_2():
    """1 - GIoU > 1.2 is rejected: a 100 px box and one shifted by 150 px have GIoU = -0.2 exactly (kept), by 151 px
    GIoU = -0.2032 (rejected: a new id, the old track goes unreported)."""
    for shift, expected in ((150.0, [1]), (149.0, [1]), (151.0, [2])):
        tracker = TransTrackTracker()
        tracker.update(frame(1, [box(0), PAD], [0.9, 0.1]))
        out = tracker.update(frame(2, [PAD, box(shift)], [0.1, 0.9], track_boxes=[box(0), PAD]))
        assert ids_of(out) == expected, shift


def test_min_similarity_is_the_rejection_in_similarity_units():
    """0.45 rejects the pair the official 1.2 (0.4) keeps: GIoU -0.1968, S = 0.4016."""
    tracker = TransTrackTracker(min_similarity=0.45)
    tracker.update(frame(1, [box(0), PAD], [0.9, 0.1]))
    assert ids_of(tracker.update(frame(2, [PAD, box(149)], [0.1, 0.9], track_boxes=[box(0), PAD]))) == [2]


def run_gap(gap, max_age=32):
    """A track detected in frame 1, unmatched for ``gap`` frames (no detection passes the threshold), then detected
    at the same place; returns the ids reported in the last frame and whether the track was reported in between."""
    tracker = TransTrackTracker(max_age=max_age)
    tracker.update(frame(1, [box(0), PAD], [0.9, 0.1]))
    reported = []
    for t in range(2, gap + 2):  # track boxes: the query stands still
        reported += ids_of(tracker.update(frame(t, [box(0), PAD], [0.2, 0.1])))
    return ids_of(tracker.update(frame(gap + 2, [PAD, box(0)], [0.1, 0.9]))), reported


def test_memory_of_32_frames():
    """The official ``age < max_age`` rule: a track survives 31 unmatched frames (revived with its id), not 32."""
    assert run_gap(1) == ([1], [])
    assert run_gap(31) == ([1], [])  # inactive tracks are not reported
    assert run_gap(32) == ([2], [])
    assert run_gap(2, max_age=3) == ([1], [])
    assert run_gap(3, max_age=3) == ([2], [])


def test_stale_tracks_keep_their_box_and_moved_tracks_their_relocated_box():
    """An unmatched track takes the track decoder's box once (the frame after its detection), then keeps it."""
    tracker = TransTrackTracker()
    tracker.update(frame(1, [box(0), PAD], [0.9, 0.1]))
    tracker.update(frame(2, [PAD, PAD], [0.1, 0.1], track_boxes=[box(500), PAD]))  # relocated to 500, unmatched
    tracker.update(frame(3, [PAD, PAD], [0.1, 0.1], track_boxes=[box(2000), PAD]))  # not its query any more
    assert [t.bbox.tolist() for t in tracker.unmatched] == [box(500)]
    assert [(t.age, t.active) for t in tracker.unmatched] == [(3, 0)]
    assert ids_of(tracker.update(frame(4, [box(510), PAD], [0.9, 0.1]))) == [1]


def test_official_order_of_new_ids_and_output():
    """Matched detections first (query order), then new ids: first the detections Hungarian left out (query order),
    then the rejected ones."""
    tracker = TransTrackTracker()
    tracker.update(frame(1, [PAD, box(0), PAD, PAD], [0.1, 0.9, 0.1, 0.1]))
    # one track (id 1) at x=0; query 0 is the cheapest for it but rejected (GIoU -0.26), queries 2 and 3 are far
    out = tracker.update(frame(2, [box(160), PAD, box(3000), box(6000)], [0.9, 0.1, 0.9, 0.9],
                               track_boxes=[PAD, box(0), PAD, PAD]))
    assert ids_of(out) == [2, 3, 4]
    np.testing.assert_array_equal(out.bboxes, [box(3000), box(6000), box(160)])
    # next frame: id 4 continues at query 0, id 2 at query 3 (its track box 3001); query 1 is new (its Hungarian
    # pair, with a far track, is rejected)
    out = tracker.update(frame(3, [box(165), box(9000), PAD, box(3005)], [0.9, 0.9, 0.1, 0.9],
                               track_boxes=[box(163), PAD, box(3001), box(6001)]))
    assert ids_of(out) == [4, 2, 5]


def test_matcher_replaces_giou():
    """matcher=CDA: S = 0.25 IoU + 0.75 CenterSim. Boxes 110 px apart: GIoU S = 0.476 keeps the pair, CDA S = 0.167
    rejects it."""
    from vastmat.models.association import CDA, GIoU
    a, b = np.array([box(0)]), np.array([box(110)])
    assert GIoU()(a, b).scores[0, 0] == pytest.approx(0.5 * (1 - 1000 / 21000))
    assert CDA()(a, b).scores[0, 0] == pytest.approx(0.75 * (1 - 110 / np.hypot(100, 100)))
    for matcher, expected in ((None, [1]), (dict(type='GIoU'), [1]), (dict(type='CDA'), [2]),
                              (dict(type='CDA', alpha=0.25), [2]), (CDA(alpha=1.0), [2])):
        tracker = TransTrackTracker(matcher=matcher)
        tracker.update(frame(1, [box(0)], [0.9]))
        assert ids_of(tracker.update(frame(2, [box(110)], [0.9], track_boxes=[box(0)]))) == expected, matcher
    # the other way round: thin boxes 40 px apart, GIoU -1/3 (rejected), CDA's centre term alone 0.90 (kept)
    for matcher, expected in ((None, [2]), (dict(type='CDA', alpha=0.0), [1])):
        tracker = TransTrackTracker(matcher=matcher)
        tracker.update(frame(1, [box(0, w=20, h=400)], [0.9]))
        out = tracker.update(frame(2, [box(40, w=20, h=400)], [0.9], track_boxes=[box(0, w=20, h=400)]))
        assert ids_of(out) == expected, matcher


def test_registry_and_input_errors():
    from vastmat.registry import MODELS
    tracker = MODELS.build(dict(type='TransTrackTracker', track_thresh=0.5))
    assert isinstance(tracker, TransTrackTracker) and tracker.required_inputs == ('extra_dets.tracking', )
    boxes = np.array([box(0), box(200), box(400)])
    with pytest.raises(ValueError, match=r"3 object queries .* but 2 rows in frame.extra_dets\['tracking'\]"):
        tracker.update(TrackingFrame(FrameDetections(boxes, np.full(3, 0.9)), 1, video_name='v', extra_dets=dict(
            tracking=FrameDetections(boxes[:2], np.full(2, 0.9)))))
    with pytest.raises(MissingTrackerInput, match="'extra_dets.tracking'"):
        tracker.update(TrackingFrame.from_arrays(boxes, np.full(3, 0.9), 1))
    zero = boxes.copy()
    zero[1, 2] = zero[1, 0]  # a zero-width query would be dropped, shifting the query indices
    with pytest.raises(ValueError, match='query index identity'):
        tracker.update(TrackingFrame(FrameDetections(zero, np.full(3, 0.9)), 1, video_name='v',
                                     extra_dets=dict(tracking=FrameDetections(boxes, np.full(3, 0.9)))))
    with pytest.raises(ValueError, match='min_similarity'):
        TransTrackTracker(min_similarity=1.2)
