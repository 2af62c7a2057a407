"""TrackTrack's parts on hand-built inputs (values computed by hand from the official formulas, reference/trackers.md
section 3): the xywh NSA Kalman filter, the four TPA cost terms with penalties and gate, the iterative mutual-best
matching, TAI's order-dependent suppression, and the lifecycle (New -> Tracked after min_len, lost, removed)."""
import math

import numpy as np
import pytest

from vastmat.models.association import MutualBest
from vastmat.models.motion import KalmanFilterXYWH
from vastmat.models.trackers.track_lifecycle import LOST, NEW, TRACKED, moving_average_unit
from vastmat.models.trackers.tracktrack import TrackTrackTracker
from vastmat.models.trackers.tracktrack_costs import (angle_distance, confidence_distance, corner_velocities,
                                                      cosine_distance)
from vastmat.models.trackers.tracktrack_nms import deleted_detections, deleted_rows_read, track_aware_nms
from vastmat.structures.tracking import FrameDetections, TrackingFrame


def test_nsa_kalman_filter_hand_computed_steps():
    kf = KalmanFilterXYWH()
    mean, cov = kf.initiate(np.array([[10., 20., 4., 8.]]))
    # initial std [2w, 2h, 2w, 2h, 10w, 10h, 10w, 10h], no position/velocity weight
    assert np.allclose(np.diag(cov[0]), np.array([8, 16, 8, 16, 40, 80, 40, 80]) ** 2)
    mean, cov = kf.predict(mean, cov)
    # P' = F P F^T + Q; Q std = [w, h, w, h] / 20 and [w, h, w, h] / 160
    assert np.allclose(mean[0], [10, 20, 4, 8, 0, 0, 0, 0])
    assert math.isclose(cov[0, 0, 0], 64 + 1600 + 0.2 ** 2)
    assert math.isclose(cov[0, 0, 4], 1600)
    assert math.isclose(cov[0, 4, 4], 1600 + 0.025 ** 2)
    assert math.isclose(cov[0, 3, 3], 256 + 6400 + 0.4 ** 2)
    # NSA update: R = (sp [w, h, w, h])^2 (1 - score), the variance scaled; each coordinate is its own 2x2 block
    z, score = np.array([[12., 21., 5., 8.]]), 0.5
    new_mean, new_cov = kf.update(mean, cov, z, np.array([score]))
    p00, p04, p44 = cov[0, 0, 0], cov[0, 0, 4], cov[0, 4, 4]
    s = p00 + 0.2 ** 2 * (1 - score)
    assert math.isclose(new_mean[0, 0], 10 + p00 / s * 2)
    assert math.isclose(new_mean[0, 4], p04 / s * 2)
    assert math.isclose(new_cov[0, 0, 0], p00 - p00 ** 2 / s)
    assert math.isclose(new_cov[0, 4, 4], p44 - p04 ** 2 / s)
    h_var = cov[0, 3, 3]
    assert math.isclose(new_mean[0, 3], 8.0) and math.isclose(new_cov[0, 3, 3],
                                                              h_var - h_var ** 2 / (h_var + 0.4 ** 2 * 0.5))
    # score 1: the measurement is taken exactly
    exact, _ = kf.update(mean, cov, z, np.array([1.0]))
    assert np.allclose(exact[0, :4], z[0])


def test_camera_motion_warp_rotates_pairs_and_translates_centre():
    mean = np.array([[10., 20., 4., 8., 1., 2., 0.5, 0.25]])
    cov = np.eye(8)[None] * 2.0
    rot = np.array([[0., -1.], [1., 0.]])
    warped, warped_cov = KalmanFilterXYWH.warp(mean, cov, np.hstack([rot, [[3.], [5.]]]))
    assert np.allclose(warped[0], [-20 + 3, 10 + 5, -8, 4, -2, 1, -0.25, 0.5])
    assert np.allclose(warped_cov[0], np.eye(8) * 2.0)  # rotation keeps an isotropic covariance


