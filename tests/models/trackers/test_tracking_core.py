"""The tracking core: one frame input for every tracker (features, image size, extra detection sets through a
config alone), cached detections keyed by the video's own frame numbers and checked against the video, learned
parts in one checkpoint, per-video post-processing, the tracker input check."""
import os.path as osp

import numpy as np
import pytest
import torch

from helpers.common import REPO, read_results, tool
from helpers.toy_tracker import ToyInputTracker
from vastmat.datasets.detections import VideoDetections
from vastmat.datasets.formats import Detections, FormatError, GroundTruth, write_detections, write_gt, write_seqinfo
from vastmat.structures.tracking import MissingTrackerInput, TrackingFrame


LENGTH, WIDTH, HEIGHT = 30, 640, 360


def ltwh(frame: int, k: int) -> list:
    """Object k's box in a frame: moves 4 px a frame to the right."""
    return [20.0 + 200 * k + 4 * frame, 50.0 + 40 * k, 60.0, 80.0]


def write_video(root, det_root, extra_root, name='toy', gap=()):
    """A MOTChallenge folder with one video of two objects, its cached detections (two feature columns: the frame
    number and the object) and an extra detection set (each box twice)."""
    rows = [(f, k) for f in range(1, LENGTH + 1) for k in (0, 1)]
    boxes = np.array([ltwh(f, k) for f, k in rows])
    frames = np.array([f for f, _ in rows])
    ids = np.array([k + 1 for _, k in rows])
    n = len(rows)
    write_seqinfo(osp.join(root, name, 'seqinfo.ini'), dict(name=name, imDir='img1', frameRate=30, seqLength=LENGTH,
                                                            imWidth=WIDTH, imHeight=HEIGHT, imExt='.jpg'))
    write_gt(osp.join(root, name, 'gt', 'gt.txt'), GroundTruth(frames, ids, boxes, np.ones(n, np.int64),
                                                               -np.ones(n, np.int64), -np.ones(n), np.arange(n)))
    keep = ~np.isin(frames, gap) | (ids == 2)  # object 1 undetected in the gap frames
    dets = Detections(frames[keep], boxes[keep], np.full(keep.sum(), 0.9),
                      np.column_stack([frames, ids])[keep].astype(float), np.arange(keep.sum()))
    write_detections(osp.join(det_root, f'{name}.txt'), dets)
    doubled = Detections(np.r_[frames, frames], np.r_[boxes, boxes + 1], np.full(2 * n, 0.8), np.zeros((2 * n, 0)),
                         np.arange(2 * n))
    write_detections(osp.join(extra_root, f'{name}.txt'), doubled)


@pytest.fixture
def toy_data(tmp_path):
    root, dets, extra = (str(tmp_path / d) for d in ('data', 'dets', 'dets_nms95'))
    write_video(root, dets, extra)
    return root, dets, extra


PIPELINES = dict(
    # the cached-detections configs' own: one whole video per item, each file read once
    video="""[dict(type='LoadVideoDetections', det_root='{det_root}', extra_det_roots=dict(nms95='{extra_root}')),
              dict(type='PackVideoTrackingInputs')]""",
    # one frame per item (the detector-in-the-loop layout), ground truth packed too
    frame="""[dict(type='TransformBroadcaster', transforms=[
                  dict(type='LoadTrackAnnotations'),
                  dict(type='LoadTrackingDetections', det_root='{det_root}', extra_det_roots=dict(nms95='{extra_root}'))]),
              dict(type='PackVastMATInputs')]""")


