"""MOTIP's training data as the official code makes it (MCG-NJU/MOTIP 5cfbcd4): legal frames (data/util.py
is_legal), the legal clips of an epoch (data/naive_sampler.py NaiveSampler) and the clip crop (data/transforms.py
MultiRandomCrop), compared with the official functions' outputs (tests/fixtures/motip_official/training_data.json,
made by make_training_data_golden.py there; README.md says how)."""
import copy
import json
import os.path as osp
import random

import numpy as np
import pytest
import torch
from mmdet.structures.bbox import HorizontalBoxes
from mmengine.config import Config

from helpers.common import REPO, vastmat_scope

GOLDEN = json.load(open(osp.join(REPO, 'tests', 'fixtures', 'motip_official', 'training_data.json')))
CONFIGS = osp.join(REPO, 'configs', 'motip')


@pytest.fixture(scope='module', autouse=True)
def scope():
    vastmat_scope()


# ------------------------------------------------------------------------------------------------ legal frames
def test_frame_legality_is_the_official_is_legal():
    from vastmat.datasets import frame_is_legal
    cases, legal = GOLDEN['is_legal']['cases'], GOLDEN['is_legal']['legal']
    assert legal == dict(empty=False, one=True, three=True, max_300=True, over_301=False, duplicate=False)
    for name, ids in cases.items():
        assert frame_is_legal(ids) is legal[name], name
    # ignored boxes (valid 0 in gt.txt) are no training target: they count for nothing
    assert frame_is_legal([1, 2], [1, 1]) is False
    assert frame_is_legal([1, 2], [0, 1]) is True
    assert frame_is_legal([4, 4], [0, 1]) is True  # the repeated id is ignored
    assert frame_is_legal([1, 2, 3], max_identities=2) is False
    with pytest.raises(ValueError, match='2 ignore flags for 3 instance ids'):
        frame_is_legal([1, 2, 3], [0, 0])


# ------------------------------------------------------------------------------------------------ the sampler
def write_video(root, name, frames):
    """A VastMAT video folder (no images: the sampler reads the ground truth only); ``frames[k]`` is frame k's
    list of (id, valid)."""
    from vastmat.datasets.formats import write_seqinfo
    folder = osp.join(root, 'videos', name)
    lines = [f'{k + 1},{i},{10 + i % 50},{10 + i // 50},5,5,{valid},1,1\n'
             for k, boxes in enumerate(frames) for i, valid in boxes]
    (root / 'videos' / name / 'gt').mkdir(parents=True)
    (root / 'videos' / name / 'gt' / 'gt.txt').write_text(''.join(lines))
    write_seqinfo(osp.join(folder, 'seqinfo.ini'), dict(name=name, imDir='img1', frameRate=10, seqLength=len(frames),
                                                        imWidth=640, imHeight=480, imExt='.jpg'))


LEGAL = [(1, 1), (2, 1)]  # two evaluated animals


def illegal_frame(video, k):
    """Each illegal frame of the official fixture made illegal in its own way: no box, only ignored boxes, 301
    identities."""
    return {('A', 6): [], ('D', 0): [(1, 0), (2, 0)], ('D', 7): [(i, 1) for i in range(1, 302)]}[(video, k)]


def golden_root(tmp_path):
    root = tmp_path / 'root'
    for name, flags in GOLDEN['sampler']['sequences']:
        write_video(root, name, [LEGAL if ok else illegal_frame(name, k) for k, ok in enumerate(flags)])
    return root


def build_dataset(root, videos, clip_length, max_interval_seconds, **kwargs):
    from vastmat.registry import DATASETS
    cfg = dict(type='VastMATDataset', data_root=str(root), videos=videos, load_as='video',
               filter_cfg=dict(filter_empty_gt=False), pipeline=[dict(
                   type='VastMATClipSample', clip_length=clip_length, max_interval_seconds=max_interval_seconds)])
    return DATASETS.build(dict(cfg, **kwargs))


def build_sampler(dataset, **kwargs):
    from vastmat.registry import DATA_SAMPLERS
    return DATA_SAMPLERS.build(dict(type='VastMATClipSampler', dataset=dataset, **kwargs))


