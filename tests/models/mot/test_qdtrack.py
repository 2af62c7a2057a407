"""QDTrack on VastMAT: key / reference pair sampling, the full-size model, and the tiny config trained, resumed and
tested end to end."""
import glob
import json
import os.path as osp
import random
import re

import numpy as np
import pytest
import torch

from helpers.common import (ANIMALTRACK, REPO, needs_animaltrack, set_aside_logs, tool,
                            video_data_root_options)

FULL_P1 = osp.join(REPO, 'configs', 'qdtrack', 'qdtrack_faster-rcnn_r50_fpn_8xb2-4e_vastmat-p1.py')
TINY = osp.join(REPO, 'configs', 'qdtrack', 'qdtrack_tiny_vastmat-demo.py')


def video(frame_ids, frame_rate=10, name='v'):
    """A video info as VastMATDataset gives it (only the keys the sampler reads)."""
    return dict(video_id=0, video_name=name, video_length=len(frame_ids),
                images=[dict(frame_id=f, frame_rate=frame_rate, img_path=f'{f}.jpg') for f in frame_ids])


def sample(sampler, info, key, seed=0):
    random.seed(seed)
    results = sampler.transform(dict(info, images=[dict(i) for i in info['images']], key_frame_id=key))
    return results['frame_id'], results['key_frame_flags']


# ------------------------------------------------------------------------------------------------- pair sampling
def test_reference_frames_lie_within_a_third_of_a_second():
    from vastmat.datasets import VastMATRefFrameSample
    sampler = VastMATRefFrameSample(num_ref_imgs=1)  # 10/30 s: 3 frames at 10 FPS
    info = video(list(range(40)))
    refs = set()
    for seed in range(200):
        frames, flags = sample(sampler, info, key=20, seed=seed)
        assert len(frames) == 2 and sum(flags) == 1 and frames[flags.index(True)] == 20
        refs.add(frames[flags.index(False)])
    assert refs == {17, 18, 19, 21, 22, 23}  # every candidate, never the key frame itself
    # at the start of the video the window is cut, as mmdet's
    assert {sample(sampler, info, key=0, seed=s)[0][1] for s in range(100)} == {1, 2, 3}


def test_range_follows_the_frame_rate_of_each_video():
    from vastmat.datasets import VastMATRefFrameSample
    sampler = VastMATRefFrameSample(num_ref_imgs=1, frame_range_seconds=1.0)
    for rate, expected in ((10, 10), (5, 5), (30, 30), (0.4, 1)):  # a strided 10 FPS video has rate 5; at least 1
        assert sampler.range_in_frames(video([0], frame_rate=rate)) == expected
    with pytest.raises(ValueError, match="video 'v' has no frame rate"):
        sampler.range_in_frames(video([0], frame_rate=None))


def test_frames_are_located_by_number_not_list_position():
    """After filter_empty_gt a video has gaps: neighbours in the list may be far apart in time."""
    from vastmat.datasets import VastMATRefFrameSample
    sampler = VastMATRefFrameSample(num_ref_imgs=1)
    info = video([0, 1, 2, 10, 11, 30])  # frames 3-9 and 12-29 had no evaluated animal
    refs = {tuple(sample(sampler, info, key=3, seed=s)[0]) for s in range(100)}  # key frame 10
    assert refs == {(10, 11)}
    # frame 30 has no other frame within 3: it is its own reference (mmdet's sampler asserts)
    assert sample(sampler, info, key=5)[0] == [30, 30]
    # no reference at all: the key frame alone (the sampling of single-frame training, FairMOT)
    assert sample(VastMATRefFrameSample(num_ref_imgs=0), info, key=2)[0] == [2]
    # only earlier frames (a reference used as the previous frame, TransTrack); the first frame is its own
    past = VastMATRefFrameSample(num_ref_imgs=1, direction='past')
    assert {tuple(sample(past, info, key=2, seed=s)[0]) for s in range(50)} == {(0, 2), (1, 2)}
    assert {tuple(sample(past, info, key=4, seed=s)[0]) for s in range(50)} == {(10, 11)}
    assert sample(past, info, key=0)[0] == [0, 0]
    with pytest.raises(ValueError, match="direction must be 'both' or 'past'"):
        VastMATRefFrameSample(direction='future')


