"""Choosing a tuned point that holds on new videos, and what the tuner writes: the selection rule, the intervals,
the winning matcher per tracker, the preset config, the tables and plots.

The rule (printed with the results): the preset is the complete trial of best COMBINED HOTA on all tuning videos.
How well that choice carries to new videos is estimated on held-aside folds: for each fold, the complete trial of
best COMBINED HOTA on the other folds is chosen and scored on that fold alone; the held-aside estimate is the
COMBINED HOTA of those choices over all videos, each video scored by a choice that never saw it. Both are set
against the config's own settings (the official ones) with a paired bootstrap of the videos
(:func:`vastmat.evaluation.analysis.bootstrap_hota`).
"""
from __future__ import annotations

import json
import os
import os.path as osp
import warnings
from typing import Any


from .space import MATCHER, matcher_text, point_options, tracker_class

RULE = ('preset: the complete trial of best COMBINED HOTA on all tuning videos; held-aside estimate: per fold, the '
        'best trial on the other folds scored on that fold')


def complete_trials(study: Any) -> list[Any]:
    from optuna.trial import TrialState
    return sorted(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, )), key=lambda t: t.number)


def trial_videos(work_dir: str, trial: Any) -> dict[str, dict]:
    """A complete trial's per-video metrics, read from its fold runs (the run cache)."""
    out: dict[str, dict] = {}
    for run_id in trial.user_attrs['run_ids']:
        with open(osp.join(work_dir, 'runs', run_id, 'metrics.json'), encoding='utf-8') as f:
            metrics = json.load(f)
        out.update({k: v for k, v in metrics.items() if k != 'COMBINED'})
    return out


def held_aside(per_trial: dict[int, dict], folds: list[list[str]]) -> tuple[list[dict], dict[str, dict]]:
    """Per fold: the trial best on the other folds and its HOTA on the fold; and the per-video results of those
    choices (each video from the choice made without its fold)."""
    from vastmat.evaluation.mot_eval import combined_hota
    rows, composite = [], {}
    for k, fold in enumerate(folds):
        others = [v for j, f in enumerate(folds) if j != k for v in f]
        chosen = max(per_trial, key=lambda n: (combined_hota(per_trial[n], others), -n))
        rows.append(dict(fold=k, videos=len(fold), trial=chosen,
                         HOTA_other_folds=combined_hota(per_trial[chosen], others),
                         HOTA_held_aside=combined_hota(per_trial[chosen], fold)))
        composite.update({v: per_trial[chosen][v] for v in fold})
    return rows, composite


def matcher_winners(trials: list[Any], per_trial: dict[int, dict], videos: list[str], samples: int, level: float,
                    seed: int) -> list[dict]:
    """Per matcher of the trials: its best complete trial (each matcher at its own best settings), with the
    difference to the best IoU trial and its interval."""
    from vastmat.evaluation.analysis import paired_difference
    from vastmat.evaluation.mot_eval import combined_hota
    best: dict[str, Any] = {}
    for trial in trials:
        name = trial.params.get(MATCHER, 'own')
        if name not in best or trial.value > best[name].value:
            best[name] = trial
    base = best.get('iou')
    rows = []
    for name, trial in sorted(best.items(), key=lambda item: -item[1].value):
        row = dict(matcher=name, trial=trial.number, HOTA=combined_hota(per_trial[trial.number], videos),
                   params=trial.params)
        if base is not None and name != 'iou':
            row['vs_iou'] = paired_difference(per_trial[trial.number], per_trial[base.number], videos, samples,
                                              level, seed)
        rows.append(row)
    return rows


def python_literal(value: Any, depth: int | None = None) -> str:
    """``value`` as config source: dicts as ``dict(key=...)`` (one key a line from ``depth`` on), exact floats (the
    preset reproduces the trial)."""
    if isinstance(value, dict):
        if depth is None or not value:
            return 'dict(' + ', '.join(f'{k}={python_literal(v)}' for k, v in value.items()) + ')'
        pad = ' ' * 4 * (depth + 1)
        inner = f',\n{pad}'.join(f'{k}={python_literal(v, depth + 1 if isinstance(v, dict) and "_delete_" not in v else None)}'
                                  for k, v in value.items())
        return f'dict(\n{pad}{inner})'
    if isinstance(value, (list, tuple)):
        inner = ', '.join(python_literal(v) for v in value)
        return f'[{inner}]' if isinstance(value, list) else f'({inner}{"," if len(value) == 1 else ""})'
    return repr(value)