def test_corner_velocities_keep_the_official_y2_minus_y1_quirk():
    start, end = np.array([[0., 0., 10., 10.]]), np.array([[10., 0., 20., 10.]])
    v = corner_velocities(start, end)[0, 0]
    n = 10 + 1e-5
    # lt, lb, rt, rb; 'lb' and 'rb' y: y2_end - y1_start = 10, normalised by |(dx, y2_end - y2_start)| = 10
    assert np.allclose(v, [[10 / n, 0], [10 / n, 10 / n], [10 / n, 0], [10 / n, 10 / n]])


def test_angle_confidence_and_cosine_terms():
    velocity = np.tile([1., 0.], (4, 1))[None]  # every corner moving right
    prev = np.array([[0., 0., 10., 10.]])
    dets = np.array([[0., 10., 10., 20.],  # moved straight down: every corner at 90 degrees
                     [10., 0., 20., 10.]])  # moved right: lt and rt at 0, lb and rb at 45 degrees (the quirk)
    scores = np.array([0.9, 0.5])
    angle = angle_distance(velocity, prev, dets, scores)
    lb_right = math.acos(10 / (10 + 1e-5) / 1) / math.pi  # dot = 10/n (x only), clipped below 1
    assert math.isclose(angle[0, 0], 0.5 * 0.9)
    assert math.isclose(angle[0, 1], (2 * math.acos(min(1, 10 / (10 + 1e-5))) / math.pi + 2 * lb_right) / 4 * 0.5)
    # confidence: |s + (s - s_prev) - s_det|
    assert np.allclose(confidence_distance(np.array([0.8]), np.array([0.6]), np.array([0.7, 1.0])), [[0.3, 0.0]])
    # cosine distance clipped to [0, 1]
    f = np.array([[1., 0.]])
    assert np.allclose(cosine_distance(f, np.array([[1., 0.], [0., 1.], [-1., 0.]])), [[0., 1., 1.]])


def _angle_distance_by_arrays(velocity, prev, boxes, scores):
    """The official ``angle_distance`` written with whole-matrix numpy operations over every pair and corner."""
    directions = corner_velocities(prev, boxes)  # (n, m, 4, 2)
    dot = velocity[:, None, :, 0] * directions[..., 0] + velocity[:, None, :, 1] * directions[..., 1]
    corner_angles = np.abs(np.arccos(np.clip(dot, -1, 1))) / np.pi / 4
    angle = corner_angles[..., 0] + corner_angles[..., 1]
    angle += corner_angles[..., 2]
    angle += corner_angles[..., 3]
    return angle * scores[None, :]


def test_angle_distance_on_chosen_pairs_equals_the_full_matrix():
    """The compiled per-pair loops give the whole-matrix numpy formula's bits, on every pair or on chosen ones."""
    rng = np.random.default_rng(1)
    for n, m in [(7, 9), (1, 1), (5, 0), (0, 4), (12, 30)]:
        velocity, prev = rng.normal(size=(n, 4, 2)), rng.uniform(0, 500, (n, 4))
        boxes, scores = rng.uniform(0, 500, (m, 4)), rng.uniform(0, 1, m)
        full = angle_distance(velocity, prev, boxes, scores)
        np.testing.assert_array_equal(full, _angle_distance_by_arrays(velocity, prev, boxes, scores))
        pairs = rng.uniform(size=(n, m)) < 0.3
        part = angle_distance(velocity, prev, boxes, scores, pairs=pairs)
        assert part.shape == (n, m)
        np.testing.assert_array_equal(part[pairs], full[pairs])  # bit for bit
        assert (part[~pairs] == 0).all()