@pytest.mark.parametrize('case', ['clip4_interval3', 'clip1_interval4'])
def test_sampler_gives_the_official_clips_of_each_epoch(tmp_path, case):
    """Same seed, same frame legality: the official NaiveSampler's clips, in its order (interval of a start drawn
    as the official draws it, then torch.randperm)."""
    golden = GOLDEN['sampler']['cases'][case]
    names = [name for name, _ in GOLDEN['sampler']['sequences']]
    # the official largest interval in frames: interval / 10 s at the videos' 10 FPS
    dataset = build_dataset(golden_root(tmp_path), names, golden['length'], golden['interval'] / 10)
    sampler = build_sampler(dataset, seed=golden['seed'])
    rule = sampler.rule
    assert [legal.tolist() for legal in sampler.legal] == [flags for _, flags in GOLDEN['sampler']['sequences']]
    for epoch, clips in golden['epochs'].items():
        ours = [[names[video], rule.clip_positions(start, interval)] for video, start, interval in
                sampler.clips(int(epoch))]
        assert ours == clips, epoch
        sampler.set_epoch(int(epoch))
        assert len(sampler) == len(clips)
        assert list(sampler) == [(names.index(name), frames[0]) for name, frames in clips]
    if case == 'clip4_interval3':  # C (3 frames) gives no clip; no start after length - 4; frame 6 of A never
        assert all(name != 'C' for epoch in golden['epochs'].values() for name, _ in epoch)
        assert all(6 not in frames for epoch in golden['epochs'].values() for name, frames in epoch if name == 'A')
        assert [len(c) for c in golden['epochs'].values()] == [16, 17, 15]


def test_sampler_splits_an_epoch_over_processes(tmp_path, monkeypatch):
    from vastmat.datasets import frame_sampling
    golden = GOLDEN['sampler']['cases']['clip4_interval3']
    names = [name for name, _ in GOLDEN['sampler']['sequences']]
    dataset = build_dataset(golden_root(tmp_path), names, 4, 0.3)
    shares = []
    for rank in (0, 1):
        monkeypatch.setattr(frame_sampling, 'get_dist_info', lambda rank=rank: (rank, 2))
        sampler = build_sampler(dataset, seed=1025)
        sampler.set_epoch(1)  # 17 clips: 9 a process, the first clip again to fill the second process's share
        shares.append(list(sampler))
        assert len(sampler) == 9
    everything = [(names.index(name), frames[0]) for name, frames in golden['epochs']['1']]
    assert shares[0] == everything[0::2] and shares[1] == everything[1::2] + [everything[0]]


def test_infinite_sampler_runs_epoch_after_epoch(tmp_path):
    golden = GOLDEN['sampler']['cases']['clip4_interval3']['epochs']
    names = [name for name, _ in GOLDEN['sampler']['sequences']]
    sampler = build_sampler(build_dataset(golden_root(tmp_path), names, 4, 0.3), seed=1025, infinite=True)
    stream = iter(sampler)
    items = [next(stream) for _ in range(16 + 17 + 15)]
    assert items == [(names.index(name), frames[0]) for e in ('0', '1', '2') for name, frames in golden[e]]