def toy_config(tmp_path, det_root, extra_root, tracker='dict(type="ToyInputTracker")', extra_model='',
               pipeline='video'):
    path = tmp_path / f'toy_config_{pipeline}.py'
    sampler = "dict(_delete_=True, type='TrackImgSampler')" if pipeline == 'frame' else "dict(type='DefaultSampler', shuffle=False)"
    path.write_text(f'''
_base_ = ['{REPO}/configs/_base_/tracking_cached-dets.py']
custom_imports = dict(imports=['helpers.toy_tracker'], allow_failed_imports=False)
model = dict(tracker={tracker}{extra_model})
test_dataloader = dict(sampler={sampler}, dataset=dict(with_gt={pipeline == 'frame'}, pipeline={
        PIPELINES[pipeline].format(det_root=det_root, extra_root=extra_root)}))
''')
    return str(path)


@pytest.mark.parametrize('pipeline', list(PIPELINES))
def test_a_tracker_receives_features_image_size_and_an_extra_set_through_a_config_alone(tmp_path, toy_data,
                                                                                         pipeline):
    root, dets, extra = toy_data
    ToyInputTracker.records.clear()
    tool('tools/test.py', toy_config(tmp_path, dets, extra, pipeline=pipeline), '--data-root', root, '--work-dir',
         tmp_path / 'w')
    records = ToyInputTracker.records
    assert [r['frame_id'] for r in records] == list(range(1, LENGTH + 1))
    for r in records:
        assert r['image_size'] == (HEIGHT, WIDTH) and r['image'] is None and r['frame_rate'] == 30
        assert r['extra'] == dict(nms95=4)
        np.testing.assert_array_equal(r['features'], [[r['frame_id'], 1], [r['frame_id'], 2]])
    # the tracker's output (its features included) reaches the results file
    results = read_results(tmp_path / 'w' / 'results' / 'toy.txt')
    assert len(results) == 2 * LENGTH


@pytest.mark.parametrize('pipeline', list(PIPELINES))
def test_strided_tracking_pairs_each_frame_with_its_own_detections(tmp_path, toy_data, pipeline):
    """Tracked at stride 3, frame k of the strided sequence is frame 1 + 3 (k - 1) of the files: its cached
    detections are that frame's (they used to be the file's frame k)."""
    root, dets, extra = toy_data
    ToyInputTracker.records.clear()
    tool('tools/test.py', toy_config(tmp_path, dets, extra, pipeline=pipeline), '--data-root', root, '--work-dir',
         tmp_path / 'w', '--cfg-options', 'test_dataloader.dataset.stride=3')
    records = ToyInputTracker.records
    assert [r['frame_id'] for r in records] == list(range(1, 11))
    assert [r['source_frame'] for r in records] == list(range(1, LENGTH + 1, 3))
    for r in records:
        assert r['frame_rate'] == 10
        assert r['features'][:, 0].tolist() == [r['source_frame']] * 2
        np.testing.assert_allclose(r['bboxes'][0, :2], ltwh(r['source_frame'], 0)[:2])


def test_a_video_without_frames_is_refused_and_one_without_detections_is_tracked_empty(tmp_path, toy_data):
    root, dets, extra = toy_data
    write_seqinfo(osp.join(root, 'nothing', 'seqinfo.ini'), dict(name='nothing', imDir='img1', frameRate=30,
                                                                 seqLength=0, imWidth=WIDTH, imHeight=HEIGHT,
                                                                 imExt='.jpg'))
    config = toy_config(tmp_path, dets, extra, tracker='dict(type="BYTETracker")')
    with pytest.raises(ValueError, match=r'nothing/seqinfo.ini: seqLength is 0'):
        tool('tools/test.py', config, '--data-root', root, '--work-dir', tmp_path / 'w0')
    import shutil
    shutil.rmtree(osp.join(root, 'nothing'))
    for det_root in (dets, extra):
        with open(osp.join(det_root, 'toy.txt'), 'w'):
            pass  # no detection at all
    tool('tools/test.py', config, '--data-root', root, '--work-dir', tmp_path / 'w1')
    assert (tmp_path / 'w1' / 'results' / 'toy.txt').read_text() == ''


