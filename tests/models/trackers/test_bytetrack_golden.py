"""The oracle of the ByteTrack port: the official ``BYTETracker``'s own output on the same detections
(../shared/data, see its README for how it was produced). tools/test.py with configs/bytetrack/bytetrack_cached-dets.py,
output filters off as in those runs, must give the same boxes (0.01 px) with the same ids (up to a relabelling) in
every frame, and the reference metrics:

* MOT15 TUD (public detections, 25 FPS), the official evaluator's frame_rate=30 buffer;
* AnimalTrack at 10 FPS with simulated detections, both lost-buffer rules: the official evaluator's (30 frames,
  ``buffer_frame_rate=30``, the default) and the video's rate (10 frames, ``buffer_frame_rate=None``).
"""
import json
import os
import os.path as osp

import pytest

from helpers.common import REPO, SHARED_DATA, assert_same_tracks, detection_boxes_moved, read_results, tool

BYTETRACK = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py')
TUD = osp.join(SHARED_DATA, 'MOT15-TUD')
AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
COUNTS = ('CLR_FP', 'CLR_FN', 'IDSW', 'Frag', 'MT', 'ML')
SCORES = ('HOTA', 'DetA', 'AssA', 'MOTA', 'IDF1')


def check_metrics(per_video: dict, reference: dict, videos) -> None:
    for video in [*videos, 'COMBINED']:
        for key in COUNTS:
            assert per_video[video][key] == reference[video][key], (video, key)
        for key in SCORES:
            # our result files keep 3 decimals, the official 2: HOTA's IoU-averaged scores move in the 5th digit
            assert per_video[video][key] == pytest.approx(reference[video][key], abs=2e-4), (video, key)


@pytest.mark.skipif(not osp.isdir(osp.join(TUD, 'trackers', 'ByteTrack')), reason=f'{TUD}: no official ByteTrack '
                    'outputs (../shared/data beside the clone)')
def test_official_bytetrack_on_mot15_tud(tmp_path):
    split = osp.join(TUD, 'train')
    tool('tools/test.py', BYTETRACK, '--det-root', split, '--data-root', split, '--work-dir', tmp_path,
         '--cfg-options', 'test_evaluator.preset=mot15', 'model.tracker.min_box_area=None')
    videos = ('TUD-Campus', 'TUD-Stadtmitte')
    for video in videos:
        assert_same_tracks(read_results(tmp_path / 'results' / f'{video}.txt'),
                           read_results(osp.join(TUD, 'trackers', 'ByteTrack', f'{video}.txt')), video)
    reference = json.load(open(osp.join(TUD, 'reference_bytetrack_trackeval.json')))
    check_metrics(json.load(open(tmp_path / 'metrics_per_video.json')), reference, videos)


@pytest.mark.skipif(not osp.isdir(osp.join(AT10, 'trackers')), reason=f'{AT10}: not found (../shared/data beside '
                    'the clone)')
@pytest.mark.parametrize('golden, buffer_frame_rate', [('ByteTrack', 30), ('ByteTrack-fr10', None)])
def test_official_bytetrack_on_animaltrack_10fps(tmp_path, golden, buffer_frame_rate):
    tool('tools/test.py', BYTETRACK, '--det-root', osp.join(AT10, 'dets'), '--data-root', osp.join(AT10, 'gt'),
         '--work-dir', tmp_path, '--cfg-options', 'model.tracker.min_box_area=None',
         f'model.tracker.buffer_frame_rate={buffer_frame_rate}', 'test_evaluator.workers=2')
    videos = sorted(f[:-4] for f in os.listdir(osp.join(AT10, 'trackers', golden)))
    assert len(videos) == 32
    rows = sum(assert_same_tracks(read_results(tmp_path / 'results' / f'{video}.txt'),
                                  read_results(osp.join(AT10, 'trackers', golden, f'{video}.txt')), video)
               for video in videos)
    assert rows > 50000
    reference = json.load(open(osp.join(AT10, 'reference_metrics_trackeval.json')))[golden]
    check_metrics(json.load(open(tmp_path / 'metrics_per_video.json')), reference, videos)


@pytest.mark.skipif(not osp.isdir(TUD), reason=f'{TUD} not found (../shared/data beside the clone)')
def test_reported_box_detection_reports_the_matched_detections_with_the_same_ids():
    """reported_box='detection' (Roboflow trackers' output) changes only the boxes written: the same ids in every
    frame as the official Kalman boxes, each box one of the frame's detections, and every track that took a
    detection this frame reports it."""
    import numpy as np

    from vastmat.datasets.formats import read_detections
    from vastmat.models.trackers.byte_tracker import BYTETracker
    from vastmat.structures.tracking import TrackingFrame
    dets = read_detections(osp.join(TUD, 'train', 'TUD-Campus', 'det', 'det.txt'))

    def frames():
        for frame_id in range(1, int(dets.frames.max()) + 1):
            ltwh = dets.boxes[dets.frames == frame_id]
            yield TrackingFrame.from_arrays(np.concatenate([ltwh[:, :2], ltwh[:, :2] + ltwh[:, 2:]], 1),
                                            dets.scores[dets.frames == frame_id], frame_id)
    assert detection_boxes_moved(BYTETracker, frames(), min_box_area=None) > 100
