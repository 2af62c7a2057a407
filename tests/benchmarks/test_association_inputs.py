"""The models' association inputs measured at the ground-truth boxes (vastmat/benchmarks/association_inputs.py):
exact counts on small fixed inputs, and every measure on the tiny models over the rendered demo videos."""
import os.path as osp

import numpy as np
import pytest

from helpers.common import REPO
from vastmat.datasets.formats import GroundTruth, TrackResults, read_gt
from vastmat.benchmarks.association_inputs import (embedding_retrieval, id_decoder_accuracy, identity_continuation,
                                                    measure_for, retrieval_rank1, track_box_iou)

TEST_VIDEOS = ['Bee-1', 'Horse-1', 'Penguin-1']  # the demo's Protocol 1 test videos


def _gt(frames, ids, boxes):
    n = len(frames)
    return GroundTruth(np.asarray(frames), np.asarray(ids), np.asarray(boxes, float), np.ones(n, np.int64),
                       np.ones(n, np.int64), np.ones(n), np.arange(1, n + 1))


def test_identity_continuation_counts_kept_identities_of_animals_found_in_consecutive_frames():
    # animal 7 in frames 1-3, animal 8 in frames 1-2 and 4; the tracker swaps 8's identity at frame 2 and finds
    # 7 at frame 3 only at IoU 1/3 (not found)
    gt = _gt([1, 1, 2, 2, 3, 4], [7, 8, 7, 8, 7, 8],
             [[0, 0, 10, 10], [50, 0, 10, 10], [0, 0, 10, 10], [50, 0, 10, 10], [0, 0, 10, 10], [50, 0, 10, 10]])
    results = TrackResults(np.array([1, 1, 2, 2, 3, 4]), np.array([100, 101, 100, 102, 100, 102]),
                           np.array([[0, 0, 10, 10], [50, 0, 10, 10], [1, 0, 10, 10], [50, 0, 10, 10],
                                     [5, 0, 10, 10], [50, 0, 10, 10]], float), np.ones(6), np.arange(1, 7))
    # continuing: (2, 7) kept, (2, 8) swapped; (3, 7) not found at frame 3; (4, 8) has no frame 3
    assert identity_continuation(results, gt) == (1, 2)


def test_retrieval_rank1_against_the_previous_frame_and_the_video():
    frame_ids = np.array([0, 0, 1, 1, 2])
    ids = np.array([1, 2, 1, 2, 3])
    # frame 1's animal 1 lies nearest animal 2 of frame 0; everything else nearest itself; animal 3 is seen once
    embeddings = np.array([[1, 0, 0], [0, 1, 0], [0.6, 0.8, 0], [0, 1, 0], [0, 0, 1]], float)
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    counts = retrieval_rank1(frame_ids, ids, embeddings)
    assert counts['previous'] == (1, 2)  # frame 1's two animals (frame 0 has no previous frame)
    # against the video: frame 0's animal 1 -> frame 1's 0.6/0.8 box (id 1, right), animal 2 -> id 2; frame 1's
    # animal 1 -> frame 0's animal 2 (wrong), animal 2 -> id 2; animal 3 has no other sighting
    assert counts['video'] == (3, 4)


def _model(config):
    from vastmat.apis import init_model
    model = init_model(osp.join(REPO, 'configs', config))
    model.init_weights()
    return model.eval()


def _truth(demo_root):
    """The evaluated ground-truth rows (valid 1) of each test video: ``(frames, ids)``."""
    out = {}
    for video in TEST_VIDEOS:
        gt = read_gt(osp.join(demo_root, 'videos', video, 'gt', 'gt.txt'))
        out[video] = gt.frames[gt.valid == 1], gt.ids[gt.valid == 1]
    assert sum(len(f) for f, _ in out.values()) < sum(  # the demo has ignored rows: they must not count
        len(read_gt(osp.join(demo_root, 'videos', v, 'gt', 'gt.txt'))) for v in TEST_VIDEOS)
    return out


def _seen(truth, where):
    """How many boxes have their animal in a frame chosen by ``where(frame, other_frame)``."""
    frames, ids = truth
    pairs = set(zip(frames.tolist(), ids.tolist()))
    return sum(any((f2, i) in pairs for f2 in set(frames.tolist()) if where(f, f2))
               for f, i in zip(frames.tolist(), ids.tolist()))


@pytest.mark.parametrize('config', ['fairmot/fairmot_tiny_vastmat-demo.py', 'qdtrack/qdtrack_tiny_vastmat-demo.py'])
def test_embedding_retrieval_queries_every_ground_truth_box_seen_before(demo_root, config):
    model = _model(config)
    assert measure_for(model) is embedding_retrieval
    out = embedding_retrieval(model, demo_root, 'protocol1', TEST_VIDEOS)
    truth = _truth(demo_root).values()
    assert out['queries_previous'] == sum(_seen(gt, lambda f, f2: f2 == f - 1) for gt in truth)
    assert out['queries_video'] == sum(_seen(gt, lambda f, f2: f2 != f) for gt in truth)
    assert 0 < out['queries_previous'] <= out['queries_video']
    for key in ('rank1_previous', 'rank1_video'):
        assert 0.0 <= out[key] <= 1.0


def test_motip_id_decoder_accuracy_counts_the_unknown_tokens_of_ground_truth_clips(demo_root):
    model = _model('motip/motip_tiny_vastmat-demo.py')
    assert measure_for(model) is id_decoder_accuracy
    out = id_decoder_accuracy(model, demo_root, 'protocol1', TEST_VIDEOS)
    length = model.tracker.id_decoder.rel_pe_length
    expected = 0
    for frames, _ in _truth(demo_root).values():
        for start in range(1, int(frames.max()) - length + 2, length):  # non-overlapping clips; frames 1.. of each
            expected += int(((frames > start) & (frames < start + length)).sum())
    assert out['tokens'] == expected > 0
    assert 0.0 <= out['known_accuracy'] <= 1.0 and 0.0 <= out['newborn_accuracy'] <= 1.0


def test_transtrack_track_boxes_follow_the_animals_found_in_the_previous_frame(demo_root):
    model = _model('transtrack/transtrack_tiny_vastmat-demo.py')
    model.tracker.track_thresh = 0.0  # every query may find an animal (an untrained model's scores are low)
    assert measure_for(model) is track_box_iou
    out = track_box_iou(model, demo_root, 'protocol1', TEST_VIDEOS, min_iou=0.0)
    continuing = sum(_seen(gt, lambda f, f2: f2 == f - 1) for gt in _truth(demo_root).values())
    assert out['followed'] == continuing  # at IoU >= 0, the one-to-one assignment finds every animal
    for key in ('track_iou', 'track_hit', 'still_iou', 'still_hit'):
        assert 0.0 <= out[key] <= 1.0