def _track(tracker, box, score=0.8, prev_score=0.8, feature=(1., 0.), frame=5):
    """A Tracked track at ``box`` (its Kalman state) started in ``frame``: its row of the tracker's table."""
    box = np.asarray(box, float).reshape(1, 4)
    feature = np.asarray(feature, float).reshape(1, -1)
    tracker.tracks.set_row_shape('feature', feature.shape[1:])
    tracker._initiate(FrameDetections(box, np.array([score]), features=feature), frame)
    row = tracker.tracks.live[-1:]
    tracker.tracks.prev_score[row], tracker.tracks.state[row] = prev_score, TRACKED
    return row


def test_tpa_cost_weights_penalties_and_gate():
    tracker = TrackTrackTracker(deleted_dets=None, max_time_lost=20)
    track = _track(tracker, [0, 0, 10, 10])
    boxes = np.array([[0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 10, 10], [30, 30, 40, 40]], float)
    feats = np.array([[1., 0.], [0., 1.], [1., 0.], [1., 0.]])
    scores = np.array([0.8, 0.8, 0.8, 0.8])
    dets = FrameDetections(boxes, scores, features=feats)
    # columns: 1 high, 1 low, 2 deleted; same box => HMIoU 1, confidence 0; a zero track velocity is at 90 degrees
    # to every direction: 0.05 * 0.5 * score 0.8 = 0.02
    cost = tracker.tpa_cost(track, dets, num_high=1, num_low=1, frame_id=6)
    assert np.allclose(cost[0, :3], [0.02, 0.02 + 0.5 + 0.2, 0.02 + 0.4])
    assert cost[0, 3] == 1.0  # IoU 0 <= 0.10: gated
    # without features: the appearance term is dropped and the rest scaled by 1.15 / 0.65
    plain = FrameDetections(boxes[:1] + [[0, 0, 0, 1]], np.array([0.6]))
    cost = tracker.tpa_cost(track, plain, num_high=1, num_low=0, frame_id=6)
    hmiou = (10 / 11) * (11 * 11 / (11 * 12))  # HIoU (no +1) x IoU (+1 pixel)
    scale = 1.15 / 0.65
    assert math.isclose(cost[0, 0], scale * (0.5 * (1 - hmiou) + 0.1 * 0.2 + 0.05 * 0.5 * 0.6), rel_tol=1e-12)


def test_mutual_best_tightens_its_threshold_per_pass():
    cost = np.array([[0.10, 0.20, 0.90],
                     [0.15, 0.58, 0.90],
                     [0.90, 0.90, 0.56]])
    # pass 1 (thr 0.60): (0, 0) and (2, 2) are mutual minima; pass 2 (thr 0.55): row 1's best left, 0.58 >= 0.55
    assert MutualBest(0.60, 0.05)(cost).matches.tolist() == [[0, 0], [2, 2]]
    # a slower tightening takes (1, 1) in pass 2 (0.58 < 0.59)
    assert MutualBest(0.60, 0.01)(cost).matches.tolist() == [[0, 0], [1, 1], [2, 2]]


def test_track_aware_nms_is_order_dependent():
    boxes = np.array([[0, 0, 10, 10], [1, 0, 11, 10], [2, 0, 12, 10]], float)
    # 0 overlaps 1 (IoU 10*11/(12*11)=0.83), 1 overlaps 2, 0 and 2: 9/13 = 0.69 > 0.55 too
    scores = np.array([0.7, 0.9, 0.8])
    # in the given order: 0 (0.7) suppresses nothing of higher score; 1 (0.9) suppresses 0 and 2
    assert track_aware_nms(np.zeros((0, 4)), boxes, scores, 0.55, 0.6).tolist() == [False, True, False]
    # order matters: A (0.8) overlaps B (0.9) and C (0.7), B and C do not overlap (IoU 0.57, 0.57, 0.29). Given
    # as A, C, B: A suppresses C before B suppresses A, so only B starts (score-sorted NMS would keep B and C)
    a, b, c = [3, 0, 13, 10], [0, 0, 10, 10], [6, 0, 16, 10]
    assert track_aware_nms(np.zeros((0, 4)), np.array([a, c, b], float), np.array([0.8, 0.7, 0.9]), 0.55,
                           0.6).tolist() == [False, False, True]
    # low scores and candidates overlapping an alive track are not started
    assert track_aware_nms(np.array([[0, 0, 10, 10.]]), boxes[:1], np.array([0.9]), 0.55, 0.6).tolist() == [False]
    assert track_aware_nms(np.zeros((0, 4)), boxes[:1], np.array([0.6]), 0.55, 0.6).tolist() == [False]