def test_sampler_errors_name_the_dataset_or_video(tmp_path):
    root = tmp_path / 'root'
    write_video(root, 'Empty', [[], [], [(1, 0)], [], []])
    write_video(root, 'Short', [LEGAL, LEGAL])
    with pytest.raises(ValueError, match=r"no legal clip in VastMATDataset\(data_root='.*root'.*2 videos\): a clip of "
                                         r'4 frames needs 1 to 300 evaluated identities'):
        build_sampler(build_dataset(root, ['Empty', 'Short'], 4, 0.2))
    write_video(root, 'Good', [LEGAL] * 5)
    sampler = build_sampler(build_dataset(root, ['Empty', 'Good'], 4, 0.2), seed=0)
    assert [video for video, _, _ in sampler.clips(0)] == [1, 1]  # Empty is skipped (and named in the log)
    from vastmat.registry import DATASETS
    no_rule = DATASETS.build(dict(type='VastMATDataset', data_root=str(root), videos=['Good'], load_as='video',
                                  pipeline=[]))
    with pytest.raises(ValueError, match='pipeline of VastMATDataset.* has no VastMATClipSample'):
        build_sampler(no_rule)
    with pytest.raises(ValueError, match='is in test mode'):
        build_sampler(build_dataset(root, ['Good'], 4, 0.2, test_mode=True))
    write_video(root, 'Gap', [LEGAL, [], LEGAL, LEGAL])
    filtered = build_dataset(root, ['Gap'], 2, 0.2, filter_cfg=dict(filter_empty_gt=True))  # frame 1 left out
    with pytest.raises(ValueError, match=r"video 'Gap' lacks frames \(frame_id 2 at position 1, first 0\): clips take "
                                         r'frames by position'):
        build_sampler(filtered)


# ------------------------------------------------------------------------------------------------ the clip transform
def video(legal_flags, rate=10):
    return dict(video_id=0, video_name='v', video_length=len(legal_flags), images=[
        dict(frame_id=k, frame_rate=rate, img_path=f'{k}.jpg',
             instances=[dict(instance_id=1, ignore_flag=0)] if ok else []) for k, ok in enumerate(legal_flags)])


def test_interval_distribution_is_the_official_one():
    from vastmat.datasets import VastMATClipSample
    rule = VastMATClipSample(clip_length=5, max_interval_seconds=0.4)  # 4 frames at 10 FPS
    # min(randint(1, 4), (40 - start - 1) // 4): from 30 the interval fits up to 2, so draws 2, 3, 4 all give 2
    assert rule.interval_choices(40, 30, 4) == ([1, 2], [1, 3])
    assert rule.interval_choices(40, 0, 4) == ([1, 2, 3, 4], [1, 1, 1, 1])
    assert rule.interval_choices(40, 35, 4) == ([1], [4])  # 35 + 5 = 40: the last start
    assert rule.interval_choices(40, 36, 4) == ([], [])  # no clip moved back from the end
    assert rule.interval_choices(3, 0, 4) == ([], [])  # a video shorter than the clip has none
    legal = np.ones(40, bool)
    legal[33] = False
    assert rule.legal_choices(legal, 30, 4) == ([2], [3])  # 30, 31, 32, 33, 34 is not legal
    assert rule.legal_choices(legal, 29, 4) == ([], [])  # 29..33 and 29, 31, 33: no legal clip
    assert rule.legal_choices(legal, 25, 4) == ([1, 3], [1, 2])  # fits up to 3 (draws 3, 4); 2 reaches 33
    rng = random.Random(5)
    state = rng.getstate()
    assert rule.official_interval(rng, 40, 36, 4) is None and rng.getstate() == state  # no start, no draw
    assert rule.official_interval(rng, 40, 30, 4) == min(random.Random(5).randint(1, 4), 2)
    official = VastMATClipSample(clip_length=30, max_interval_seconds=0.2)  # the configs' 0.2 s
    assert official.max_interval(video([True], rate=20)) == 4 and official.max_interval(video([True])) == 2
    one = VastMATClipSample(clip_length=1)
    assert one.interval_choices(3, 2, 2) == ([1], [2])


