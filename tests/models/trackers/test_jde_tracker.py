"""JDETracker (FairMOT's tracker): the official code's own output on real data (tests/fixtures/jde_official, made by
running ifzhang/FairMOT's tracker outside the project on inputs written by tests/helpers/jde_inputs.py; its README
says how), then the association rules on hand-built frames: the appearance + Mahalanobis fusion and its gate, the
feature EMA, the lost-track buffer, the matcher swap and the missing-input error."""
import gzip
import os
import os.path as osp

import numpy as np
import pytest

from helpers.common import REPO, SHARED_DATA, assert_same_tracks, detection_boxes_moved, read_results, tool

from vastmat.models.trackers import JDETracker
from vastmat.structures.tracking import MissingTrackerInput, TrackingFrame

pytestmark = pytest.mark.xdist_group('jde')  # the module's tests on one worker: it writes the inputs fixture once

GOLDEN = osp.join(REPO, 'tests', 'fixtures', 'jde_official')
AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
TUD = osp.join(SHARED_DATA, 'MOT15-TUD', 'train')


# ------------------------------------------------------------------------------------------ the official output
def golden_videos(variant: str) -> list[str]:
    return sorted(f[:-len('.txt.gz')] for f in os.listdir(osp.join(GOLDEN, variant)) if f.endswith('.txt.gz'))


def read_golden(variant: str, video: str, tmp_dir):
    path = osp.join(str(tmp_dir), f'{variant}-{video}.txt')
    with gzip.open(osp.join(GOLDEN, variant, f'{video}.txt.gz'), 'rt') as f, open(path, 'w') as out:
        out.write(f.read())
    return read_results(path)


@pytest.fixture(scope='module')
def inputs(tmp_path_factory):
    """The official run's input files, written again (bit-identical: same recipe, same seeds)."""
    from helpers.jde_inputs import write_inputs
    root = tmp_path_factory.mktemp('jde_inputs')
    if osp.isdir(AT10):
        write_inputs(str(root / 'animaltrack'), 'animaltrack', golden_videos('animaltrack'))
    if osp.isdir(TUD):
        write_inputs(str(root / 'tud'), 'tud', golden_videos('tud'))
    return root


# sha256 of each source's input files concatenated in name order, as the official run read them (README.md)
INPUT_SHA256 = dict(animaltrack='fedab9c315fa63e4f1a706b8fc567fa4dfca454199d0ff3e03fd60a1f8d2e1b0',
                    tud='e3298057d419e57b3c409d797bdcfbc79382a36d70716fbfefe552d39ad679a2')


def check_inputs(inputs, source: str) -> None:
    import hashlib
    digest = hashlib.sha256()
    for name in sorted(os.listdir(inputs / source)):
        digest.update((inputs / source / name).read_bytes())
    assert digest.hexdigest() == INPUT_SHA256[source], (
        f'tests/helpers/jde_inputs.py no longer writes the inputs the official {source} run read')


def check_variant(inputs, tmp_path, variant: str, source: str, **tracker) -> int:
    from mmengine.registry import init_default_scope

    from helpers.jde_inputs import SOURCES
    from vastmat.apis.inference import track_cached
    from vastmat.datasets.formats import track_rows_to_results
    from vastmat.registry import MODELS
    init_default_scope('vastmat')
    check_inputs(inputs, source)
    model = MODELS.build(dict(type='TrackingByDetection', tracker=dict(type='JDETracker', **tracker)))
    videos = golden_videos(variant)
    tracks = track_cached(model, SOURCES[source][0], str(inputs / source), videos)
    return sum(assert_same_tracks(track_rows_to_results(tracks[v]), read_golden(variant, v, tmp_path), v, atol=0.01)
               for v in videos)


@pytest.mark.skipif(not osp.isdir(AT10), reason=f'shared data not found at {AT10}')
def test_animaltrack_equals_the_official_code(inputs, tmp_path):
    """All 32 videos at 10 FPS: the video's rate sets the lost buffer (10 frames), no output filter."""
    assert check_variant(inputs, tmp_path, 'animaltrack', 'animaltrack', min_box_area=None) == 51964


@pytest.mark.skipif(not osp.isdir(AT10), reason=f'shared data not found at {AT10}')
def test_fixed_buffer_rate_and_higher_conf_thres_equal_the_official_code(inputs, tmp_path):
    """The official tracker built with frame_rate=30 (lost tracks kept 30 frames) and conf_thres 0.6."""
    assert check_variant(inputs, tmp_path, 'animaltrack_buffer30_conf0.6', 'animaltrack', min_box_area=None,
                         buffer_frame_rate=30, conf_thres=0.6) == 5170


