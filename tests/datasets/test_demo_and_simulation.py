"""The rendered demo dataset and the detection simulator."""
import filecmp
import os.path as osp

import cv2
import numpy as np

from helpers.common import ANIMALTRACK, needs_animaltrack, tool
from vastmat.datasets.detection_simulator import SimulationConfig, simulate_detections
from vastmat.datasets.formats import GroundTruth, read_detections, read_gt
from vastmat.datasets.sequences import list_sequences, load_sequence, read_split
from vastmat.datasets.splits import Split, check_split


def test_demo_dataset_content(demo_root):
    names = list_sequences(demo_root)
    assert len(names) == 11
    all_categories, entries, exits, occluded, ignored = set(), 0, 0, 0, 0
    for name in names:
        seq = load_sequence(demo_root, name)
        assert seq.length == 12 and seq.frame_rate == 10
        image = cv2.imread(seq.image_path(1))
        assert image.shape == (144, 192, 3) and image.std() > 10
        gt = seq.gt
        all_categories |= set(gt.categories.tolist())
        for track_id in np.unique(gt.ids):
            frames = gt.frames[gt.ids == track_id]
            entries += frames.min() > 1
            exits += frames.max() < seq.length
        occluded += int((gt.visibility < 0.9).sum())
        ignored += int((gt.valid == 0).sum())
        # several animals at a time, boxes inside the image
        assert np.bincount(gt.frames).max() >= 2
        assert (gt.boxes[:, 0] >= 0).all() and (gt.boxes[:, 0] + gt.boxes[:, 2] <= 192).all()
    assert len(all_categories) == 9 and entries > 0 and exits > 0 and occluded > 0
    categories = {}
    for name in names:
        gt = load_sequence(demo_root, name).gt
        categories[name] = set(np.unique(gt.categories[gt.valid == 1]).tolist())
    for protocol in ('protocol1', 'protocol2'):
        split = Split(read_split(demo_root, protocol, 'train'), read_split(demo_root, protocol, 'test'),
                      read_split(demo_root, protocol, 'dev'))
        check_split(protocol, split, categories)


def test_demo_dataset_is_deterministic(demo_root, tmp_path):
    from vastmat.datasets.demo_data import DEMO_VIDEOS, make_demo_dataset
    make_demo_dataset(str(tmp_path), num_frames=12, seed=0)
    for name, _ in DEMO_VIDEOS:
        assert filecmp.cmp(osp.join(demo_root, 'videos', name, 'gt', 'gt.txt'),
                           str(tmp_path / 'videos' / name / 'gt' / 'gt.txt'), shallow=False)


def test_simulated_detections_properties(demo_root):
    gt = load_sequence(demo_root, 'Bee-1').gt
    a = simulate_detections(gt, (192, 144), 12, np.random.default_rng(5))
    b = simulate_detections(gt, (192, 144), 12, np.random.default_rng(5))
    np.testing.assert_array_equal(a.boxes, b.boxes)
    assert (a.scores > 0).all() and (a.scores < 1).all() and (a.boxes[:, 2:] > 0).all()
    assert (np.diff(a.frames) >= 0).all()
    # no noise, no misses, no extras: detections are the valid boxes exactly
    exact = simulate_detections(gt, (192, 144), 12, np.random.default_rng(5), SimulationConfig(
        jitter=0.0, miss_rate=0.0, small_miss_rate=0.0, duplicate_rate=0.0, near_fp_per_frame=0.0,
        far_fp_per_frame=0.0))
    assert len(exact) == int((gt.valid == 1).sum())


@needs_animaltrack
def test_simulate_tool_misses_small_boxes_more(tmp_path):
    out = tmp_path / 'sim'
    tool('tools/data/simulate_detections.py', '--data-root', ANIMALTRACK, '--out', out, '--stride', 3,
         '--seed', 1)
    for name in ('chicken_3', 'zebra_5'):
        seq = load_sequence(str(out), name)
        assert seq.length == len(range(1, load_sequence(ANIMALTRACK, name).length + 1, 3))
        assert seq.image_path(2).endswith(f'{name}/000004.jpg')
        gt = read_gt(str(out / name / 'gt' / 'gt.txt'), seq_length=seq.length)
        assert (gt.frames <= seq.length).all()
        dets = read_detections(str(out / name / 'det' / 'det.txt'), seq_length=seq.length)
        assert 0.7 * len(gt) < len(dets) < 1.5 * len(gt)
    # the same seed gives the same files
    tool('tools/data/simulate_detections.py', '--data-root', ANIMALTRACK, '--out', tmp_path / 'again',
         '--stride', 3, '--seed', 1)
    assert filecmp.cmp(out / 'zebra_5' / 'det' / 'det.txt', tmp_path / 'again' / 'zebra_5' / 'det' / 'det.txt',
                       shallow=False)


def test_small_boxes_are_missed_more_often():
    # one box per frame: frames 1-2000 hold a 10x10 box, frames 2001-4000 a 200x200 box
    rng = np.random.default_rng(0)
    boxes = np.array([[0, 0, 10, 10]] * 2000 + [[0, 0, 200, 200]] * 2000, dtype=float)
    fake = GroundTruth(np.arange(1, 4001), np.ones(4000, np.int64), boxes, np.ones(4000, np.int64),
                       -np.ones(4000, np.int64), -np.ones(4000), np.arange(1, 4001))
    dets = simulate_detections(fake, (1000, 1000), 4000, rng, SimulationConfig(
        near_fp_per_frame=0, far_fp_per_frame=0, duplicate_rate=0))
    small_found = np.isin(np.arange(1, 2001), dets.frames).mean()
    large_found = np.isin(np.arange(2001, 4001), dets.frames).mean()
    assert small_found < large_found - 0.15