def test_clip_transform_draws_legal_clips_with_the_official_probabilities(monkeypatch):
    from vastmat.datasets import VastMATClipSample, frame_sampling
    drawn = []

    def choices(population, weights):
        drawn.append((list(population), list(weights)))
        return [population[-1]]

    monkeypatch.setattr(frame_sampling.random, 'choices', choices)
    rule = VastMATClipSample(clip_length=3, max_interval_seconds=0.2)  # 2 frames at 10 FPS
    flags = [True, False, True, True, True, True, True]  # frame 1 illegal
    out = rule.transform(dict(video(flags), key_frame_id=2))  # 2, 3, 4 or 2, 4, 6: both legal
    assert drawn.pop() == ([1, 2], [1, 1]) and out['frame_id'] == [2, 4, 6]
    assert out['key_frame_flags'] == [True, False, False]
    # a start that begins no legal clip (1 is illegal, 5 too close to the end) or none: a legal clip of the video,
    # each (start, interval) with its official chance (its count among the draws: from 3 and 4 only interval 1 fits,
    # so both draws give it)
    for start in (1, 5, None):
        out = rule.transform(dict(video(flags), key_frame_id=start) if start is not None else video(flags))
        assert drawn.pop() == ([(0, 2), (2, 1), (2, 2), (3, 1), (4, 1)], [1, 1, 1, 2, 2])
        assert out['frame_id'] == [4, 5, 6]
    assert rule.transform(video([True] * 2)) is None  # no legal clip: mmengine's dataset draws another item
    assert rule.transform(video([False] * 6)) is None
    with pytest.raises(ValueError, match="video 'v' has no frame rate"):
        rule.transform(dict(video([True] * 6, rate=None), key_frame_id=0))
    with pytest.raises(IndexError, match="frame 9 outside the 6 frames of video 'v'"):
        rule.transform(dict(video([True] * 6), key_frame_id=9))
    with pytest.raises(ValueError, match='clip_length must be >= 1'):
        VastMATClipSample(clip_length=0)
    with pytest.raises(ValueError, match='0 <= min_identities <= max_identities'):
        VastMATClipSample(min_identities=3, max_identities=2)


# ------------------------------------------------------------------------------------------------ the clip crop
def clip_results(frames, hw=(20, 30)):
    """A clip as TransformBroadcaster([LoadImageFromFile, LoadTrackAnnotations]) leaves it: per-frame lists."""
    def column(key, default, dtype):
        return [np.array(f.get(key, [default] * len(f['ids'])), dtype=dtype) for f in frames]

    return dict(img=[np.zeros((*hw, 3), np.uint8) for _ in frames], img_shape=[hw] * len(frames),
                img_path=[f'{t}.jpg' for t in range(len(frames))],
                gt_bboxes=[HorizontalBoxes(torch.tensor(f['boxes'], dtype=torch.float32).reshape(-1, 4))
                           for f in frames],
                gt_bboxes_labels=column('labels', 0, np.int64), gt_ignore_flags=column('ignore', False, bool),
                gt_instances_ids=column('ids', 0, np.int64), gt_categories=column('categories', 1, np.int64))


def fixed_window(crop, monkeypatch, window):
    """The crop's random window fixed to ``(i, j, h, w)`` (top, left, height, width), the official get_params'."""
    i, j, h, w = window
    monkeypatch.setattr(crop, '_get_crop_size', lambda image_size: (h, w))
    monkeypatch.setattr(crop, '_rand_offset', lambda margin: (i, j))


def crop_transform(**kwargs):
    from vastmat.registry import TRANSFORMS
    return TRANSFORMS.build(dict(type='ClipRandomCrop', crop_size=(4, 12), **kwargs))


@pytest.mark.parametrize('case', ['kept', 'rejected'])
def test_clip_crop_is_the_official_multi_random_crop(monkeypatch, case):
    """Boxes translated, clipped, those without area dropped (frame 1's zero-width id 5 too, which mmdet's
    is_inside would keep); a crop that empties a frame (case rejected: frame 1) leaves the whole clip uncropped."""
    golden = GOLDEN['crop']['cases'][case]
    crop = crop_transform()
    fixed_window(crop, monkeypatch, golden['window'])
    results = clip_results(GOLDEN['crop']['clip'])
    original = copy.deepcopy(results)
    out = crop.transform(results)
    assert [list(img.shape[:2]) for img in out['img']] == [golden['image_hw']] * 3
    assert [list(shape) for shape in out['img_shape']] == [golden['image_hw']] * 3
    assert [ids.tolist() for ids in out['gt_instances_ids']] == [f['ids'] for f in golden['frames']]
    assert [boxes.numpy().tolist() for boxes in out['gt_bboxes']] == [f['boxes'] for f in golden['frames']]
    assert [len(labels) for labels in out['gt_bboxes_labels']] == [len(f['ids']) for f in golden['frames']]
    if case == 'rejected':  # the input clip itself, untouched (the boxes were not translated in place)
        assert out is results and 'homography_matrix' not in out
        assert all((a.numpy() == b.numpy()).all() for a, b in zip(out['gt_bboxes'], original['gt_bboxes']))


