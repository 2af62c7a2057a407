"""Convergence of the zoo's tiny models: the training loss and a quality measure against iterations.

Each learned part of the zoo (:mod:`.zoo`) is trained as the zoo trains it (same config, same kept checkpoints, so
a finished ``make demo`` is reused), and at every kept checkpoint gets:

* the training loss: the mean of the logged losses since the previous checkpoint (the training's log; NaN where
  the logger's interval left none in that span);
* its quality on the test videos: detection AP50 for the detector; DetA (detection) and AssA (identity) of the
  tracking model for the joint and end-to-end models; ReID mAP and rank-1 of identity crops for the ReID model;
  DiffMOT's DetA and AssA with the D2MP for the motion model.
"""
from __future__ import annotations

import glob
import os.path as osp
import re
from typing import Any

import numpy as np

from vastmat.experiments.zoo import run_cached_member, run_model_member, train
from vastmat.experiments.zoo_context import ZooContext
from vastmat.experiments.zoo_scoring import detector_boxes
from vastmat.experiments.zoo_testing import detect
from vastmat.experiments.zoo_training import Training
from vastmat.experiments.zoo_training_order import training_config

MEASURES = ('AP50', 'mAP', 'R1', 'DetA', 'AssA')  # quality columns, as each model has them


def logged_losses(training: Training) -> list[tuple[int, float]]:
    """``(iteration, loss)`` of every logged training step (the ``Iter(train) [it/max] ... loss: x`` lines of the
    training's text log)."""
    pattern = re.compile(r'Iter\(train\)\s*\[\s*(\d+)/\d+\].*?\sloss: ([-+0-9.eE]+)')
    out = []
    for path in sorted(glob.glob(osp.join(training.work_dir, '*', '*.log'))):
        for line in open(path, encoding='utf-8'):
            match = pattern.search(line)
            if match:
                out.append((int(match.group(1)), float(match.group(2))))
    return sorted(out)


def window_loss(losses: list[tuple[int, float]], start: int, end: int) -> float:
    """Mean logged loss of the iterations in ``(start, end]`` (NaN when none was logged)."""
    values = [loss for it, loss in losses if start < it <= end]
    return float(np.mean(values)) if values else float('nan')


def reid_metrics(ctx: ZooContext, config: str, checkpoint: str, out_dir: str) -> dict:
    """The ReID config's test evaluator (mAP, CMC rank-1) on the test videos' identity crops at ``checkpoint``."""
    from vastmat.engine.runner_builder import build_quiet_runner
    cfg = training_config(ctx, config, 'ReID test')
    cfg.work_dir = out_dir
    cfg.load_from = checkpoint
    cfg.test_dataloader.dataset.split = 'test'
    return build_quiet_runner(cfg).test()


def convergence_rows(ctx: ZooContext, members: list, detector_config: str | None) -> list[dict]:
    """One row per kept checkpoint of every learned part: model, part, iteration, minutes, loss and measures."""
    rows: list[dict[str, Any]] = []

    def add(model: str, training: Training, measures_at: Any) -> None:
        losses = logged_losses(training)
        previous = 0
        for iteration, checkpoint in training.checkpoints:
            rows.append(dict(model=model, iteration=iteration, minutes=training.minutes(iteration),
                             loss=window_loss(losses, previous, iteration), **measures_at(iteration, checkpoint)))
            previous = iteration

    if detector_config is not None:
        training = train(ctx, detector_config, 'detector')
        add(f'detector ({osp.basename(detector_config)})', training, lambda it, ckpt: dict(AP50=detect(
            detector_config, ckpt, ctx.data_root, ctx.protocol, osp.join(training.work_dir, 'convergence',
                                                                        f'iter_{it}')).get('det/AP50')))
        # the trained detector's boxes, for the motion model (scored through its tracker)
        _, det_root, extra = detector_boxes(ctx, detector_config, training.checkpoint,
                                            osp.join(training.work_dir, 'convergence'))
    by_name = {m.name: m for m in members}
    for member in members:
        if member.checkpoint_of:
            continue  # tests another member's checkpoint: nothing of its own converges
        if member.demo_parts:
            (kind, config), = member.demo_parts.items()
            training = train(ctx, config, f'{member.name} {kind}')
            if kind == 'features':
                add(f'{member.name} ReID ({osp.basename(config)})', training, lambda it, ckpt, c=config, t=training: {
                    key.split('/')[-1]: value for key, value in reid_metrics(
                        ctx, c, ckpt, osp.join(t.work_dir, 'convergence', f'iter_{it}')).items()
                    if key.split('/')[-1] in ('mAP', 'R1')})
                continue
            if detector_config is None:
                continue  # the motion model is scored through its tracker, on the detector's boxes
            curve = {p['iteration']: p for p in run_cached_member(ctx, member, ['original'], det_root, extra)['curve']}
            add(f'{member.name} D2MP ({osp.basename(config)})', training,
                lambda it, ckpt, c=curve: dict(DetA=c[it]['DetA'], AssA=c[it]['AssA']))
        elif member.demo_config:
            curve = {p['iteration']: p for p in run_model_member(ctx, member, ['original'], by_name)['curve']}
            add(f'{member.name} ({osp.basename(member.demo_config)})', train(ctx, member.demo_config, member.name),
                lambda it, ckpt, c=curve: dict(DetA=c[it]['DetA'], AssA=c[it]['AssA']))
    return rows


def plot_convergence(rows: list[dict], path: str) -> None:
    """Loss (left, log scale) and the quality measures (right) of every model against its iterations."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from vastmat.utils.io import save_figure_atomic
    models = list(dict.fromkeys(r['model'] for r in rows))
    fig, (ax_loss, ax_quality) = plt.subplots(1, 2, figsize=(11, 4))
    for model in models:
        points = [r for r in rows if r['model'] == model]
        ax_loss.plot([p['iteration'] for p in points], [p['loss'] for p in points], marker='o', label=model)
        for measure in MEASURES:
            if measure in points[0] and points[0][measure] is not None:
                ax_quality.plot([p['iteration'] for p in points], [100 * p[measure] for p in points], marker='o',
                                label=f'{model.split(" (")[0]} {measure}')
    ax_loss.set(xlabel='iteration', ylabel='training loss', title='loss', yscale='log')
    ax_quality.set(xlabel='iteration', ylabel='percent', title='quality on the test videos')
    for ax in (ax_loss, ax_quality):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    save_figure_atomic(fig, path)
