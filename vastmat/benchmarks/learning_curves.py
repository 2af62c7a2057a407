"""Short learning curves of the tiny models (``tools/benchmark/learning_curves.py``): each joint or end-to-end model,
trained a few dozen iterations from its tiny config on one demo training video without random augmentations (the
overfit benchmark's recipe, :mod:`.overfit`), must track that video better after training than untrained: HOTA up by
:data:`BAR` or more. The overfit benchmark is the long version (HOTA 80 after thousands of iterations).

What a curve catches that a falling loss does not: training that does not reach the tracker (a target the decoding
reads otherwise, a checkpoint that loads into other modules, a threshold no trained score passes).
"""
from __future__ import annotations

import os.path as osp

from mmengine.config import Config

from vastmat.utils.package_configs import config_dir

from .overfit import PROTOCOL, make_overfit_root, overfit_recipe

VIDEO = 'Zebra-1'  # a Protocol 1 training video of the demo data: 3 zebras and 2 horses
# the demo data as the test suite renders it (tests/conftest.py demo_root), where the iterations below were measured:
# 12 frames a video. On the 40 frames of make demo's data/demo, MOTIP's 60 iterations gave 4.3 -> 7.2
DEMO_FRAMES, DEMO_SEED = 12, 0
BAR = 0.03  # HOTA gained by training
# config: iterations, about the fewest that raise the HOTA clearly on 2 cores (the tiny configs from scratch: no YOLOX
# backbone, low test thresholds). Measured, HOTA untrained and trained: QDTrack 0.0, 15.3 after 15 iterations, 11.1
# after 20 and after 30; FairMOT 0.0, 2.6 after 20, 5.4 after 25, 27.8 after 40 (35.0 after 40 since its DCNs train
# through vastmat's CPU path, the same values to float rounding); MOTIP 7.6 untrained (its queries' boxes, at low
# thresholds), 7.0 after 20, 9.5 after 40 and 14.8 after 60. A curve from the first kept checkpoint to the last took
# 90 QDTrack iterations to rise (10.0 / 13.0 / 41.3)
CURVES = {
    'fairmot/fairmot_tiny_vastmat-demo.py': 40,
    'qdtrack/qdtrack_tiny_vastmat-demo.py': 20,
    'transtrack/transtrack_tiny_vastmat-demo.py': 20,
    'motip/motip_tiny_vastmat-demo.py': 60,
}


def _point(cfg: Config, root: str) -> None:
    """Every dataloader of ``cfg`` at ``root``'s Protocol 1 (the validation loader too: mmengine builds it at the start
    of training even when it never runs)."""
    from vastmat.engine.config_options import point_datasets
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        point_datasets(cfg.get(loader), root, PROTOCOL)


def hota_curve(config: str, iters: int, root: str, work_dir: str) -> list[float]:
    """HOTA of ``config`` (under ``configs/``) on the overfit root ``root``'s video, untrained and after ``iters``
    iterations of the overfit recipe (trained under ``work_dir``)."""
    from vastmat.engine.runner_builder import build_quiet_runner
    from vastmat.experiments.zoo_training import set_schedule
    cfg = Config.fromfile(osp.join(config_dir(), config))
    _point(cfg, root)
    cfg = overfit_recipe(cfg)
    set_schedule(cfg, iters, 1)
    cfg.work_dir = work_dir
    build_quiet_runner(cfg).train()
    curve = []
    for iteration in (0, iters):
        test_cfg = Config.fromfile(osp.join(config_dir(), config))
        _point(test_cfg, root)
        test_cfg.load_from = osp.join(work_dir, f'iter_{iteration}.pth') if iteration else None
        test_cfg.work_dir = osp.join(work_dir, f'test_{iteration}')
        curve.append(build_quiet_runner(test_cfg).test()['vastmat/HOTA'])
    return curve


def curve_data(work_dir: str) -> str:
    """The demo data the curves were measured on (:data:`DEMO_FRAMES` frames a video, seed :data:`DEMO_SEED`),
    rendered once under ``work_dir``; returns its root."""
    from vastmat.datasets.demo_data import make_demo_dataset
    root = osp.join(work_dir, f'demo_{DEMO_FRAMES}frames')
    if not osp.isfile(osp.join(root, 'splits', PROTOCOL, 'train.txt')):
        make_demo_dataset(root, num_frames=DEMO_FRAMES, seed=DEMO_SEED, extra_test_videos=())
    return root


def learning_curve_rows(work_dir: str, data_root: str | None = None, configs: list[str] | None = None,
                        iters: int | None = None) -> list[dict]:
    """One row per config (default all of :data:`CURVES`): config, iterations, HOTA untrained and trained, the
    gain, and whether it reached :data:`BAR`. ``data_root``: a demo rendering holding :data:`VIDEO` (default
    :func:`curve_data`'s); ``iters`` replaces every config's iterations."""
    unknown = sorted(set(configs or ()) - set(CURVES))
    if unknown:
        raise ValueError(f'no learning curve for {", ".join(unknown)} (known: {", ".join(CURVES)})')
    root = make_overfit_root(data_root or curve_data(work_dir), [VIDEO], osp.join(work_dir, 'overfit_root'))
    rows = []
    for config in configs or list(CURVES):
        length = iters or CURVES[config]
        untrained, trained = hota_curve(config, length, root, osp.join(work_dir, osp.splitext(config)[0]))
        rows.append(dict(config=config, iterations=length, untrained=untrained, trained=trained,
                         gain=trained - untrained, bar=BAR, passed=trained > untrained + BAR))
    return rows