def test_clip_crop_keeps_every_instance_array_aligned_and_ignores_ignored_boxes(monkeypatch):
    frames = [dict(ids=[1, 2], boxes=[[12, 6, 18, 12], [11, 6, 13, 8]], ignore=[False, True], categories=[5, 6],
                   labels=[0, 0]),
              dict(ids=[3, 4], boxes=[[12, 6, 18, 12], [0, 0, 5, 5]], ignore=[False, False], categories=[7, 8],
                   labels=[0, 0])]
    crop = crop_transform()
    fixed_window(crop, monkeypatch, (5, 10, 10, 12))
    out = crop.transform(clip_results(frames))
    assert [ids.tolist() for ids in out['gt_instances_ids']] == [[1, 2], [3]]
    assert [c.tolist() for c in out['gt_categories']] == [[5, 6], [7]]
    assert [f.tolist() for f in out['gt_ignore_flags']] == [[False, True], [False]]
    assert [b.numpy().tolist() for b in out['gt_bboxes']] == [[[2, 1, 8, 7], [1, 1, 3, 3]], [[2, 1, 8, 7]]]
    assert np.array_equal(out['homography_matrix'][0], np.array([[1, 0, -10], [0, 1, -5], [0, 0, 1]], np.float32))
    # frame 1 left with its ignored box only: no training target, the clip stays uncropped
    frames[1] = dict(ids=[3, 4], boxes=[[12, 6, 18, 12], [0, 0, 5, 5]], ignore=[True, False], categories=[7, 8])
    out = crop.transform(clip_results(frames))
    assert [img.shape[:2] for img in out['img']] == [(20, 30), (20, 30)]
    assert [ids.tolist() for ids in out['gt_instances_ids']] == [[1, 2], [3, 4]]
    # the upper bound applies to the cropped frames too: frame 0 keeps 2 evaluated identities
    frames[0]['ignore'], frames[1]['ignore'] = [False, False], [False, False]
    crop = crop_transform(max_identities=1)
    fixed_window(crop, monkeypatch, (5, 10, 10, 12))
    assert crop.transform(clip_results(frames))['img'][0].shape[:2] == (20, 30)
    frames[0]['ignore'] = [False, True]
    assert crop.transform(clip_results(frames))['img'][0].shape[:2] == (10, 12)


def test_clip_crop_draws_one_window_for_the_whole_clip():
    boxes = [[5, 5, 40, 30], [20, 10, 45, 35], [1, 1, 8, 8]]
    frames = [dict(ids=[1, 2, 3], boxes=boxes)] * 3
    crop = crop_transform()
    sizes = set()
    for seed in range(20):
        np.random.seed(seed)
        out = crop.transform(clip_results(frames, hw=(40, 50)))
        assert len({img.shape for img in out['img']}) == 1
        assert all(b.numpy().tolist() == out['gt_bboxes'][0].numpy().tolist() for b in out['gt_bboxes'])
        assert all(ids.tolist() == out['gt_instances_ids'][0].tolist() for ids in out['gt_instances_ids'])
        h, w = out['img'][0].shape[:2]
        assert 4 <= h <= 12 and 4 <= w <= 12 or (h, w) == (40, 50)
        sizes.add((h, w))
    assert len(sizes) > 5  # the window is drawn anew for each clip


