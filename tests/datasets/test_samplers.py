"""InfiniteTrackImgSampler: mmdet's TrackImgSampler pass after pass, without mmengine's restart of the dataloader;
endless_sampler: a training sampler's endless variant."""
import pytest

from vastmat.registry import DATA_SAMPLERS, DATASETS


def video_dataset(root, test_mode):
    return DATASETS.build(dict(type='VastMATDataset', data_root=root, protocol='protocol1', split='train',
                               test_mode=test_mode, pipeline=[]))


def test_passes_are_track_img_sampler_epochs(demo_root):
    from mmdet.datasets.samplers import TrackImgSampler
    dataset = video_dataset(demo_root, test_mode=False)
    endless = iter(DATA_SAMPLERS.build(dict(type='InfiniteTrackImgSampler', dataset=dataset, seed=3)))
    finite = TrackImgSampler(dataset, seed=3)
    size = len(finite)
    assert size == 8 * 12  # 8 train videos of 12 frames
    expected = []
    for epoch in range(3):
        finite.set_epoch(epoch)
        expected += list(finite)
    got = [next(endless) for _ in range(3 * size)]
    assert got == expected
    assert got[:size] != got[size:2 * size] and sorted(got[:size]) == sorted(got[size:2 * size])


def test_test_mode_is_refused(demo_root):
    with pytest.raises(ValueError, match='test mode'):
        DATA_SAMPLERS.build(dict(type='InfiniteTrackImgSampler', dataset=video_dataset(demo_root, True), seed=0))


def test_endless_variants_of_the_training_samplers():
    from vastmat.datasets.samplers import endless_sampler
    assert endless_sampler(dict(type='TrackImgSampler', seed=1)) == dict(type='InfiniteTrackImgSampler', seed=1)
    assert endless_sampler(dict(type='DefaultSampler', shuffle=True, round_up=True)) == dict(type='InfiniteSampler',
                                                                                              shuffle=True)
    assert endless_sampler(dict(type='VastMATClipSampler')) == dict(type='VastMATClipSampler', infinite=True)
    assert endless_sampler(dict(type='InfiniteSampler', shuffle=False)) == dict(type='InfiniteSampler', shuffle=False)
    with pytest.raises(ValueError, match="sampler 'BatchSampler': no endless variant"):
        endless_sampler(dict(type='BatchSampler'))