def test_deleted_detections_are_the_nms95_boxes_without_a_near_twin():
    main = FrameDetections(np.array([[0, 0, 10, 10.]]), np.array([0.9]))
    extra = FrameDetections(np.array([[0, 0, 10, 10.], [0.1, 0, 10.1, 10], [3, 0, 13, 10]]), np.array([.9, .8, .7]))
    # IoU with +1: (0.1 shift) 10.9*11/(11.1*11) = 0.982 >= 0.97 -> a twin; (3 shift) 0.57 -> deleted
    assert deleted_detections(main, extra).scores.tolist() == [0.7]
    # the rows the tracker reads: deleted and above det_thr; none in a frame without main detections
    extra = FrameDetections(np.vstack([extra.bboxes, [[30, 0, 40, 10]]]), np.array([.9, .8, .7, .5]))
    assert deleted_rows_read(main, extra, 0.6).tolist() == [False, False, True, False]
    assert deleted_rows_read(main, extra, 0.4).tolist() == [False, False, True, True]
    assert deleted_rows_read(FrameDetections(np.zeros((0, 4)), np.zeros(0)), extra, 0.4).tolist() == [False] * 4


def _frame(frame_id, boxes, scores, **kw):
    return TrackingFrame(FrameDetections(np.asarray(boxes, float).reshape(-1, 4), np.asarray(scores, float)),
                         frame_id=frame_id, frame_rate=10, **kw)


def test_lifecycle_new_tracked_lost_removed_and_empty_frames():
    tracker = TrackTrackTracker(deleted_dets=None, min_box_area=None)
    box = [100, 100, 140, 180]
    assert len(tracker.update(_frame(1, [box], [0.9]))) == 0  # New after one observation
    assert len(tracker.update(_frame(2, [box], [0.9]))) == 0  # two
    table = tracker.tracks
    out = tracker.update(_frame(3, [box], [0.9]))
    assert out.ids.tolist() == [1] and table.state[table.live].tolist() == [TRACKED]  # min_len 3
    tracker.update(_frame(4, [[500, 500, 540, 580]], [0.9]))
    assert table.state[table.live].tolist() == [LOST, NEW]
    # a frame without detections drops New tracks and keeps the others
    tracker.update(_frame(5, np.zeros((0, 4)), []))
    assert table.ids[table.live].tolist() == [1]
    # max_time_lost = 2 * frameRate = 20: lost since frame 3, still there at 23, removed at 24
    for f in range(6, 24):
        tracker.update(_frame(f, np.zeros((0, 4)), []))
    assert table.ids[table.live].tolist() == [1]
    tracker.update(_frame(24, np.zeros((0, 4)), []))
    assert len(table.live) == 0


def test_missing_nms95_set_names_the_input():
    from vastmat.structures.tracking import MissingTrackerInput
    tracker = TrackTrackTracker()
    assert 'extra_dets.nms95' in tracker.required_inputs and 'frame_rate' in tracker.required_inputs
    with pytest.raises(MissingTrackerInput, match='nms95'):
        tracker.update(_frame(1, [[0, 0, 20, 20]], [0.9]))
    with pytest.raises(KeyError, match='unknown cost weight'):
        TrackTrackTracker(weights=dict(geometric=1.0, apperance=0.5))


