"""MotionAdaptiveCDA (per-track IoU / CenterSim weight) and the per-track frame context the trackers build for it:
the weight rule on hand-built tracks, its limits (IoU, CenterSim), the fallback without per-track motion, the
context arrays against the trackers' own state, and every tracking-by-detection tracker running with it."""
import math
import os.path as osp
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from helpers.common import SHARED_DATA

from vastmat.models.association import (CDA, CenterSim, FrameContext, Fused, IoU, MotionAdaptiveCDA,
                                        motion_adaptive_iou_weight)
from vastmat.models.trackers.motion_context import matcher_context, track_motion
from vastmat.models.trackers.diffmot_tracks import DiffMOTTracks
from vastmat.models.trackers.track_store import KalmanTracks, TrackRows, TrackTable
from vastmat.registry import MATCHERS
from vastmat.structures.pair_geometry import PairGeometry
from vastmat.structures.tracking import TrackingFrame

AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
needs_at10 = pytest.mark.skipif(not osp.isdir(osp.join(AT10, 'dets')), reason=f'{AT10}: not found (../shared/data '
                                'beside the clone)')

# ---- hand-built tracks: three 30 x 40 boxes (diagonal 50), seven detections --------------------------------------
TRACKS = np.array([[0.0, 0.0, 30.0, 40.0],  # T0: one other detection near (D1), moderately fast
                   [1000.0, 1000.0, 1030.0, 1040.0],  # T1: isolated, fast
                   [0.0, 200.0, 30.0, 240.0]])  # T2: two other detections near (D5, D6)
DETS = np.array([[0.0, 0.0, 30.0, 40.0],  # D0: T0's own
                 [60.0, 0.0, 90.0, 40.0],  # D1: 60 px from T0, 1.2 mean diagonals (< 2: near)
                 [500.0, 500.0, 530.0, 540.0],  # D2: far from all
                 [1010.0, 1000.0, 1040.0, 1040.0],  # D3: T1's own, 10 px away
                 [0.0, 200.0, 30.0, 240.0],  # D4: T2's own
                 [35.0, 200.0, 65.0, 240.0],  # D5: 0.7 mean diagonals from T2
                 [-35.0, 200.0, -5.0, 240.0]])  # D6: 0.7 mean diagonals from T2
# T0: r = max(7.5, 5) / 50 = 0.15 -> fast 0.5; crowd 1 -> crowded 0.5; a = 1 - 0.5 * 0.5 = 0.75
# T1: r = 20 / 50 = 0.4 -> fast 1; crowd 0 -> a = 0 (a fast isolated track: CenterSim)
# T2: r = 1 / 50 = 0.02 -> fast 0 -> a = 1 (a still track in a crowd: IoU)
DISPLACEMENT, POSITION_STD = np.array([7.5, 20.0, 0.0]), np.array([5.0, 3.0, 1.0])
HAND_A = np.array([0.75, 0.0, 1.0])
# the rule of the comments above (the class defaults are the study's, not these)
HAND = dict(r_low=0.05, r_high=0.25, crowd_radius=2.0, crowd_full=2.0, a_still=1.0, a_fast=0.0)


