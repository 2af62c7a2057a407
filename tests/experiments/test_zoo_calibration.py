"""The zoo's test thresholds (vastmat/experiments/zoo_calibration.py): the grid, the choice and its record."""
import os.path as osp

import pytest


def test_threshold_grid_shares_one_scale_and_crosses_a_thresholds_own_grid():
    """The calibration grid: the official thresholds share one scale; MOTIP's detection threshold, with a grid of
    its own, takes each of its scales with each shared one (6 x 6 points, named apart); a grid named for a threshold
    the config does not declare fails naming it."""
    from mmengine.config import Config

    from vastmat.experiments.zoo_calibration import (THRESHOLD_SCALES, grid_label, grid_text, scaled_thresholds,
                                                     threshold_grid)
    from vastmat.models.trackers.zoo import config_path
    qdtrack = Config.fromfile(config_path('qdtrack/qdtrack_tiny_zoo_vastmat-demo.py'))
    grid = threshold_grid(qdtrack, THRESHOLD_SCALES)
    assert [grid_label(point) for point in grid] == ['0.5', '0.6', '0.7', '0.8', '0.9', '1']
    assert all(set(point) == set(qdtrack.zoo_official_thresholds) for point in grid)
    motip = Config.fromfile(config_path('motip/motip_tiny_zoo_vastmat-demo.py'))
    grid = threshold_grid(motip, THRESHOLD_SCALES)
    assert len(grid) == 36 and len({grid_label(point) for point in grid}) == 36
    det = sorted({scaled_thresholds(motip, point)['model.tracker.det_thresh'] for point in grid})
    newborn = sorted({scaled_thresholds(motip, point)['model.tracker.newborn_thresh'] for point in grid})
    assert det == [0.2, 0.25, 0.3, 0.35, 0.4, 0.45] and newborn == [0.3, 0.36, 0.42, 0.48, 0.54, 0.6]
    assert grid_label(grid[0]) == 'det_thresh0.667_newborn_thresh0.5'
    assert grid_text(grid[0]) == 'det_thresh x0.667, newborn_thresh x0.5'
    assert grid_text({'model.tracker.det_thresh': 0.8, 'model.tracker.newborn_thresh': 0.8}) == 'x0.8'
    assert [grid_label(point) for point in threshold_grid(motip, (0.5, 1.0), own_grids=False)] == ['0.5', '1']
    # the config's values are a point of its grid
    assert {'model.tracker.det_thresh': motip.model.tracker.det_thresh,
            'model.tracker.newborn_thresh': motip.model.tracker.newborn_thresh} in [
                scaled_thresholds(motip, point) for point in grid]
    motip.zoo_threshold_scales = {'model.tracker.id_thresh': (1.0, )}
    with pytest.raises(KeyError, match='model.tracker.id_thresh not in zoo_official_thresholds'):
        threshold_grid(motip, THRESHOLD_SCALES)


def test_calibration_keeps_the_best_grid_point_and_records_why(tmp_path, monkeypatch):
    """Every grid point tested on the dev videos at the last checkpoint, each in a folder of its own; the best HOTA
    kept (a tie: the larger scales), recorded with every point's HOTA and logged; nothing where the run or the config
    calibrates nothing."""
    from mmengine.config import Config

    from vastmat.experiments import zoo_calibration
    from vastmat.experiments.zoo_training import Training
    from vastmat.models.trackers.zoo import config_path
    qdtrack = Config.fromfile(config_path('qdtrack/qdtrack_tiny_zoo_vastmat-demo.py'))
    hota = {0.45: 0.3, 0.54: 0.5, 0.63: 0.2, 0.72: 0.5}  # by init_score_thr: x0.6 and x0.8 tie
    runs = []

    def fake_test(cfg, checkpoint, videos, run_dir, preset, split='test'):
        runs.append((checkpoint, videos, osp.relpath(run_dir, tmp_path), split))
        return {'COMBINED': {'HOTA': hota[cfg.model.tracker.init_score_thr]}}

    monkeypatch.setattr(zoo_calibration, 'test_tracking_model', fake_test)
    monkeypatch.setattr('vastmat.datasets.sequences.read_split', lambda root, protocol, split: ['Dev-1'])
    training = Training(str(tmp_path), [(1, 'first.pth'), (2, 'last.pth')], 1.0, 2, reused=True)
    logs = []
    record = zoo_calibration.calibrate_thresholds(qdtrack, training, 'QDTrack', 'root', 'protocol1', 'vastmat', 'dev',
                                                  (0.5, 0.6, 0.7, 0.8), log=logs.append)
    assert [run[2] for run in runs] == [f'tests/QDTrack/vastmat/calibration/dev_x{s}/iter_2' for s in
                                        ('0.5', '0.6', '0.7', '0.8')]
    assert all(run[0] == 'last.pth' and run[1] == ['Dev-1'] and run[3] == 'dev' for run in runs)
    assert record == dict(label='0.8', scales={'model.tracker.init_score_thr': 0.8, 'model.tracker.obj_score_thr': 0.8},
                          thresholds={'model.tracker.init_score_thr': 0.72, 'model.tracker.obj_score_thr': 0.4},
                          split='dev', hota={'0.5': 0.3, '0.6': 0.5, '0.7': 0.2, '0.8': 0.5})
    assert logs == ['  QDTrack: thresholds x0.8 of the official ones (HOTA on the dev videos: x0.5 30.0, x0.6 50.0, '
                    'x0.7 20.0, x0.8 50.0)']
    assert zoo_calibration.calibrate_thresholds(qdtrack, training, 'QDTrack', 'root', 'protocol1', 'vastmat', None,
                                                (0.5, 1.0)) is None
    assert zoo_calibration.calibration_grid(Config(dict(model=dict())), 'dev', (0.5, 1.0)) == []