@pytest.mark.xdist_group('tracktrack_matchers')
def test_matcher_table_runs_tracktrack_with_each_matcher(tmp_path):
    """tools/analysis/matcher_table.py --tracker tracktrack on two AnimalTrack videos at 10 FPS (simulated detections,
    no features, no NMS-0.95 set, no camera motion, no AFLink): each matcher's config runs and writes metrics."""
    import json
    import os.path as osp

    from helpers.common import SHARED_DATA, tool
    at10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
    if not osp.isdir(at10):
        pytest.skip(f'shared data not found at {at10}')
    result = tool('tools/analysis/matcher_table.py', '--tracker', 'tracktrack', '--data-root', osp.join(at10, 'gt'),
                  '--det-root', osp.join(at10, 'dets'), '--work-dir', tmp_path, '--videos', 'chicken_3', 'zebra_3',
                  '--cfg-options', 'model.tracker.deleted_dets=None', 'model.tracker.camera_motion=None',
                  'model.post_processors=[]')
    matchers = ['hmiou', 'diou', 'cda-fixed', 'cda-adaptive']
    assert list(result['rows']) == matchers
    saved = json.load(open(tmp_path / 'table.json'))
    assert saved['tracker'] == 'tracktrack' and saved['match_thresh'] == 0.6
    for matcher in matchers:
        per_video = json.load(open(tmp_path / matcher / 'metrics_per_video.json'))
        assert set(per_video) == {'chicken_3', 'zebra_3', 'COMBINED'}
        assert per_video['COMBINED']['HOTA'] > 0.5, matcher


def test_official_presets_and_per_video_overrides():
    """The official per-dataset settings are configs; MOT17's per-sequence thresholds follow the video's name."""
    import os.path as osp

    from mmengine.config import Config

    from helpers.common import REPO
    cfg = Config.fromfile(osp.join(REPO, 'configs', 'tracktrack', 'tracktrack_cached-dets_official-mot17.py'))
    tracker = TrackTrackTracker(**{k: v for k, v in cfg.model.tracker.items() if k not in ('type', 'camera_motion')})
    assert (tracker.gate.thr, tracker.aspect_ratio_thresh, tracker.max_time_lost) == (0.10, 1.6, None)
    seen = {}
    for video in ('MOT17-03-FRCNN', 'MOT17-05-FRCNN', 'MOT17-14-FRCNN'):
        tracker.reset()
        tracker.update(_frame(1, [[0, 0, 20, 40]], [0.9], video_name=video, extra_dets=dict(
            nms95=FrameDetections(np.zeros((0, 4)), np.zeros(0)))))
        seen[video] = (tracker.det_thr, tracker.init_thr, tracker.match_thr)
    assert seen == {'MOT17-03-FRCNN': (0.65, 0.75, 0.70), 'MOT17-05-FRCNN': (0.60, 0.70, 0.70),
                    'MOT17-14-FRCNN': (0.45, 0.55, 0.70)}
    dance = Config.fromfile(osp.join(REPO, 'configs', 'tracktrack', 'tracktrack_cached-dets_official-dancetrack.py'))
    assert dance.model.tracker.freeze_wh_velocity and dance.model.post_processors[0].type == 'AFLink'


def test_appearance_average_equals_the_official_per_track_update_bit_for_bit():
    """TrackTrack's / DiffMOT's feature update of all matched tracks at once equals the official one track at a time
    (``f = b * f + (1 - b) * det; f /= np.linalg.norm(f)``), bit for bit (a row-wise norm with axis=1 would not)."""
    rng = np.random.default_rng(7)
    old, new = rng.normal(size=(300, 128)), rng.normal(size=(300, 128))
    weight = rng.uniform(0.9, 1.0, 300)
    expected = []
    for f, d, b in zip(old, new, weight):
        f = b * f + (1 - b) * d
        expected.append(f / np.linalg.norm(f))
    np.testing.assert_array_equal(moving_average_unit(old, new, weight), np.array(expected))