@needs_animaltrack
def test_at_30_fps_it_samples_what_mmdet_samples_with_frame_range_10():
    """On a real 30 FPS video (AnimalTrack) the range is the published frame_range=10, and with the same random
    state the two samplers pick the same reference frames."""
    from mmdet.datasets.transforms import UniformRefFrameSample

    from vastmat.datasets import VastMATDataset, VastMATRefFrameSample
    dataset = VastMATDataset(data_root=ANIMALTRACK, videos=['chicken_3'], load_as='video')
    info = dataset.get_data_info(0)
    assert info['images'][0]['frame_rate'] == 30
    ours, theirs = VastMATRefFrameSample(num_ref_imgs=1), UniformRefFrameSample(num_ref_imgs=1, frame_range=10)
    for key in (0, 5, 100, info['video_length'] - 1):
        for seed in range(20):
            random.seed(seed)
            expected = theirs.transform(dict(info, key_frame_id=key))['frame_id']
            assert sample(ours, info, key, seed)[0] == expected


def test_filtered_training_videos_keep_consistent_lengths(demo_root):
    """filter_empty_gt drops frames: video_length follows, so mmdet's samplers index only kept frames."""
    from vastmat.datasets import VastMATDataset
    with pytest.raises(ValueError, match='leaves no frame of the 96'):  # every frame fails min_size
        VastMATDataset(data_root=demo_root, protocol='protocol1', split='train', load_as='video',
                       filter_cfg=dict(filter_empty_gt=True, min_size=10_000))
    dataset = VastMATDataset(data_root=demo_root, protocol='protocol1', split='train', load_as='video',
                             filter_cfg=dict(filter_empty_gt=True))
    for index in range(len(dataset)):
        info = dataset.get_data_info(index)
        assert info['video_length'] == len(info['images']) == dataset.get_len_per_video(index)
        assert all(any(not inst['ignore_flag'] for inst in image['instances']) for image in info['images'])


def test_global_instance_ids_number_the_identities_of_the_split(demo_root):
    from vastmat.datasets import VastMATDataset
    from vastmat.datasets.formats import read_gt
    per_video = VastMATDataset(data_root=demo_root, protocol='protocol1', split='train')
    numbered = VastMATDataset(data_root=demo_root, protocol='protocol1', split='train', instance_ids='global')
    pairs = {}
    for index in range(len(per_video)):
        for a, b in zip(per_video.get_data_info(index)['images'], numbered.get_data_info(index)['images']):
            for inst_a, inst_b in zip(a['instances'], b['instances']):
                assert pairs.setdefault((a['video_name'], inst_a['instance_id']), inst_b['instance_id']) == \
                    inst_b['instance_id']
    # one number per (video, gt id): 0..K-1, video after video, gt ids ascending within a video
    expected, start = {}, 0
    for index in range(len(per_video)):
        name = per_video.get_data_info(index)['video_name']
        ids = np.unique(read_gt(osp.join(demo_root, 'videos', name, 'gt', 'gt.txt')).ids)
        expected.update({(name, int(i)): start + k for k, i in enumerate(ids)})
        start += len(ids)
    assert pairs == expected and numbered.metainfo['num_identities'] == start
    with pytest.raises(ValueError, match="instance_ids must be one of"):
        VastMATDataset(data_root=demo_root, protocol='protocol1', split='train', instance_ids='split')