def nest_options(options: dict[str, Any]) -> dict[str, Any]:
    """Dotted options as nested dicts for a config file; a dict value replaces its entry whole (``_delete_``)."""
    tree: dict[str, Any] = {}
    for key, value in options.items():
        *parents, last = key.split('.')
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = dict(_delete_=True, **value) if isinstance(value, dict) else value
    return tree


def preset_text(settings: Any, trial: Any, summary: dict, path: str) -> str:
    """A config that ``_base_``-inherits the tuned one and sets the trial's point, its provenance in comments."""
    base = osp.relpath(osp.abspath(settings.config), osp.dirname(osp.abspath(path)))
    # a trained motion model's weights are a file of this machine: named in a comment, given at test time
    weights_key = tracker_class(settings.config).motion_checkpoint_key
    weights = {k: v for k, v in settings.extra.items() if weights_key and k == f'model.tracker.{weights_key}'}
    point = point_options(settings.config, trial.params, settings.extra)
    options = {k: v for k, v in {**settings.extra, **point}.items()
               if k not in weights}
    lines = [
        f'# Tuned by tools/tune.py: {osp.basename(settings.config)} on {summary["data_name"]} '
        f'({summary["num_videos"]} videos, {len(summary["folds"])} folds by video, seed {settings.seed}).',
        f'# Data: {settings.data_root}; detections: {settings.det_root}.',
        f'# Space {settings.space!r}, {summary["complete"]} complete / {summary["pruned"]} pruned trials (Optuna TPE, '
        'median pruner); study ' + repr(summary['study']) + '.',
        f'# Rule: {RULE}.',
        f'# Trial {trial.number}: COMBINED HOTA {100 * trial.value:.2f} on the tuning videos '
        f'(the base config: {100 * summary["official"]["HOTA_reference"]:.2f}); held-aside estimate '
        f'{100 * summary["held_aside"]["HOTA"]:.2f} vs {100 * summary["held_aside"]["HOTA_reference"]:.2f}.',
    ]
    if matcher_text(trial.params):
        lines.append(f'# Matcher: {matcher_text(trial.params)}.')
    if settings.extra:
        lines.append('# Set for every trial (--cfg-options): ' + ', '.join(settings.extra) + '.')
    for key, value in weights.items():
        lines.append(f'# Tuned with the weights {value} (not written here): test with --cfg-options {key}=PATH.')
    lines.append(f'_base_ = [{base!r}]')
    for key, value in nest_options(options).items():
        lines.append(f'{key} = {python_literal(value, 0)}')
    return '\n'.join(lines) + '\n'


def save_plots(study: Any, work_dir: str) -> list[str]:
    """Optuna's optimisation history and parameter importances, as PNG files of the work dir."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from optuna.visualization import matplotlib as optuna_plots
    saved = []
    for name, plot in (('optimization_history', optuna_plots.plot_optimization_history),
                       ('param_importances', optuna_plots.plot_param_importances)):
        path = osp.join(work_dir, f'{name}.png')
        try:
            with warnings.catch_warnings():  # optuna's "experimental" plots, its importance caveats
                warnings.simplefilter('ignore')
                axes = plot(study)
        except (ValueError, RuntimeError) as exc:  # e.g. importances of fewer than two complete trials
            print(f'{name}: not plotted ({exc})')
            continue
        figure = axes.figure if hasattr(axes, 'figure') else axes[0].figure
        figure.set_size_inches(9, 5)
        figure.tight_layout()
        tmp = path + '.tmp.png'
        figure.savefig(tmp, dpi=110)
        plt.close(figure)
        os.replace(tmp, path)
        saved.append(path)
    return saved