def test_weight_rule_on_hand_built_tracks():
    matcher = MotionAdaptiveCDA(**HAND)
    g = PairGeometry(TRACKS, DETS)
    a = matcher.iou_weights(g, 7, DISPLACEMENT, POSITION_STD)
    np.testing.assert_allclose(a, HAND_A, rtol=0, atol=1e-12)
    scores = matcher(TRACKS, DETS, num_high_conf=7, track_displacement=DISPLACEMENT,
                     track_position_std=POSITION_STD).scores
    iou, center = IoU()(TRACKS, DETS).scores, CenterSim()(TRACKS, DETS).scores
    np.testing.assert_allclose(scores[0], 0.75 * iou[0] + 0.25 * center[0], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(scores[1], center[1])  # a = 0: the centre term, to the bit
    np.testing.assert_array_equal(scores[2], iou[2])  # a = 1: IoU, to the bit
    assert center[1, 3] == pytest.approx(1 - 10 / 50) and iou[1, 3] == pytest.approx(800 / 1600)

    # a fast track in a crowd still gets IoU's weight; the same track isolated gets the centre term's
    fast_everywhere = np.array([7.5, 20.0, 50.0])
    assert matcher.iou_weights(g, 7, fast_everywhere, POSITION_STD)[2] == 1.0
    alone = PairGeometry(TRACKS[2:], DETS[4:5])
    assert matcher.iou_weights(alone, 7, fast_everywhere[2:], POSITION_STD[2:])[0] == 0.0
    # the position std counts as motion too (a lost track's grown uncertainty), a NaN one is ignored
    assert matcher.iou_weights(alone, 7, np.zeros(1), np.array([50.0]))[0] == 0.0
    assert matcher.iou_weights(alone, 7, np.array([50.0]), np.array([np.nan]))[0] == 0.0
    # the frame term: N / n_full is a floor of the crowding (T1: fast, isolated, crowded 0.5 by the frame)
    framed = MotionAdaptiveCDA(n_full=14, **HAND)
    np.testing.assert_allclose(framed.iou_weights(g, 7, DISPLACEMENT, POSITION_STD), [0.75, 0.5, 1.0], atol=1e-12)
    with pytest.raises(ValueError, match='needs num_high_conf'):
        framed(TRACKS, DETS, track_displacement=DISPLACEMENT, track_position_std=POSITION_STD)


def test_iou_weight_range_still_and_fast():
    """a = a_still - (a_still - a_fast) m, m = 1 - HAND_A on the hand-built tracks; equal ends are fixed CDA."""
    g = PairGeometry(TRACKS, DETS)
    context = dict(num_high_conf=7, track_displacement=DISPLACEMENT, track_position_std=POSITION_STD)
    ranged = MotionAdaptiveCDA(**dict(HAND, a_still=0.8, a_fast=0.2))
    np.testing.assert_allclose(ranged.iou_weights(g, **context), 0.8 - 0.6 * (1 - HAND_A), rtol=0, atol=1e-12)
    iou, center = IoU()(TRACKS, DETS).scores, CenterSim()(TRACKS, DETS).scores
    np.testing.assert_allclose(ranged(TRACKS, DETS, **context).scores[1], 0.2 * iou[1] + 0.8 * center[1], atol=1e-12)
    # a still track keeps 1 - a_still of the centre term: no IoU shortcut when every track is still
    still = MotionAdaptiveCDA(**dict(HAND, a_still=0.25))
    np.testing.assert_allclose(still(TRACKS, DETS, num_high_conf=7, track_displacement=np.zeros(3),
                                     track_position_std=np.zeros(3)).scores,
                               CDA(alpha=0.25)(TRACKS, DETS).scores, rtol=0, atol=1e-15)
    for alpha in (0.0, 0.25, 1.0):  # a_still = a_fast = alpha: fixed CDA whatever the motion
        fixed = MotionAdaptiveCDA(**dict(HAND, a_still=alpha, a_fast=alpha))
        np.testing.assert_allclose(fixed(TRACKS, DETS, **context).scores, CDA(alpha=alpha)(TRACKS, DETS).scores,
                                   rtol=0, atol=1e-15)
    np.testing.assert_array_equal(MotionAdaptiveCDA(a_still=0.0, a_fast=0.0)(TRACKS, DETS, **context).scores, center)
    np.testing.assert_array_equal(MotionAdaptiveCDA(a_still=1.0, a_fast=1.0)(TRACKS, DETS, **context).scores, iou)
    np.testing.assert_allclose(motion_adaptive_iou_weight(np.array([0.4, 0.0]), np.zeros(2), 0.05, 0.25, 2.0,
                                                          a_still=0.8, a_fast=0.2), [0.2, 0.8], atol=1e-12)
    # crowd_full None (a config's way of writing inf): crowding ignored, a = a_still - (a_still - a_fast) fast
    ignoring = MotionAdaptiveCDA(**dict(HAND, crowd_full=None))
    np.testing.assert_allclose(ignoring.iou_weights(g, **context), [0.5, 0.0, 1.0], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ignoring(TRACKS, DETS, **context).scores,
                                  MotionAdaptiveCDA(**dict(HAND, crowd_full=math.inf))(TRACKS, DETS, **context).scores)
    as_lists = dict(context, track_displacement=list(DISPLACEMENT), track_position_std=list(POSITION_STD))
    np.testing.assert_array_equal(ignoring(TRACKS, DETS, **as_lists).scores, ignoring(TRACKS, DETS, **context).scores)
    # a_fast None: a fast isolated track gets the fallback CDA's frame weight alpha(N) (forward: 0.5 + 0.05 (7 - 10))
    framed = MotionAdaptiveCDA(**dict(HAND, a_fast=None))
    np.testing.assert_allclose(framed.iou_weights(g, **context), 1 - 0.65 * (1 - HAND_A), rtol=0, atol=1e-12)
    np.testing.assert_allclose(framed(TRACKS, DETS, **context).scores[1], 0.35 * iou[1] + 0.65 * center[1], rtol=0,
                               atol=1e-12)
    with pytest.raises(ValueError, match='a_fast=None'):
        MotionAdaptiveCDA(a_fast=None, fallback=None)
    with pytest.raises(ValueError, match='a_fast <= a_still'):
        MotionAdaptiveCDA(a_still=0.2, a_fast=0.5)


def test_weight_function_by_hand():
    ratio, crowd = np.array([0.0, 0.15, 0.4, np.nan, 0.2]), np.array([5, 1, 0, 0, -1])
    a = motion_adaptive_iou_weight(ratio, crowd, 0.05, 0.25, 2.0)
    np.testing.assert_allclose(a, [1.0, 0.75, 0.0, 0.0, 0.25], rtol=0, atol=1e-12)  # NaN: fast; -1 counts as 0
    np.testing.assert_allclose(motion_adaptive_iou_weight(ratio, crowd, 0.05, 0.25, 2.0, frame_crowded=0.5),
                               [1.0, 0.75, 0.5, 0.5, 0.625], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(motion_adaptive_iou_weight(ratio, crowd, 0.05, 0.25, 0.0), np.ones(5))
    np.testing.assert_allclose(motion_adaptive_iou_weight(ratio, crowd, 0.05, math.inf, 2.0), [1, 1, 1, 0, 1])
    np.testing.assert_allclose(motion_adaptive_iou_weight(ratio, crowd, 0.05, 0.25, math.inf),
                               [1.0, 0.5, 0.0, 0.0, 0.25], rtol=0, atol=1e-12)


def _random_case(seed, n=12, m=15):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 300, size=(n + m, 2))
    boxes = np.hstack([xy, xy + rng.uniform(5, 60, size=(n + m, 2))])
    return boxes[:n], boxes[n:], rng.uniform(0, 30, n), rng.uniform(0.5, 10, n)


@pytest.mark.parametrize('plus_one', [False, True])
@pytest.mark.parametrize('denominator', ['mean', 'min', 'max', 'enclosing'])
def test_limits_are_iou_and_center_similarity_to_the_bit(plus_one, denominator):
    tracks, dets, displacement, std = _random_case(3)
    context = dict(num_high_conf=9, track_displacement=displacement, track_position_std=std)
    iou = IoU(plus_one=plus_one)(tracks, dets).scores
    center = CenterSim(denominator, plus_one=plus_one)(tracks, dets).scores
    for limit in (dict(r_high=math.inf), dict(crowd_full=0.0), dict(r_low=100.0, r_high=200.0)):
        matcher = MotionAdaptiveCDA(plus_one=plus_one, center_denominator=denominator, **dict(HAND, **limit))
        np.testing.assert_array_equal(matcher(tracks, dets, **context).scores, iou)
    centre_only = MotionAdaptiveCDA(r_low=-1.0, r_high=-0.5, crowd_full=math.inf, a_fast=0.0, plus_one=plus_one,
                                    center_denominator=denominator)
    np.testing.assert_array_equal(centre_only(tracks, dets, **context).scores, center)
    # in between: every row is its own a_i mix, scores in [0, 1], the torch path agrees
    matcher = MotionAdaptiveCDA(plus_one=plus_one, center_denominator=denominator, **dict(HAND, r_low=0.0, r_high=0.5))
    a = matcher.iou_weights(PairGeometry(tracks, dets, plus_one), **context)
    assert ((0 < a) & (a < 1)).any() and a.max() == 1.0
    scores = matcher(tracks, dets, **context).scores
    np.testing.assert_allclose(scores, a[:, None] * iou + (1 - a[:, None]) * center, rtol=0, atol=1e-12)
    # the trackers' call (numpy arrays) takes a shorter path than other inputs (lists here): the same values
    as_lists = dict(context, track_displacement=list(displacement), track_position_std=list(std))
    np.testing.assert_array_equal(matcher(tracks, dets, **as_lists).scores, scores)
    assert scores.min() >= 0 and scores.max() <= 1
    from_torch = matcher(torch.from_numpy(tracks), torch.from_numpy(dets), **context).scores
    np.testing.assert_allclose(from_torch.numpy(), scores, rtol=0, atol=1e-12)


def test_fallback_without_per_track_motion():
    tracks, dets, displacement, std = _random_case(4)
    matcher = MotionAdaptiveCDA(plus_one=True)
    adaptive = CDA(mode='forward', plus_one=True)
    for n in (3, 12, 25):  # no per-track context: exactly adaptive CDA (the paper's schedule)
        np.testing.assert_array_equal(matcher(tracks, dets, num_high_conf=n).scores,
                                      adaptive(tracks, dets, num_high_conf=n).scores)
    with pytest.raises(ValueError, match='needs num_high_conf'):
        matcher(tracks, dets)
    # tracks without motion (NaN displacement, no std) get alpha(N); the others the rule
    partial = displacement.copy()
    partial[[1, 4]] = np.nan
    g = PairGeometry(tracks, dets, True)
    a = matcher.iou_weights(g, 14, partial)
    assert a[1] == a[4] == adaptive.alpha_for(14) == pytest.approx(0.7)
    np.testing.assert_array_equal(np.delete(a, [1, 4]), np.delete(matcher.iou_weights(g, 14, displacement), [1, 4]))
    scores = matcher(tracks, dets, num_high_conf=14, track_displacement=partial).scores
    np.testing.assert_allclose(scores[1], adaptive(tracks[1:2], dets, num_high_conf=14).scores[0], atol=1e-12)
    # without a fallback, tracks without motion count as fast: the crowding alone decides
    crowd_only = MotionAdaptiveCDA(fallback=None, **HAND)
    near = (np.hypot(*(((tracks[:, None, :2] + tracks[:, None, 2:]) - (dets[None, :, :2] + dets[None, :, 2:]))
                       .transpose(2, 0, 1))) / (g.diag_a + g.diag_b) < 2.0).sum(1)
    np.testing.assert_allclose(crowd_only.iou_weights(PairGeometry(tracks, dets), 5),
                               np.clip((near - 1) / 2.0, 0, 1), atol=1e-12)


def test_configuration_errors_name_the_setting():
    with pytest.raises(ValueError, match='r_low < r_high'):
        MotionAdaptiveCDA(r_low=0.3, r_high=0.2)
    with pytest.raises(ValueError, match='crowd_full'):
        MotionAdaptiveCDA(crowd_full=-1)
    with pytest.raises(ValueError, match='center_denominator'):
        MotionAdaptiveCDA(fallback=dict(type='CDA', center_denominator='min'))
    with pytest.raises(TypeError, match='fallback must be a CDA'):
        MotionAdaptiveCDA(fallback=dict(type='IoU'))
    with pytest.raises(ValueError, match=r"'track_displacement' has shape \(2,\).*\(3,\)"):
        MotionAdaptiveCDA()(TRACKS, DETS, num_high_conf=1, track_displacement=np.zeros(2))


def test_other_matchers_ignore_the_track_context_and_fused_passes_it_on():
    context = dict(num_high_conf=7, track_displacement=DISPLACEMENT, track_position_std=POSITION_STD)
    for matcher in (IoU(plus_one=True), CDA(), CDA(mode='forward'), CenterSim()):
        assert matcher.context_keys == ()
        np.testing.assert_array_equal(matcher(TRACKS, DETS, **context).scores,
                                      matcher(TRACKS, DETS, num_high_conf=7).scores)
    fused = Fused(geometric=dict(type='MotionAdaptiveCDA'), weights=dict(geometric=1.0))
    assert fused.context_keys == MotionAdaptiveCDA.context_keys
    np.testing.assert_allclose(fused(TRACKS, DETS, **context).scores,
                               MotionAdaptiveCDA()(TRACKS, DETS, **context).scores, rtol=0, atol=1e-15)
    assert Fused(geometric=dict(type='HMIoU')).context_keys == ()


def test_frame_context_and_the_trackers_helper():
    assert FrameContext(5).as_kwargs() == dict(num_high_conf=5)
    context = FrameContext(5, DISPLACEMENT, None).as_kwargs()
    assert set(context) == {'num_high_conf', 'track_displacement'} and context['track_displacement'] is DISPLACEMENT
    # matchers that read no per-track entry get only num_high_conf
    assert matcher_context(IoU(), [object()], 4) == dict(num_high_conf=4)
    # the helper reads each kind of track state (by the table's declared kind)
    covariance = np.diag([4.0, 16.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    table = KalmanTracks()
    rows = table.add(np.ones(2), 1, mean=np.array([[9, 9, 1, 50, 0, 0, 0, 0], [0, 0, 1, 50, 3.0, 4.0, 0, 0]]),
                     covariance=np.stack([np.eye(8), covariance]))
    kalman = TrackRows(table, rows[::-1])  # rows in the call's order
    displacement, std = track_motion(kalman)
    np.testing.assert_allclose(displacement, [5.0, 0.0])
    np.testing.assert_allclose(std, [math.sqrt(10.0), 1.0])
    # a DiffMOT table: the last of num_conds conditions
    diffmot = DiffMOTTracks()
    conds = np.zeros((1, 5, 8))
    conds[0, 1] = [0, 0, 9, 9, -6.0, 8.0, 1, 1]
    diffmot_rows = TrackRows(diffmot, diffmot.add(np.ones(1), 1, conds=conds, num_conds=2))
    assert track_motion(diffmot_rows)[0].tolist() == [10.0] and track_motion(diffmot_rows)[1] is None
    # a table of another kind (columns of the same names, undeclared): no motion
    other = TrackTable(dict(conds=((5, 8), np.float64), num_conds=((), np.int64)))
    assert np.isnan(track_motion(TrackRows(other, other.add(np.ones(1), 1)))[0]).all()
    decoder = [SimpleNamespace(displacement=2.5), SimpleNamespace(displacement=float('nan'))]
    np.testing.assert_array_equal(track_motion(decoder)[0], [2.5, np.nan])
    assert np.isnan(track_motion([object()])[0]).all()
    context = matcher_context(MotionAdaptiveCDA(), kalman, 3)
    assert set(context) == {'num_high_conf', 'track_displacement', 'track_position_std'}
    assert matcher_context(MATCHERS.build(dict(type='Fused', geometric=dict(type='MotionAdaptiveCDA'))), kalman,
                           3).keys() == context.keys()


# ---- real tracker state ---------------------------------------------------------------------------------------
class Recorder(MotionAdaptiveCDA):
    """Records every call's per-track context and runs ``check(track_boxes, context)`` inside the call."""

    def __init__(self, check=None, **kwargs):
        super().__init__(**kwargs)
        self.check, self.calls = check, []

    def __call__(self, tracks, dets, **context):
        if len(tracks):
            self.calls.append(context)
            if self.check is not None:
                self.check(np.asarray(tracks), context)
        return super().__call__(tracks, dets, **context)


def _at10_frames(video, num_frames, features=0):
    from vastmat.datasets.detections import VideoDetections, detection_file
    from vastmat.datasets.sequences import load_sequence
    sequence = load_sequence(osp.join(AT10, 'gt'), video, with_gt=False)
    dets = VideoDetections(detection_file(osp.join(AT10, 'dets'), video), sequence.length)
    size = sequence.image_size
    rng = np.random.default_rng(0)
    frames = []
    for f in range(1, num_frames + 1):
        d = dets.get(f)
        feats = None
        if features:
            feats = rng.standard_normal((len(d.scores), features))
            feats /= np.linalg.norm(feats, axis=1, keepdims=True)
        frames.append(TrackingFrame.from_arrays(d.bboxes, d.scores, f, video_name=video, frame_rate=10.0,
                                                image_size=size, features=feats))
    return frames


def _lifecycle_rows(tracker):
    confirmed, unconfirmed = tracker.tracks.confirmed_and_unconfirmed()
    return tracker.tracks.pool(confirmed), unconfirmed


@needs_at10
def test_bytetrack_context_is_its_kalman_state_row_by_row():
    from vastmat.models.trackers import BYTETracker
    from vastmat.structures.bbox import xyah_to_xyxy
    seen = dict(lost=0, unconfirmed=0, moving=0)

    def check(track_boxes, context):
        pool, unconfirmed = _lifecycle_rows(tracker)
        rows = np.concatenate([pool, unconfirmed])  # rows of BYTETracker's track store
        mean, covariance = tracker.tracks.mean[rows], tracker.tracks.covariance[rows]
        np.testing.assert_array_equal(track_boxes, xyah_to_xyxy(mean[:, :4]))  # rows of the call = these tracks
        displacement, std = context['track_displacement'], context['track_position_std']
        assert displacement.shape == std.shape == (len(rows), )
        np.testing.assert_allclose(displacement, [math.hypot(m[4], m[5]) for m in mean], rtol=1e-12)
        np.testing.assert_allclose(std, [math.sqrt((c[0, 0] + c[1, 1]) / 2) for c in covariance], rtol=1e-12)
        assert (std > 0).all()
        seen['lost'] += int((tracker.tracks.state[pool] != 1).sum())
        seen['unconfirmed'] += len(unconfirmed)
        seen['moving'] += int((displacement > 1.0).sum())

    tracker = BYTETracker(matcher=Recorder(check, plus_one=True))
    outputs = [tracker.update(frame) for frame in _at10_frames('chicken_3', 25)]
    assert len(tracker.matcher.calls) >= 20 and sum(len(o.ids) for o in outputs) > 100
    assert seen['lost'] > 0 and seen['unconfirmed'] > 0 and seen['moving'] > 0, seen


@needs_at10
def test_jde_and_tracktrack_pass_their_kalman_state():
    from vastmat.models.trackers import JDETracker, TrackTrackTracker
    from vastmat.structures import cxcywh_to_xyxy
    from vastmat.structures.bbox import xyah_to_xyxy

    def check_jde(track_boxes, context):
        pool, unconfirmed = _lifecycle_rows(jde)
        mean = jde.tracks.mean[np.concatenate([pool, unconfirmed])]  # rows of JDETracker's track store
        np.testing.assert_array_equal(track_boxes, xyah_to_xyxy(mean[:, :4]))
        np.testing.assert_allclose(context['track_displacement'], [math.hypot(m[4], m[5]) for m in mean],
                                   rtol=1e-12)

    jde = JDETracker(matcher=Recorder(check_jde, plus_one=True))
    jde_out = [jde.update(frame) for frame in _at10_frames('deer_4', 15, features=16)]

    def check_tracktrack(track_boxes, context):
        table = tracktrack.tracks  # TrackTrack's track table: its live rows
        by_box = {tuple(cxcywh_to_xyxy(table.mean[row, None, :4])[0]): row for row in table.live}
        rows = [by_box[tuple(b)] for b in track_boxes]
        np.testing.assert_allclose(context['track_displacement'], [math.hypot(*table.mean[r, 4:6]) for r in rows],
                                   rtol=1e-12)
        np.testing.assert_allclose(context['track_position_std'],
                                   [math.sqrt((table.covariance[r, 0, 0] + table.covariance[r, 1, 1]) / 2)
                                    for r in rows], rtol=1e-12)

    tracktrack = TrackTrackTracker(matcher=Recorder(check_tracktrack, plus_one=True), deleted_dets=None,
                                   max_time_lost=20)
    tracktrack_out = [tracktrack.update(frame) for frame in _at10_frames('deer_4', 15)]
    for tracker, outputs in ((jde, jde_out), (tracktrack, tracktrack_out)):
        assert len(tracker.matcher.calls) >= 10 and sum(len(o.ids) for o in outputs) > 20, type(tracker).__name__


@needs_at10
def test_diffmot_passes_its_last_centre_delta():
    from helpers.diffmot_inputs import ENCODER_DIM, TF_LAYER, golden_d2mp_state

    from vastmat.models.motion.d2mp import D2MP
    from vastmat.models.trackers import DiffMOTTracker

    def check(track_boxes, context):
        pool, unconfirmed = _lifecycle_rows(tracker)
        assert 'track_position_std' not in context  # D2MP has no uncertainty
        table, rows = tracker.tracks, np.concatenate([pool, unconfirmed])
        last = [table.conds[r, table.num_conds[r] - 1] for r in rows]  # the last condition, row by row
        np.testing.assert_allclose(context['track_displacement'], [math.hypot(*c[4:6]) for c in last], rtol=1e-12)

    motion = D2MP(encoder_dim=ENCODER_DIM, tf_layer=TF_LAYER)
    motion.load_state_dict(golden_d2mp_state(motion.state_dict()))
    tracker = DiffMOTTracker(matcher=Recorder(check, plus_one=True), motion=motion, allow_untrained_motion=True)
    outputs = [tracker.update(frame) for frame in _at10_frames('deer_4', 15)]
    assert len(tracker.matcher.calls) >= 10 and sum(len(o.ids) for o in outputs) > 20
    assert any(np.nanmax(c['track_displacement']) > 0 for c in tracker.matcher.calls)


def test_transtrack_passes_the_track_decoders_move():
    from vastmat.models.trackers import TransTrackTracker
    from vastmat.structures.tracking import FrameDetections

    def frame(t, boxes, scores, track_boxes):
        boxes, track_boxes = np.array(boxes, float), np.array(track_boxes, float)
        return TrackingFrame(FrameDetections(boxes, np.array(scores, float)), t, video_name='v',
                             extra_dets=dict(tracking=FrameDetections(track_boxes, np.full(len(track_boxes), 0.9))))

    tracker = TransTrackTracker(matcher=Recorder(fallback=None))
    a, b = [0, 0, 100, 100], [500, 500, 600, 600]
    tracker.update(frame(1, [a, b], [0.9, 0.9], [a, b]))
    # frame 2: query 0 detected again, its decoder box moved (3, 4); query 1 undetected
    tracker.update(frame(2, [[3, 4, 103, 104], b], [0.9, 0.1], [[3, 4, 103, 104], [506, 508, 606, 608]]))
    np.testing.assert_allclose(tracker.matcher.calls[-1]['track_displacement'], [5.0, 10.0])
    # frame 3: the track of query 1 is inactive (its box stale): no motion; the new detection's slot moved 0
    tracker.update(frame(3, [[3, 4, 103, 104], b], [0.9, 0.1], [[3, 4, 103, 104], b]))
    np.testing.assert_array_equal(tracker.matcher.calls[-1]['track_displacement'], [0.0, np.nan])
    assert 'track_position_std' not in tracker.matcher.calls[-1]


@needs_at10
def test_transtrack_runs_with_the_matcher_on_simulated_queries():
    from helpers.transtrack_inputs import tracking_frames, video_queries

    from vastmat.models.trackers import TransTrackTracker
    tracker = TransTrackTracker(matcher=MATCHERS.build(dict(type='MotionAdaptiveCDA')))
    outputs = [tracker.update(f) for f in tracking_frames('horse_4', video_queries('horse_4'))[:20]]
    assert sum(len(o.ids) for o in outputs) > 20
