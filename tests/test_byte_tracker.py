"""ByteTracker: the official rules on hand-made frames, identical tracks to the per-track port of the official code
on AnimalTrack (10 FPS, simulated detections) with several matchers, input validation."""
import os
import os.path as osp

import numpy as np
import pytest

from conftest import ANIMALTRACK, needs_animaltrack
from vastmat.models.trackers import ByteTracker
from vastmat.models.trackers.byte_tracker_reference import ReferenceByteTracker


def box(x, y, w=40.0, h=40.0):
    return [x, y, x + w, y + h]


def step(tracker, boxes, scores, frame):
    return tracker.update(np.array(boxes, np.float64).reshape(-1, 4), np.array(scores, np.float64), frame)


def test_first_frame_tracks_are_confirmed_at_once_later_ones_need_a_second_detection():
    tracker = ByteTracker(min_box_area=None)
    out = step(tracker, [box(0, 0)], [0.9], 1)
    assert out.ids.tolist() == [1]  # frame 1: activated immediately
    out = step(tracker, [box(2, 0), box(300, 300)], [0.9, 0.9], 2)
    assert out.ids.tolist() == [1]  # the new one is unconfirmed
    out = step(tracker, [box(4, 0), box(302, 300)], [0.9, 0.9], 3)
    assert sorted(out.ids.tolist()) == [1, 2]
    # the reported box is the Kalman state, not the detection
    assert not np.allclose(out.bboxes[out.ids == 1][0], box(4, 0))


def test_new_tracks_need_track_thresh_plus_0_1_and_low_scores_only_extend_tracks():
    tracker = ByteTracker(min_box_area=None)
    assert len(step(tracker, [box(0, 0)], [0.65], 1)) == 0  # > 0.6 but < 0.7: no new track
    tracker.reset()
    step(tracker, [box(0, 0)], [0.9], 1)
    out = step(tracker, [box(1, 0)], [0.3], 2)  # a low-score detection keeps the track
    assert out.ids.tolist() == [1] and out.scores.tolist() == [0.3]
    assert len(step(tracker, [box(500, 500)], [0.3], 3)) == 0  # and never starts one


def test_lost_tracks_come_back_with_their_id_within_the_buffer_scaled_by_frame_rate():
    tracker = ByteTracker(min_box_area=None)
    tracker.reset(frame_rate=10)  # int(10 / 30 * 30) = 10 frames
    assert tracker.max_time_lost == 10
    step(tracker, [box(0, 0)], [0.9], 1)
    for frame in range(2, 12):  # lost for 10 frames
        assert len(step(tracker, [], [], frame)) == 0
    out = step(tracker, [box(0, 0)], [0.9], 12)
    assert out.ids.tolist() == [1]
    tracker.reset(frame_rate=10)
    step(tracker, [box(0, 0)], [0.9], 1)
    for frame in range(2, 14):  # 12 frames: removed
        step(tracker, [], [], frame)
    assert len(step(tracker, [box(0, 0)], [0.9], 14)) == 0  # a new, unconfirmed track


def test_output_filters():
    tracker = ByteTracker(min_box_area=100, aspect_ratio_thresh=1.6)
    out = step(tracker, [box(0, 0, 5, 5), box(100, 0, 100, 40), box(300, 0, 40, 80)], [0.9, 0.9, 0.9], 1)
    assert len(out) == 1 and out.bboxes[0, 0] == pytest.approx(300)  # tiny and wide boxes not reported


@pytest.mark.parametrize('boxes, scores, message', [
    ([[0, 0, np.nan, 10]], [0.9], 'NaN'), ([[10, 0, 0, 10]], [0.9], 'negative size'),
    ([[0, 0, 10, 10]], [0.9, 0.8], '1 boxes but 2 scores')])
def test_bad_detections_raise(boxes, scores, message):
    with pytest.raises(ValueError, match=message):
        step(ByteTracker(), boxes, scores, 1)


def load_simulated(root, names):
    from vastmat.datasets.formats import ltwh_to_xyxy, read_detections, read_seqinfo
    videos = []
    for name in names:
        info = read_seqinfo(osp.join(root, name, 'seqinfo.ini'))
        dets = read_detections(osp.join(root, name, 'det', 'det.txt'))
        frames = [(ltwh_to_xyxy(dets.boxes[dets.frames == f]), dets.scores[dets.frames == f])
                  for f in range(1, info['seqLength'] + 1)]
        videos.append((info['frameRate'], frames))
    return videos


@pytest.fixture(scope='module')
def simulated_animaltrack(tmp_path_factory):
    from conftest import python
    out = str(tmp_path_factory.mktemp('at10'))
    python('tools/data/simulate_detections.py', '--data-root', ANIMALTRACK, '--out', out, '--stride', '3')
    return out


@needs_animaltrack
@pytest.mark.parametrize('matcher', [None, dict(type='CDA', mode='forward'),
                                     dict(type='CDA', gate=dict(type='NormDIoUGate', thr=0.10))])
def test_identical_to_the_per_track_port_on_animaltrack(simulated_animaltrack, matcher):
    names = sorted(os.listdir(simulated_animaltrack))[::6]  # 6 of the 32 videos
    total = 0
    for frame_rate, frames in load_simulated(simulated_animaltrack, names):
        fast, reference = ByteTracker(matcher=matcher), ReferenceByteTracker(matcher=matcher)
        fast.reset(frame_rate)
        reference.reset(frame_rate)
        for frame, (boxes, scores) in enumerate(frames, start=1):
            a, b = fast.update(boxes, scores, frame), reference.update(boxes, scores, frame)
            assert a.ids.tolist() == b.ids.tolist(), frame
            np.testing.assert_allclose(a.bboxes, b.bboxes, rtol=0, atol=1e-6)
            assert a.scores.tolist() == b.scores.tolist()
            total += len(a)
    assert total > 5000
