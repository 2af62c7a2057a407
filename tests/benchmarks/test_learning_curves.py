"""Short learning curves of the tiny models: each joint or end-to-end model, trained a few dozen iterations on one
rendered demo video without random augmentations (the overfit benchmark's recipe, at the tiny configs' size), tracks
that video better after training than untrained. The long versions are
``tools/benchmark/overfit.py`` (HOTA 80 on two videos) and ``make demo``."""
import os.path as osp

import pytest
from mmengine.config import Config

from helpers.common import REPO, tool
from vastmat.benchmarks.overfit import make_overfit_root, overfit_recipe

VIDEO = 'Zebra-1'
# config: iterations, about the fewest that raise the HOTA clearly on 2 cores (the tiny configs from scratch: no YOLOX
# backbone, low test thresholds). Measured, HOTA untrained and trained: QDTrack 0.0, 15.3 after 15 iterations, 11.1
# after 20 and after 30; FairMOT 0.0, 2.6 after 20, 5.4 after 25, 27.8 after 40 (35.0 after 40 since its DCNs train
# through vastmat's CPU path, the same values to float rounding); MOTIP 7.6 untrained (its queries' boxes, at low
# thresholds), 7.0 after 20, 9.5 after 40 and 14.8 after 60. A
# curve from the first kept checkpoint to the last took 90 QDTrack iterations to rise (10.0 / 13.0 / 41.3): three
# times the training, 86 s of the suite's time against 28 s.
CURVES = {
    'fairmot/fairmot_tiny_vastmat-demo.py': 40,
    'qdtrack/qdtrack_tiny_vastmat-demo.py': 20,
    'transtrack/transtrack_tiny_vastmat-demo.py': 20,
    'motip/motip_tiny_vastmat-demo.py': 60,
}


@pytest.fixture(scope='module')
def overfit_root(demo_root, tmp_path_factory):
    return make_overfit_root(demo_root, [VIDEO], str(tmp_path_factory.mktemp('overfit_root')))


def _point(cfg, root):
    # the validation loader too: mmengine builds it at the start of training even when it never runs
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        if not cfg.get(loader):
            continue
        dataset = cfg[loader].dataset
        dataset = dataset.get('dataset', dataset) if dataset.get('type') != 'VastMATDataset' else dataset
        dataset.data_root = root
        dataset.protocol = 'protocol1'


def hota_curve(config: str, iters: int, root: str, work_dir: str) -> list[float]:
    """HOTA on the training video untrained and at iteration ``iters`` (the points between are the overfit
    benchmark's)."""
    from vastmat.engine.runner_builder import build_quiet_runner
    from vastmat.experiments.zoo_training import set_schedule
    cfg = Config.fromfile(osp.join(REPO, 'configs', config))
    _point(cfg, root)
    cfg = overfit_recipe(cfg)
    set_schedule(cfg, iters, 1)
    cfg.work_dir = work_dir
    cfg.log_level = 'WARNING'
    build_quiet_runner(cfg).train()
    curve = []
    for iteration in (0, iters):
        checkpoint = ['--checkpoint', osp.join(work_dir, f'iter_{iteration}.pth')] if iteration else []
        metrics = tool('tools/test.py', osp.join(REPO, 'configs', config), *checkpoint,
                       '--work-dir', osp.join(work_dir, f'test_{iteration}'), '--cfg-options',
                       f'test_dataloader.dataset.data_root={root}')
        curve.append(metrics['vastmat/HOTA'])
    return curve


@pytest.mark.slow
@pytest.mark.parametrize('config', list(CURVES))
def test_tiny_model_tracks_its_training_video_better_as_it_trains(config, overfit_root, tmp_path):
    untrained, trained = curve = hota_curve(config, CURVES[config], overfit_root, str(tmp_path))
    print(config, [round(100 * h, 1) for h in curve])
    assert trained > untrained + 0.03, f'{config}: HOTA {curve} on its training video'