@pytest.mark.skipif(not osp.isdir(TUD), reason=f'shared data not found at {TUD}')
def test_mot15_tud_with_the_official_output_filter_equals_the_official_code(inputs, tmp_path):
    """MOT15 TUD at 25 FPS with track.py's filter (area > 100, w / h <= 1.6)."""
    assert check_variant(inputs, tmp_path, 'tud', 'tud', min_box_area=100, aspect_ratio_thresh=1.6) == 1204


@pytest.mark.skipif(not osp.isdir(TUD), reason=f'shared data not found at {TUD}')
def test_reported_box_detection_reports_the_matched_detections_with_the_same_ids(inputs):
    """reported_box='detection' changes only the boxes written: the same ids in every frame as the official Kalman
    boxes, each box one of the frame's detections."""
    from helpers.jde_inputs import load_frames, seq_length
    video = golden_videos('tud')[0]
    frames = load_frames(str(inputs / 'tud' / f'{video}.txt'), seq_length('tud', video))
    frames = (TrackingFrame.from_arrays(dets[:, :4], dets[:, 4], frame_id, features=features)
              for frame_id, (dets, features) in enumerate(frames, 1))
    assert detection_boxes_moved(JDETracker, frames, min_box_area=None, buffer_frame_rate=30) > 100


@pytest.mark.skipif(not osp.isdir(AT10), reason=f'shared data not found at {AT10}')
def test_the_tuned_preset_scores_what_it_states_on_these_inputs(inputs, tmp_path):
    """The committed JDE preset (tools/tune.py on these simulated-embedding inputs) tracks all 32 videos to the
    HOTA its comment states, above the official settings' 59.22."""
    import re
    preset = osp.join(REPO, 'configs', 'fairmot', 'fairmot_cached-dets_tuned-animaltrack-10fps-sim.py')
    stated = float(re.search(r'COMBINED HOTA ([\d.]+) on the tuning videos', open(preset).read()).group(1))
    check_inputs(inputs, 'animaltrack')
    metrics = tool('tools/test.py', preset, '--data-root', osp.join(AT10, 'gt'), '--det-root',
                   str(inputs / 'animaltrack'), '--work-dir', tmp_path)
    assert round(100 * metrics['vastmat/HOTA'], 2) == stated and stated > 59.22


# -------------------------------------------------------------------------------------------- hand-built frames
def box(x, y=0.0, w=100.0, h=100.0):
    return [x, y, x + w, y + h]


def unit(v):
    v = np.asarray(v, np.float64)
    return v / np.linalg.norm(v)


def step(tracker, boxes, feats, frame, scores=None, frame_rate=10):
    boxes = np.array(boxes, np.float64).reshape(-1, 4)
    scores = np.full(len(boxes), 0.9) if scores is None else np.array(scores, np.float64)
    feats = np.array(feats, np.float64).reshape(len(boxes), -1) if len(boxes) else np.zeros((0, 4))
    return tracker.update(TrackingFrame.from_arrays(boxes, scores, frame, features=feats, frame_rate=frame_rate))


E0, E1 = unit([1, 0, 0, 0]), unit([0, 1, 0, 0])


def test_fusion_cost_on_a_hand_built_pair():
    """cost = 0.98 * cosine + 0.02 * maha^2 for a track one prediction after its start (values by hand from the
    filter's formulas: projected variance of x, y and h is h^2 (6 sp^2 + 100 sv^2), sp = 1/20, sv = 1/160)."""
    from vastmat.structures.bbox import xyxy_to_xyah
    tracker = JDETracker()
    mean, cov = tracker.motion.predict(*tracker.motion.initiate(xyxy_to_xyah(np.array([box(0)]))))
    tracker.tracks.set_row_shape('smooth_feat', (4, ))
    track = tracker.tracks.add(np.array([0.9]), 1, mean=mean, covariance=cov, smooth_feat=E0[None])
    det_feats = np.array([[0.6, 0.8, 0.0, 0.0]])  # cosine distance 0.4
    var_x = 100.0 ** 2 * (6 / 20 ** 2 + 100 / 160 ** 2)
    maha = 10.0 ** 2 / var_x  # the detection is 10 px to the right
    cost = tracker.embedding_cost(track, det_feats, xyxy_to_xyah(np.array([box(10)])))
    assert cost[0, 0] == pytest.approx(0.98 * 0.4 + 0.02 * maha, abs=1e-12)
    assert cost[0, 0] == pytest.approx(0.4025785123966942, abs=1e-12)
    # beyond the gate (maha^2 > 9.4877, i.e. > 42.35 px here) the pair is impossible, whatever the appearance
    far = tracker.embedding_cost(track, np.array([E0]), xyxy_to_xyah(np.array([box(43)])))
    assert np.isinf(far[0, 0])
    near = tracker.embedding_cost(track, np.array([E0]), xyxy_to_xyah(np.array([box(42)])))
    assert near[0, 0] == pytest.approx(0.02 * 42.0 ** 2 / var_x, abs=1e-12)


