"""Next-frame box prediction (vastmat.experiments.motion_prediction, tools/analysis/motion_prediction.py): the box
helpers it reads from structures, the held-out choice, the Kalman baseline's exact first steps, and a whole run on
two real AnimalTrack videos with a 2-iteration D2MP."""
import os.path as osp

import numpy as np
import pytest

from helpers.common import SHARED_DATA, tool

ANIMALTRACK = osp.join(SHARED_DATA, 'AnimalTrack', 'train')


def test_box_helpers():
    from vastmat.structures import cxcywh_to_xyxy, paired_iou, xyxy_to_cxcywh
    xyxy = np.array([[0., 0., 10., 20.], [5., 5., 7., 9.]])
    np.testing.assert_array_equal(xyxy_to_cxcywh(xyxy), [[5, 10, 10, 20], [6, 7, 2, 4]])
    np.testing.assert_array_equal(cxcywh_to_xyxy(xyxy_to_cxcywh(xyxy)), xyxy)
    other = np.array([[0., 10., 10., 30.], [100., 100., 110., 110.]])
    # half of the first box overlaps a box of the same size: 100 / (200 + 200 - 100); the second pair is disjoint
    np.testing.assert_allclose(paired_iou(xyxy, other), [1 / 3, 0.0])
    np.testing.assert_array_equal(paired_iou(xyxy, xyxy), [1.0, 1.0])


def test_default_held_out_takes_one_video_per_species_round_robin():
    from vastmat.experiments.motion_prediction import default_held_out
    videos = ['deer_2', 'chicken_1', 'deer_1', 'chicken_2', 'zebra_1']
    assert default_held_out(videos, 3) == ['chicken_1', 'deer_1', 'zebra_1']
    assert default_held_out(videos, 4) == ['chicken_1', 'deer_1', 'zebra_1', 'chicken_2']
    assert len(default_held_out(videos, 10)) == 4  # one video always trains


def test_kalman_baseline_first_prediction_is_the_first_box_then_follows_constant_velocity():
    """Row 0 has no prediction; row 1's is the initial state's box (zero velocity); on an exact constant-velocity
    track the prediction converges to the true next box."""
    from vastmat.experiments.motion_prediction import kalman_predictions
    steps = np.arange(40, dtype=float)
    track = np.column_stack([100 + 3 * steps, 50 + 1 * steps, np.full(40, 20.), np.full(40, 40.)])
    frames = np.arange(1, 41)
    (pred,) = kalman_predictions([track], [frames])
    assert np.isnan(pred[0]).all()
    np.testing.assert_allclose(pred[1], track[0])
    np.testing.assert_allclose(pred[-1], track[-1], atol=0.05)
    # a missing frame is one more prediction step: the gap's prediction moves twice as far
    gapped = np.delete(track, 30, axis=0)
    (pred_gap,) = kalman_predictions([gapped], [np.delete(frames, 30)])
    np.testing.assert_allclose(pred_gap[30][:2], gapped[30][:2], atol=0.2)


@pytest.mark.skipif(not osp.isdir(ANIMALTRACK), reason=f'{ANIMALTRACK} absent')
def test_whole_run_trains_and_scores_every_model(tmp_path):
    out = tool('tools/analysis/motion_prediction.py', '--data-root', ANIMALTRACK, '--held-out', 'deer_4',
               '--stride', '3', '--train-iters', '2', '--batch-size', '64', '--threads', '1',
               '--work-dir', tmp_path)
    assert out['held_out'] == ['deer_4'] and 'deer_4' not in out['train_videos']
    assert out['training']['iterations'] == 2
    models = out['models']
    assert set(models) == {'D2MP', 'Kalman (CV)', 'last box'}
    windows = {row['windows'] for row in models.values()}
    assert len(windows) == 1 and windows.pop() > 100
    for row in models.values():
        assert 0.0 <= row['mean_iou'] <= 1.0 and 0.0 <= row['share_iou_gt_0_75'] <= row['share_iou_gt_0_5'] <= 1.0
    # the baselines need no training: deer move little between frames at 10 FPS (measured 79.6 and 88.1)
    assert models['Kalman (CV)']['mean_iou'] > 0.7 and models['last box']['mean_iou'] > 0.8
    assert osp.isfile(tmp_path / 'motion_prediction.json') and osp.isfile(tmp_path / 'd2mp.pth')
