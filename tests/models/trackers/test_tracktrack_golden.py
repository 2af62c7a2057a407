"""TrackTrackTracker against the official TrackTrack code's own output (tests/fixtures/tracktrack_official, made by
running kamkyu94/TrackTrack's tracker outside the project; its README says how) on AnimalTrack at 10 FPS with
simulated detections, features, an NMS-0.95 set and camera motion written by tests/helpers/tracktrack_inputs.py:
the same boxes (0.01 px) and the same ids up to relabelling, without and with the post-processing (GBI, AFLink)."""
import os
import os.path as osp

import numpy as np
import pytest

from helpers.common import REPO, SHARED_DATA, assert_same_tracks, read_results

AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
GOLDEN = osp.join(REPO, 'tests', 'fixtures', 'tracktrack_official')
needs_at10 = pytest.mark.skipif(not osp.isdir(AT10), reason=f'shared data not found at {AT10}')
pytestmark = [needs_at10, pytest.mark.xdist_group('tracktrack_golden')]


def golden_videos(variant: str) -> list[str]:
    return sorted(f.split('.')[0] for f in os.listdir(osp.join(GOLDEN, variant)) if f.endswith(('.txt', '.gz')))


def golden_file(variant: str, video: str) -> str:
    path = osp.join(GOLDEN, variant, f'{video}.txt')
    return path if osp.isfile(path) else path + '.gz'


def read_golden(variant: str, video: str):
    path = golden_file(variant, video)
    if path.endswith('.gz'):
        import gzip
        import tempfile
        with gzip.open(path, 'rt') as f, tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as out:
            out.write(f.read())
        try:
            return read_results(out.name)
        finally:
            os.remove(out.name)
    return read_results(path)


@pytest.fixture(scope='module')
def inputs(tmp_path_factory):
    import sys
    sys.path.insert(0, osp.join(REPO, 'tests'))
    from helpers.tracktrack_inputs import write_inputs
    root = str(tmp_path_factory.mktemp('tracktrack_inputs'))
    write_inputs(root, videos=golden_videos('plain'))
    return root


def official_model(inputs: str, post_processors=(), **tracker_options):
    from mmengine.registry import init_default_scope

    import vastmat.models  # noqa: F401
    from vastmat.registry import MODELS
    init_default_scope('vastmat')
    tracker = dict(type='TrackTrackTracker', det_thr=0.60, init_thr=0.60, match_thr=0.60, max_time_lost=None,
                   deleted_dets='nms95',
                   camera_motion=dict(type='CachedCameraMotion', warp_root=osp.join(inputs, 'gmc')),
                   **tracker_options)
    return MODELS.build(dict(type='TrackingByDetection', tracker=tracker, post_processors=list(post_processors)))


def track(model, inputs: str, videos: list[str]) -> dict:
    """``{video: rows frame, id, x1, y1, x2, y2, score}`` of the runner-free path."""
    from vastmat.apis.inference import track_cached
    return track_cached(model, osp.join(AT10, 'gt'), osp.join(inputs, 'dets'), videos,
                        extra_det_roots=dict(nms95=osp.join(inputs, 'dets95')))


def track_with_empty_frames(model, inputs: str, video: str, every: int):
    """Like :func:`track`, with every ``every``-th frame given without detections (the official run fed those frames
    as None, i.e. ``update_without_detections``)."""
    from vastmat.datasets.detections import VideoDetections, cached_frames, detection_file
    from vastmat.datasets.sequences import load_sequence
    from vastmat.structures.tracking import FrameDetections, TrackingFrame
    sequence = load_sequence(osp.join(AT10, 'gt'), video, with_gt=False)
    dets = VideoDetections(detection_file(osp.join(inputs, 'dets'), video), sequence.length)
    extra = dict(nms95=VideoDetections(detection_file(osp.join(inputs, 'dets95'), video), sequence.length))

    def frames():
        for frame in cached_frames(dets, video, sequence.source_frames(), sequence.frame_rate, extra=extra):
            if frame.frame_id % every == 0:
                frame = TrackingFrame(FrameDetections(np.zeros((0, 4)), np.zeros(0), features=np.zeros((0, 16))),
                                      frame.frame_id, video, frame.frame_rate,
                                      extra_dets=dict(nms95=FrameDetections(np.zeros((0, 4)), np.zeros(0))))
            yield frame
    return model.track_video(frames())


@pytest.fixture(scope='module')
def plain_tracks(inputs):
    return track(official_model(inputs), inputs, golden_videos('plain'))


def test_tracks_equal_the_official_code(plain_tracks):
    from vastmat.datasets.formats import track_rows_to_results
    rows = 0
    for video, ours in plain_tracks.items():
        rows += assert_same_tracks(track_rows_to_results(ours), read_golden('plain', video), video, atol=0.01)
    assert rows > 10000


def test_dancetrack_rule_and_empty_frames_equal_the_official_code(inputs):
    """The official 'Dance' rule (w/h velocities of tracks not Tracked zeroed before predicting) and frames without
    any detection (every 17th frame: New tracks dropped, the others predicted and reported)."""
    from vastmat.datasets.formats import track_rows_to_results
    dance = track(official_model(inputs, freeze_wh_velocity=True), inputs, golden_videos('plain_dance'))
    for video, rows in dance.items():
        assert_same_tracks(track_rows_to_results(rows), read_golden('plain_dance', video), f'{video} (dance)')
    model = official_model(inputs)
    for video in golden_videos('plain_gaps'):
        rows = track_with_empty_frames(model, inputs, video, every=17)
        assert_same_tracks(track_rows_to_results(rows), read_golden('plain_gaps', video), f'{video} (gaps)')


def golden_rows(variant: str, video: str) -> np.ndarray:
    """A golden file as rows ``frame, id, x1, y1, x2, y2, score``: the official post-processing ran on the official
    tracker's written (4-decimal) output, so the port's post-processing is fed the same rows (the tracks themselves
    are compared above; GBI's regression trees can split differently on 1e-5 px differences)."""
    results = read_golden(variant, video)
    boxes = results.boxes.copy()
    boxes[:, 2:] += boxes[:, :2]
    return np.column_stack([results.frames, results.ids, boxes, results.scores])


def test_gbi_equals_the_official_code():
    from vastmat.datasets.formats import track_rows_to_results
    from vastmat.models.post import GBInterpolation
    gbi = GBInterpolation(interval=30)
    for video in golden_videos('gbi'):
        rows = gbi(golden_rows('plain', video))
        assert_same_tracks(track_rows_to_results(rows), read_golden('gbi', video), f'{video} (GBI)', atol=0.01)


def test_aflink_equals_the_official_code():
    import sys

    import torch
    sys.path.insert(0, osp.join(REPO, 'tests'))
    from helpers.tracktrack_inputs import aflink_weights
    from vastmat.datasets.formats import track_rows_to_results
    from vastmat.models.post import AFLink
    linker = AFLink(thrT=(0, 20), thrS=100, thrP=AFLINK_THR_P)
    linker.linker.load_state_dict(aflink_weights(linker.linker.state_dict()))
    linked = 0
    for video in golden_videos('aflink'):
        before = golden_rows('plain', video)
        with torch.no_grad():
            rows = linker(before)
        linked += len(np.unique(before[:, 1])) - len(np.unique(rows[:, 1]))
        assert_same_tracks(track_rows_to_results(rows), read_golden('aflink', video), f'{video} (AFLink)', atol=0.01)
    assert linked > 0  # the variant links tracks (its README gives the count)


AFLINK_THR_P = 0.7  # the fixtures README: 13 links over 7 videos at this threshold