def test_missing_tracker_input_names_it_and_how_to_produce_it(tmp_path, toy_data):
    root, dets, extra = toy_data
    config = toy_config(tmp_path, dets, extra, tracker='dict(type="ToyInputTracker", required=("image",))')
    with pytest.raises(MissingTrackerInput, match=r"needs 'image'.*LoadImageFromFile"):
        tool('tools/test.py', config, '--data-root', root, '--work-dir', tmp_path / 'w')
    frame = TrackingFrame.from_arrays(np.zeros((0, 4)), np.zeros(0), 3, video_name='v')
    with pytest.raises(MissingTrackerInput, match=r"'extra_dets.nms95'.*extra_det_roots"):
        frame.require('extra_dets.nms95')
    with pytest.raises(MissingTrackerInput, match=r"'features'.*model.reid"):
        frame.require('features')


def test_no_data_sample_is_formatted_while_tracking(tmp_path, toy_data, monkeypatch):
    """mmdet 3.3's ``TrackDataSample.video_data_samples`` setter formats its first frame (every tensor) on each
    assignment, a stray f-string, at packing and at every device cast: neither test path (one video per item, one
    frame per item with ground truth) may format a data sample; both write the same tracks."""
    from mmdet.structures import DetDataSample, TrackDataSample
    from mmengine.structures import BaseDataElement
    formatted = []
    original = BaseDataElement.__repr__

    def counting_repr(self):
        formatted.append(type(self).__name__)
        return original(self)

    monkeypatch.setattr(BaseDataElement, '__repr__', counting_repr)
    f'{DetDataSample()}'
    TrackDataSample().video_data_samples = [DetDataSample()]  # the defect, as mmdet 3.3 has it
    assert formatted, 'the counter must see formatting'
    formatted.clear()
    root, dets, extra = toy_data
    written = {}
    for pipeline in PIPELINES:
        tool('tools/test.py', toy_config(tmp_path, dets, extra, tracker='dict(type="BYTETracker")',
                                         pipeline=pipeline), '--data-root', root, '--work-dir', tmp_path / pipeline)
        written[pipeline] = (tmp_path / pipeline / 'results' / 'toy.txt').read_bytes()
    assert formatted == []
    assert written['video'] == written['frame'] and len(written['video'].splitlines()) == 2 * LENGTH


# ---- cached detections against the video -----------------------------------------------------------------------
def det_file(tmp_path, frames):
    frames = np.asarray(frames)
    path = str(tmp_path / 'v.txt')
    write_detections(path, Detections(frames, np.tile([10.0, 10, 20, 20], (len(frames), 1)),
                                      np.full(len(frames), 0.9), np.zeros((len(frames), 0)), np.arange(len(frames))))
    return path


def test_detections_dumped_at_stride_3_are_refused_for_stride_1_tracking(tmp_path):
    path = det_file(tmp_path, np.arange(1, 61, 3))  # frames 1, 4, ..., 58
    VideoDetections(path, 60).check(np.arange(1, 61, 3))  # tracked at the same stride: fine
    with pytest.raises(FormatError, match='only on every 3th frame.*another stride'):
        VideoDetections(path, 60).check(np.arange(1, 61))


def test_detections_numbered_in_the_strided_sequence_are_refused(tmp_path):
    path = det_file(tmp_path, np.arange(1, 21))  # 1..20: the strided numbering of a 60-frame video at stride 3
    with pytest.raises(FormatError, match=r'v.txt:\d+: frame 2 is not a tracked frame.*looks numbered'):
        VideoDetections(path, 60).check(np.arange(1, 61, 3))
    VideoDetections(det_file(tmp_path, np.arange(1, 61)), 60).check(np.arange(1, 61, 3))  # full rate: fine


def test_detections_past_the_video_end_name_file_and_line(tmp_path):
    path = det_file(tmp_path, [1, 2, 31])
    with pytest.raises(FormatError, match=r'v.txt:3: frame 31 is past seqLength 30'):
        VideoDetections(path, 30)