def test_gating_distance_equals_the_official_filter():
    """The batched squared Mahalanobis distance equals DeepSORT's (mmdet's copy of the official filter) track by
    track, for a full covariance and the filter's own, and for the centre only."""
    from mmdet.models.task_modules.tracking import KalmanFilter

    from vastmat.models.motion import KalmanFilterXYAH
    rng = np.random.default_rng(0)
    ours, theirs = KalmanFilterXYAH(), KalmanFilter()
    mean = np.abs(rng.normal(50, 10, (3, 8)))
    a = rng.normal(size=(3, 8, 8))
    cov = a @ a.transpose(0, 2, 1) + 8 * np.eye(8)
    z = np.abs(rng.normal(50, 20, (5, 4)))
    for only_position in (False, True):
        got = ours.gating_distance(mean, cov, z, only_position=only_position)
        for i in range(3):
            np.testing.assert_allclose(got[i], theirs.gating_distance(mean[i], cov[i], z, only_position), rtol=1e-10)
    d = z[None] - mean[:, None, :4]
    np.testing.assert_allclose(ours.gating_distance(mean, cov, z, metric='gaussian'), (d * d).sum(2), rtol=1e-12)
    # the filter's own states (uncorrelated coordinates: the solve is a division) as well
    mean, cov = ours.update(*ours.predict(*ours.initiate(z[:3])), z[:3] + 5.0)
    assert not cov[:, :4, :4][:, ~np.eye(4, dtype=bool)].any()
    for only_position in (False, True):
        got = ours.gating_distance(mean, cov, z, only_position=only_position)
        for i in range(3):
            np.testing.assert_allclose(got[i], theirs.gating_distance(mean[i], cov[i], z, only_position), rtol=1e-12)


def test_gate_rejects_a_far_detection_with_identical_features():
    tracker = JDETracker(min_box_area=None)
    assert step(tracker, [box(0)], [E0], 1).ids.tolist() == [1]
    assert step(tracker, [box(40)], [E0], 2).ids.tolist() == [1]  # inside the gate: the embedding stage matches
    tracker.reset()
    step(tracker, [box(0)], [E0], 1)
    # 45 px: beyond the gate, and 1 - IoU = 0.62 > 0.5 in the IoU stage: lost, and a new (unconfirmed) track
    assert len(step(tracker, [box(45)], [E0], 2)) == 0
    store = tracker.tracks
    assert store.ids[store.lost].tolist() == [1] and store.ids[store.tracked].tolist() == [2]


def test_feature_ema_and_the_re_activation_quirks():
    tracker = JDETracker(min_box_area=None)
    out = step(tracker, [box(0)], [E0], 1)
    np.testing.assert_allclose(out.features, [E0])
    # an orthogonal embedding fails the embedding stage (0.98 > 0.4); the IoU stage matches and updates the EMA
    out = step(tracker, [box(0)], [E1], 2, scores=[0.8])
    smooth = unit(0.9 * E0 + 0.1 * E1)
    assert out.ids.tolist() == [1] and out.scores.tolist() == [0.8]
    np.testing.assert_allclose(out.features, [smooth], atol=1e-15)
    out = step(tracker, [box(0)], [E1], 3)
    smooth = unit(0.9 * smooth + 0.1 * E1)
    np.testing.assert_allclose(out.features, [smooth], atol=1e-15)
    assert np.linalg.norm(out.features[0]) == pytest.approx(1.0)
    # lost for a frame, then re-activated by its appearance: the embedding is updated, the score is not
    assert len(step(tracker, [], [], 4)) == 0
    near = unit(smooth + 0.05 * E1)
    out = step(tracker, [box(0)], [near], 5, scores=[0.5])
    assert out.ids.tolist() == [1] and out.scores.tolist() == [0.9]  # official re_activate keeps the old score
    np.testing.assert_allclose(out.features, [unit(0.9 * smooth + 0.1 * near)], atol=1e-15)
    momentum = JDETracker(min_box_area=None, feature_momentum=0.5)
    step(momentum, [box(0)], [E0], 1)
    np.testing.assert_allclose(step(momentum, [box(0)], [E1], 2).features, [unit(E0 + E1)], atol=1e-15)


def test_detections_and_new_tracks_need_conf_thres():
    tracker = JDETracker(min_box_area=None)
    assert len(step(tracker, [box(0)], [E0], 1, scores=[0.4])) == 0  # score > conf_thres (strict)
    assert step(tracker, [box(0)], [E0], 2, scores=[0.41]).ids.tolist() == []  # a new track: unconfirmed
    assert step(tracker, [box(0)], [E0], 3, scores=[0.41]).ids.tolist() == [1]  # confirmed by a second detection