def test_clip_crop_needs_a_clip():
    crop = crop_transform()
    with pytest.raises(TypeError, match='needs a whole clip .* got img of type ndarray'):
        crop.transform(dict(img=np.zeros((8, 8, 3), np.uint8)))
    results = clip_results([dict(ids=[1], boxes=[[1, 1, 3, 3]])] * 2)
    results['img_path'] = ['0.jpg']
    with pytest.raises(ValueError, match="img_path is not a list of the clip's 2 frames"):
        crop.transform(results)
    results = clip_results([dict(ids=[1], boxes=[[1, 1, 3, 3]])])
    results['gt_instances_ids'] = [np.array([1, 2])]
    with pytest.raises(ValueError, match=r'gt_instances_ids has 2 entries for 1 boxes \(0.jpg\)'):
        crop.transform(results)
    with pytest.raises(ValueError, match='0 <= min_identities <= max_identities'):
        crop_transform(min_identities=-1)


# ------------------------------------------------------------------------------------------------ the configs
def test_motip_configs_take_legal_clips_and_the_clip_crop():
    from vastmat.registry import TRANSFORMS

    def flat(pipeline):
        for t in pipeline:
            yield t
            yield from flat(t.get('transforms') or [])

    for name, (length, bound) in {'motip_r50_8xb1-10e_vastmat-p1.py': (30, 300),
                                  'motip_r50_8xb1-10e_vastmat-p2.py': (30, 300),
                                  'motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py': (1, 300),
                                  'motip_r50_8xb2-20e_vastmat-p2_detr-pretrain.py': (1, 300),
                                  'motip_tiny_vastmat-demo.py': (4, 20)}.items():
        cfg = Config.fromfile(osp.join(CONFIGS, name))
        assert cfg.train_dataloader.sampler == dict(type='VastMATClipSampler'), name
        pipeline = cfg.train_dataloader.dataset.pipeline
        transforms = list(flat(pipeline))
        sample = transforms[0]
        assert (sample.type, sample.clip_length, sample.min_identities, sample.max_identities) == (
            'VastMATClipSample', length, 1, bound), name
        crops = [t for t in transforms if 'Crop' in t.type]
        assert [(t.type, t.min_identities, t.max_identities) for t in crops] == [('ClipRandomCrop', 1, bound)], name
        assert not [t for t in transforms if t.type == 'TransformBroadcaster' and 'Crop' in str(t.transforms)]
        assert cfg.train_dataloader.dataset.filter_cfg == dict(filter_empty_gt=False)
        for t in pipeline:
            TRANSFORMS.build(t)
    cfg = Config.fromfile(osp.join(CONFIGS, 'motip_r50_8xb1-10e_vastmat-p1.py'))
    assert [t for t in flat(cfg.train_dataloader.dataset.pipeline) if t.type == 'ClipRandomCrop'][0].crop_size == (
        384, 600)  # official AUG_RANDOM_CROP_MIN / MAX


def test_warm_up_is_the_official_lr_times_i_plus_1_over_n():
    """MOTIP's ``lr_warmup``: lr x (i + 1) / N at iteration i of the warm-up epoch (N its iterations), then the
    multi-step decay; built by mmengine from the full-size config's param_scheduler with a 7-iteration epoch."""
    import torch
    from mmengine.config import Config
    from mmengine.optim.scheduler import MultiStepLR

    from vastmat.registry import PARAM_SCHEDULERS
    cfg = Config.fromfile(osp.join(REPO, 'configs', 'motip', 'motip_r50_8xb1-10e_vastmat-p1.py'))
    warmup = cfg.param_scheduler[0]
    assert warmup.type == 'WarmupFromOneOverN' and warmup.convert_to_iter_based
    lr, n = 1e-4, 7
    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=lr)
    args = {k: v for k, v in warmup.items() if k not in ('type', 'convert_to_iter_based')}
    scheduler = PARAM_SCHEDULERS.get(warmup.type).build_iter_from_epoch(optimizer, epoch_length=n, **args)
    decay = MultiStepLR(optimizer, milestones=[6, 9], gamma=0.1, begin=0, end=10, by_epoch=True)
    seen = []
    for _ in range(n + 2):
        seen.append(optimizer.param_groups[0]['lr'])
        scheduler.step()
    expected = [lr * (i + 1) / n for i in range(n)] + [lr, lr]
    assert seen == pytest.approx(expected, rel=1e-12)
    assert decay.last_step == 0  # the epoch-based decay steps at epoch ends only
