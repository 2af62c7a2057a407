"""Dataset counts, Figure 3 and Table 2 statistics on AnimalTrack train; VastMATDataset on real and demo data."""
import json

import numpy as np
import pytest

from helpers.common import ANIMALTRACK, needs_animaltrack, tool
from vastmat.datasets.sequences import list_sequences, load_sequence
from vastmat.datasets.statistics import (counts, displacement_table, motion, normalized_displacement,
                                         pairwise_iou_ltwh)


@pytest.fixture(scope='module')
def animaltrack():
    return {k: [load_sequence(ANIMALTRACK, n, stride=k) for n in list_sequences(ANIMALTRACK)] for k in (1, 3)}


@needs_animaltrack
def test_animaltrack_counts(animaltrack):
    full = counts(animaltrack[1])
    assert (full['videos'], full['frames'], full['boxes'], full['trajectories']) == (32, 11543, 185613, 827)
    strided = counts(animaltrack[3])
    assert (strided['frames'], strided['boxes']) == (3856, 62008)
    assert strided['hours'] == pytest.approx(3856 / 10 / 3600)


@needs_animaltrack
def test_animaltrack_table2_bins_at_10fps(animaltrack):
    table = displacement_table(animaltrack[3])
    # counts and medians cross-checked with an independent script (pairs of a box and the same id's next box)
    assert table['events'] == 61097
    assert [b['count'] for b in table['bins']] == [57781, 2149, 935, 232]
    assert [b['range'] for b in table['bins']] == ['[0, 0.25]', '(0.25, 0.5]', '(0.5, 1]', '> 1']
    np.testing.assert_allclose([b['median_iou'] for b in table['bins']], [0.8871116, 0.2955082, 0.0527195, 0.0],
                               atol=1e-6)
    assert table['bins'][3]['zero_overlap_share'] == 1.0 and table['bins'][0]['zero_overlap_share'] == 0.0
    assert sum(b['share'] for b in table['bins']) == pytest.approx(1.0)


@needs_animaltrack
def test_animaltrack_motion_matches_the_paper_comparison(animaltrack):
    summary, values = motion(animaltrack[1])
    # paper Figure 3 compares AnimalTrack (30 FPS): p95 ~ 0.284 / 3.0 = 0.095, IoU < 0.8 in 8.6% (all splits)
    assert summary['motion_p95'] == pytest.approx(0.0957, abs=5e-4)
    assert summary['iou_below_0.8_share'] == pytest.approx(0.0829, abs=5e-4)
    assert len(values['motion']) == summary['pairs'] == 184632


def test_displacement_and_iou_formulas():
    a = np.array([[0.0, 0.0, 3.0, 4.0], [0.0, 0.0, 2.0, 2.0]])
    b = np.array([[3.0, 4.0, 3.0, 4.0], [1.0, 0.0, 2.0, 2.0]])
    # centres 5 apart, both diagonals 5 -> 1.0; second: distance 1, diagonals 2*sqrt(2)
    np.testing.assert_allclose(normalized_displacement(a, b), [1.0, 1 / (2 * np.sqrt(2))], rtol=1e-12)
    np.testing.assert_allclose(pairwise_iou_ltwh(a, b), [0.0, 2 / 6], rtol=1e-12)
    # scale invariance of the normalized displacement
    np.testing.assert_allclose(normalized_displacement(7 * a, 7 * b), normalized_displacement(a, b), rtol=1e-12)


@needs_animaltrack
def test_dataset_stats_tool(tmp_path, capfd):
    out = tmp_path / 'stats.json'
    tool('tools/analysis/dataset_stats.py', '--data-root', ANIMALTRACK, '--stride', '3', '--out', out)
    printed = ''.join(capfd.readouterr())  # stdout and stderr (warnings)
    stats = json.load(open(out))
    assert (stats['videos'], stats['frames'], stats['boxes'], stats['trajectories']) == (32, 3856, 62008, 826)
    assert [b['count'] for b in stats['table2']['bins']] == [57781, 2149, 935, 232]
    assert (tmp_path / 'stats_motion.png').stat().st_size > 10000
    assert 'Table 2' in printed


def _items(dataset):
    return [dataset.get_data_info(i) for i in range(len(dataset))]


@needs_animaltrack
def test_vastmat_dataset_reads_a_motchallenge_folder():
    from vastmat.datasets import VastMATDataset
    videos = VastMATDataset(data_root=ANIMALTRACK, test_mode=True, lazy_init=False)
    assert len(videos) == 32
    assert sum(len(img['instances']) for v in _items(videos) for img in v['images']) == 185613
    strided = VastMATDataset(data_root=ANIMALTRACK, stride=3, load_as='image', test_mode=True)
    assert len(strided) == 3856
    assert sum(len(img['instances']) for img in _items(strided)) == 62008
    first = strided.get_data_info(0)
    assert first['img_path'].endswith('chicken_3/chicken_3/000001.jpg')  # AnimalTrack: imDir = sequence name
    second = strided.get_data_info(1)
    assert second['img_path'].endswith('000004.jpg') and second['frame_id'] == 1
    assert strided.metainfo['classes'] == ('animal', )


def test_vastmat_dataset_protocol_splits_and_fields(demo_root):
    from vastmat.datasets import VastMATDataset
    from vastmat.datasets.sequences import read_split
    train = VastMATDataset(data_root=demo_root, protocol='protocol2', split='train', test_mode=True)
    test = VastMATDataset(data_root=demo_root, protocol='p2', split='test', test_mode=True)
    assert [v['video_name'] for v in _items(train)] == read_split(demo_root, 'protocol2', 'train')
    cats_train = {i['category_id'] for v in _items(train) for img in v['images'] for i in img['instances']}
    cats_test = {i['category_id'] for v in _items(test) for img in v['images'] for i in img['instances']}
    assert cats_test and not (cats_train & cats_test)
    instance = next(i for v in _items(test) for img in v['images'] for i in img['instances'])
    assert set(instance) >= {'bbox', 'bbox_label', 'instance_id', 'ignore_flag', 'category_id', 'group',
                             'visibility'}
    assert instance['bbox_label'] == 0
    every_video = VastMATDataset(data_root=demo_root, test_mode=True)
    rows = [i for v in _items(every_video) for img in v['images'] for i in img['instances']]
    assert {i['ignore_flag'] for i in rows} == {0, 1}  # the demo data annotates tiny boxes as ignored
    with pytest.raises(KeyError, match='unknown protocol'):
        VastMATDataset(data_root=demo_root, protocol='protocol3', split='test', test_mode=True)
    with pytest.raises(FileNotFoundError, match='no such split file'):
        VastMATDataset(data_root=demo_root, protocol='protocol1', split='val', test_mode=True)
