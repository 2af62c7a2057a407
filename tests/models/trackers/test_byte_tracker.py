"""BYTETracker: the official rules on hand-made frames, the lost-track buffer rule, degenerate detections.
(The comparison with the official code's own output is tests/models/trackers/test_bytetrack_golden.py.)"""
import numpy as np
import pytest

from vastmat.models.trackers import BYTETracker
from vastmat.structures.tracking import TrackingFrame


def box(x, y, w=40.0, h=40.0):
    return [x, y, x + w, y + h]


def step(tracker, boxes, scores, frame, frame_rate=None):
    return tracker.update(TrackingFrame.from_arrays(np.array(boxes, np.float64).reshape(-1, 4),
                                                    np.array(scores, np.float64), frame, frame_rate=frame_rate))


def test_first_frame_tracks_are_confirmed_at_once_later_ones_need_a_second_detection():
    tracker = BYTETracker(min_box_area=None)
    out = step(tracker, [box(0, 0)], [0.9], 1)
    assert out.ids.tolist() == [1]  # frame 1: activated immediately
    out = step(tracker, [box(2, 0), box(300, 300)], [0.9, 0.9], 2)
    assert out.ids.tolist() == [1]  # the new one is unconfirmed
    out = step(tracker, [box(4, 0), box(302, 300)], [0.9, 0.9], 3)
    assert sorted(out.ids.tolist()) == [1, 2]
    # the reported box is the Kalman state, not the detection
    assert not np.allclose(out.bboxes[out.ids == 1][0], box(4, 0))


def test_new_tracks_need_track_thresh_plus_0_1_and_low_scores_only_extend_tracks():
    tracker = BYTETracker(min_box_area=None)
    assert len(step(tracker, [box(0, 0)], [0.65], 1)) == 0  # > 0.6 but < 0.7: no new track
    tracker.reset()
    step(tracker, [box(0, 0)], [0.9], 1)
    out = step(tracker, [box(1, 0)], [0.3], 2)  # a low-score detection keeps the track
    assert out.ids.tolist() == [1] and out.scores.tolist() == [0.3]
    assert len(step(tracker, [box(500, 500)], [0.3], 3)) == 0  # and never starts one


def lost_for(tracker, gap, frame_rate):
    """Track one box, lose it for ``gap`` frames, show it again: its id (or [] if it was removed)."""
    tracker.reset()
    step(tracker, [box(0, 0)], [0.9], 1, frame_rate)
    for frame in range(2, gap + 2):
        assert len(step(tracker, [], [], frame, frame_rate)) == 0
    return step(tracker, [box(0, 0)], [0.9], gap + 2, frame_rate).ids.tolist()


def test_lost_buffer_follows_the_official_evaluator_by_default_whatever_the_video_rate():
    """The official evaluator builds every tracker with frame_rate=30: at 10 FPS lost tracks still live 30 frames
    (the video's rate used to shorten them to 10)."""
    tracker = BYTETracker(min_box_area=None)
    assert lost_for(tracker, 30, frame_rate=10) == [1]
    assert lost_for(tracker, 32, frame_rate=10) == []  # removed after 30: a new, unconfirmed track


def test_lost_buffer_scaled_by_the_video_rate_on_request():
    tracker = BYTETracker(min_box_area=None, buffer_frame_rate=None)
    assert lost_for(tracker, 10, frame_rate=10) == [1]  # int(10 / 30 * 30) = 10 frames
    assert lost_for(tracker, 12, frame_rate=10) == []
    assert lost_for(tracker, 25, frame_rate=25) == [1]
    assert tracker.required_inputs == ('frame_rate', )


def test_output_filters():
    tracker = BYTETracker(min_box_area=100, aspect_ratio_thresh=1.6)
    out = step(tracker, [box(0, 0, 5, 5), box(100, 0, 100, 40), box(300, 0, 40, 80)], [0.9, 0.9, 0.9], 1)
    assert len(out) == 1 and out.bboxes[0, 0] == pytest.approx(300)  # tiny and wide boxes not reported


def test_zero_size_detections_are_dropped_not_turned_into_nan():
    """A box clipped to zero width used to reach the Kalman filter (aspect 0, then inf/NaN in the cost matrix)."""
    tracker = BYTETracker(min_box_area=None)
    step(tracker, [box(0, 0)], [0.9], 1)
    frame = TrackingFrame.from_arrays([box(1, 0), [500, 0, 500, 40], [600, 10, 640, 10]], [0.9, 0.9, 0.8], 2)
    assert frame.num_dropped == 2 and len(frame.bboxes) == 1
    out = tracker.update(frame)
    assert out.ids.tolist() == [1] and np.isfinite(out.bboxes).all()


@pytest.mark.parametrize('boxes, scores, message', [
    ([[0, 0, np.nan, 10]], [0.9], 'NaN'), ([[10, 0, 0, 10]], [0.9], 'negative size'),
    ([[0, 0, 10, 10]], [0.9, 0.8], '1 boxes but 2 scores'), ([[0, 0, 10, 10]], [1.5], r'outside \[0, 1\]'),
    ([[0, 0, 10, 10]], [-0.2], r'outside \[0, 1\]')])
def test_bad_detections_raise_naming_the_video_and_frame(boxes, scores, message):
    with pytest.raises(ValueError, match=message) as error:
        TrackingFrame.from_arrays(boxes, scores, 7, video_name='zebra_3')
    assert "video 'zebra_3' frame 7" in str(error.value)


def test_scores_outside_0_1_used_to_make_fused_costs_negative():
    """With score 1.5 the fused cost 1 - IoU * score is negative; the frame input refuses such scores for every
    tracker (the detector's scores must be probabilities)."""
    with pytest.raises(ValueError, match='rescale the detector output'):
        step(BYTETracker(), [box(0, 0)], [1.5], 1)


def test_a_negative_size_within_float32_noise_is_a_zero_size_box():
    """x2 - x1 of -2e-5 on coordinates of 36 (an untrained head's c - s, c + s with s ~ 0) is dropped as zero size,
    not refused; -1e-3 is refused; a tiny positive size is kept."""
    from vastmat.structures.tracking import TrackingFrame
    from vastmat.structures.tracking import FrameDetections
    boxes = np.array([[36.0, 36.0, 35.99998, 40.0], [10.0, 10.0, 20.0, 10.000001], [0.0, 0.0, 10.0, 10.0]])
    frame = TrackingFrame(FrameDetections(boxes, np.array([0.9, 0.8, 0.7])), frame_id=1)
    assert frame.num_dropped == 1 and len(frame.detections.bboxes) == 2
    with pytest.raises(ValueError, match='negative size'):
        TrackingFrame(FrameDetections(np.array([[36.0, 36.0, 35.999, 40.0]]), np.array([0.9])), frame_id=1)