def lost_for(tracker, gap, frame_rate):
    """Track one box, lose it for ``gap`` frames, show it again: its id (or [] if it was removed)."""
    tracker.reset()
    step(tracker, [box(0)], [E0], 1, frame_rate=frame_rate)
    for frame in range(2, gap + 2):
        assert len(step(tracker, [], [], frame, frame_rate=frame_rate)) == 0
    return step(tracker, [box(0)], [E0], gap + 2, frame_rate=frame_rate).ids.tolist()


def test_lost_tracks_expire_after_the_buffer_of_the_video_rate():
    tracker = JDETracker(min_box_area=None)  # official track.py: the sequence's frame rate
    assert tracker.required_inputs == ('features', 'frame_rate')
    assert lost_for(tracker, 10, frame_rate=10) == [1]  # int(10 / 30 * 30) = 10 frames
    # removed in the frame it turns 11 frames old, but (official bookkeeping) still matchable one frame more
    assert lost_for(tracker, 11, frame_rate=10) == [1]
    assert lost_for(tracker, 12, frame_rate=10) == []  # gone: a new, unconfirmed track
    assert lost_for(tracker, 25, frame_rate=30) == [1]
    fixed = JDETracker(min_box_area=None, buffer_frame_rate=30)
    assert fixed.required_inputs == ('features', )
    assert lost_for(fixed, 30, frame_rate=10) == [1] and lost_for(fixed, 32, frame_rate=10) == []


def test_matcher_replaces_iou_in_the_iou_stages_only():
    """An orthogonal embedding leaves the pair to the IoU stage: 45 px apart, IoU (+1) 0.38 (cost 0.62 > 0.5) does
    not match, CDA (0.25 IoU + 0.75 centre similarity, 0.61) does; a gate of the matcher is honoured. The embedding
    stage is the same with any matcher."""
    results = {}
    for name, matcher in (('iou', None), ('cda', dict(type='CDA')),
                          ('cda_gated', dict(type='CDA', gate=dict(type='IoUGate', thr=0.5)))):
        tracker = JDETracker(min_box_area=None, matcher=matcher)
        step(tracker, [box(0)], [E0], 1)
        results[name] = step(tracker, [box(45)], [E1], 2).ids.tolist()
        tracker.reset()
        step(tracker, [box(0)], [E0], 1)
        assert step(tracker, [box(40)], [E0], 2).ids.tolist() == [1], name  # the embedding stage
    assert results == dict(iou=[], cda=[1], cda_gated=[])


def test_missing_features_and_bad_embeddings_are_errors():
    tracker = JDETracker(buffer_frame_rate=30)
    frame = TrackingFrame.from_arrays(np.array([box(0)]), np.array([0.9]), 1, video_name='v')
    with pytest.raises(MissingTrackerInput, match="'v' frame 1: the tracker needs 'features'"):
        tracker.update(frame)
    with pytest.raises(MissingTrackerInput, match='frame_rate'):
        JDETracker().update(TrackingFrame.from_arrays(np.array([box(0)]), np.array([0.9]), 1,
                                                      features=np.array([E0])))
    with pytest.raises(ValueError, match='all-zero embedding'):
        tracker.update(TrackingFrame.from_arrays(np.array([box(0)]), np.array([0.9]), 1,
                                                 features=np.zeros((1, 4)), video_name='v'))
    # the embedding dimension is set by a video's first frame; another one within the video is an error
    tracker.reset()
    assert step(tracker, [box(0)], [E0], 1).features.shape == (1, 4)
    with pytest.raises(ValueError, match=r"frame 2: smooth_feat of shape \(3,\), the tracks have \(4,\)"):
        step(tracker, [box(0)], [[1.0, 0.0, 0.0]], 2)
    tracker.reset()
    assert step(tracker, [box(0)], [[1.0, 0.0, 0.0]], 1).features.shape == (1, 3)


def test_registered_in_the_zoo_with_official_defaults():
    from vastmat.models.trackers import zoo_trackers
    from vastmat.registry import MODELS
    zoo = {t.name: t.type for t in zoo_trackers()}
    assert zoo['FairMOT'] == 'JDETracker'
    tracker = MODELS.build(dict(type='JDETracker'))
    assert (tracker.conf_thres, tracker.det_thresh, tracker.track_buffer) == (0.4, 0.4, 30)
    assert (tracker.embedding_solver.cost_limit, tracker.iou_solver.cost_limit,
            tracker.unconfirmed_solver.cost_limit) == (0.4, 0.5, 0.7)
    assert (tracker.motion_lambda, tracker.motion_gate, tracker.feature_momentum) == (0.98, 9.4877, 0.9)