# ---- learned parts, one checkpoint ------------------------------------------------------------------------------
def test_learned_parts_are_submodules_and_a_detector_checkpoint_loads_into_the_detector_only():
    from mmengine.config import Config

    from vastmat.registry import MODELS
    detector = Config.fromfile(osp.join(REPO, 'configs', 'yolox', 'yolox_debug_1xb4-2it_vastmat-demo.py')).model
    detector.pop('data_preprocessor')
    model = MODELS.build(dict(type='TrackingByDetection', detector=detector,
                              tracker=dict(type='ToyInputTracker', motion=dict(type='ToyMotion')),
                              reid=dict(type='ToyReID'), post_processors=[dict(type='ToyLinker')]))
    keys = set(model.state_dict())
    assert {'tracker.motion.weight', 'reid.proj.weight', 'post_processor0.scale'} <= keys
    detector_keys = [k for k in keys if k.startswith('detector.')]
    assert len(detector_keys) > 10
    # a plain detector checkpoint (its own key names) next to a trained motion model's weight
    checkpoint = {k[len('detector.'):]: torch.full_like(v, 0.5) for k, v in model.state_dict().items()
                  if k.startswith('detector.') and v.is_floating_point()}
    checkpoint['tracker.motion.weight'] = torch.arange(4.0)
    missing, unexpected = model.load_state_dict(checkpoint, strict=False)
    assert unexpected == [] and 'tracker.motion.weight' not in missing
    assert torch.equal(model.tracker.motion.weight.data, torch.arange(4.0))
    first = next(k for k in detector_keys if model.state_dict()[k].is_floating_point())
    assert torch.all(model.state_dict()[first] == 0.5)


# ---- per-video post-processing ----------------------------------------------------------------------------------
def test_post_processors_run_per_video_before_results_are_written_and_scored(tmp_path):
    root, dets, extra = (str(tmp_path / d) for d in ('data', 'dets', 'dets_nms95'))
    write_video(root, dets, extra, gap=(12, 13, 14))  # object 1 undetected for 3 frames
    config = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py')
    interpolating = tmp_path / 'bytetrack_interpolated.py'
    interpolating.write_text(f"_base_ = ['{config}']\nmodel = dict(post_processors=[dict(type='InterpolateTracks', "
                             "min_num_frames=5, max_num_frames=20)])\n")
    common = ['--det-root', dets, '--data-root', root, '--cfg-options', 'model.tracker.min_box_area=None']
    plain = tool('tools/test.py', config, '--work-dir', tmp_path / 'plain', *common)
    interpolated = tool('tools/test.py', interpolating, '--work-dir', tmp_path / 'interp', *common)
    before, after = (read_results(tmp_path / d / 'results' / 'toy.txt') for d in ('plain', 'interp'))
    filled = set(zip(after.frames.tolist(), after.ids.tolist())) - set(zip(before.frames.tolist(),
                                                                           before.ids.tolist()))
    assert sorted(f for f, _ in filled) == [12, 13, 14] and len({i for _, i in filled}) == 1
    assert interpolated['vastmat/CLR_FN'] == plain['vastmat/CLR_FN'] - 3


def test_interpolation_keeps_short_tracks_and_accepts_an_empty_video():
    from vastmat.models.post import InterpolateTracks
    rows = np.array([[1, 7, 0, 0, 10, 10, 0.9], [1, 8, 50, 0, 60, 10, 0.9], [4, 8, 53, 0, 63, 10, 0.9]])
    out = InterpolateTracks(min_num_frames=1)(rows)
    assert out[:, :2].tolist() == [[1, 7], [1, 8], [2, 8], [3, 8], [4, 8]]
    np.testing.assert_allclose(out[2, 2:6], [51, 0, 61, 10])
    assert InterpolateTracks()(np.zeros((0, 7))).shape == (0, 7)