# ------------------------------------------------------------------------------------------------ full-size model
def test_full_size_model_has_the_published_parameter_count_and_runs():
    """QDTrack R50-FPN (Pang et al. 2021; the SysCV and mmdet configs), one class. Derivation:
    ResNet-50 without fc                                                     23,508,032
    FPN: 1x1 laterals (256+512+1024+2048)*256 + 4*256 = 984,064; 4 3x3 convs 4*(256*256*9+256) = 2,360,320
                                                                              3,344,384
    RPN: 3x3 conv 590,080 + cls 256*3+3 = 771 + reg 256*12+12 = 3,084         593,935
    RoI box head (Shared2FC): fc 12544*1024+1024 = 12,846,080, fc 1024*1024+1024 = 1,049,600,
        cls 1024*2+2 = 2,050, reg 1024*4+4 = 4,100                           13,901,830
    Embedding head: 4 3x3 convs without bias + GN 4*(256*256*9+512) = 2,361,344, fc 12,846,080,
        embed 1024*256+256 = 262,400                                         15,469,824
    total                                                                    56,818,005
    """
    from mmengine.config import Config
    from mmengine.registry import DefaultScope

    from vastmat.registry import MODELS
    cfg = Config.fromfile(FULL_P1)
    with DefaultScope.overwrite_default_scope('vastmat'):  # mmdet's QDTrack builds its parts in the current scope
        model = MODELS.build(cfg.model)
    count = sum(p.numel() for p in model.parameters())
    assert abs(count - 56_818_005) / 56_818_005 < 0.01, count
    assert sum(p.numel() for p in model.track_head.parameters()) == 15_469_824
    assert model.tracker.memo_tracklet_frames == 10 and model.tracker.init_score_thr == 0.9

    # one training forward pass of a key / reference pair at 128 x 128 (losses of every head), then prediction
    from mmdet.structures import DetDataSample, TrackDataSample
    from mmengine.structures import InstanceData
    torch.manual_seed(0)
    frames = []
    for frame_id in (0, 1):
        sample = DetDataSample(metainfo=dict(img_shape=(128, 128), ori_shape=(128, 128), scale_factor=(1.0, 1.0),
                                             frame_id=frame_id, img_id=frame_id, batch_input_shape=(128, 128),
                                             pad_shape=(128, 128)))
        sample.gt_instances = InstanceData(bboxes=torch.tensor([[10., 20., 60., 90.], [70., 30., 110., 80.]]),
                                           labels=torch.tensor([0, 0]), instances_ids=torch.tensor([3, 7]))
        frames.append(sample)
    clip = TrackDataSample(metainfo=dict(key_frames_inds=[0], ref_frames_inds=[1]))
    clip.video_data_samples = frames
    model.train()
    losses = model.loss(torch.rand(1, 2, 3, 128, 128) * 255, [clip])
    assert {'loss_rpn_cls', 'loss_cls', 'loss_bbox', 'loss_track', 'loss_track_aux'} <= set(losses)
    values = [v for k, value in losses.items() if k.startswith('loss')
              for v in (value if isinstance(value, list) else [value])]  # the RPN's losses come per level
    assert all(torch.isfinite(v).all() for v in values)


# ------------------------------------------------------------------------------------------------ end to end
def _losses(work_dir):
    logs = sorted(glob.glob(osp.join(work_dir, '*', '*.log')), key=osp.getmtime)
    values = {}
    for log in logs:
        for match in re.finditer(r'Iter\(train\) \[ *(\d+)/\d+\].*? loss: ([0-9.]+)', open(log).read()):
            values[int(match.group(1))] = float(match.group(2))
    return [values[i] for i in sorted(values)]


@pytest.mark.slow
@pytest.mark.xdist_group('qdtrack_tiny')
def test_tiny_config_trains_resumes_and_tracks(demo_root, tmp_path):
    data = video_data_root_options(demo_root, with_val=True)
    work = str(tmp_path / 'train')
    tool('tools/train.py', TINY, '--work-dir', work, '--cfg-options', *data, 'train_cfg.max_iters=8')
    assert osp.isfile(osp.join(work, 'iter_8.pth'))
    set_aside_logs(work)  # the resumed run's log folder: its own
    tool('tools/train.py', TINY, '--work-dir', work, '--resume', '--cfg-options', *data)
    assert 'resumed epoch: 0, iter: 8' in open(sorted(glob.glob(osp.join(work, '*', '*.log')))[-1]).read()
    losses = _losses(work)
    assert len(losses) == 16
    assert np.mean(losses[-4:]) < 0.8 * np.mean(losses[:4]), losses  # the loss falls (about 2.5 -> 1.4)

    out = tmp_path / 'test'
    tool('tools/test.py', TINY, '--checkpoint', osp.join(work, 'iter_16.pth'), '--work-dir', out,
         '--cfg-options', *data)
    metrics = json.load(open(out / 'metrics.json'))
    assert 0.0 <= metrics['vastmat/HOTA'] <= 1.0 and metrics['vastmat/CLR_FN'] >= 0
    for name in ('Bee-1', 'Horse-1', 'Penguin-1'):
        assert osp.isfile(out / 'results' / f'{name}.txt')
    rows = np.loadtxt(out / 'results' / 'Bee-1.txt', delimiter=',', ndmin=2)
    assert len(rows) and (rows[:, 1] >= 0).all()  # tracks written in the MOT results format (mmdet's ids from 0)
