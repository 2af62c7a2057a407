"""The tuner (``tools/tune.py``): an Optuna search of a tracker's declared search space on a dataset's videos, a
selection that is checked on held-aside folds, and a preset config that records where it came from.

:mod:`.space` (the spaces the trackers declare, sampling), :mod:`.study` (the Optuna study, its storage, the trials
as runs of the sweep's run cache), :mod:`.selection` (the rule, intervals, the winning matchers, the preset, plots).
"""
from __future__ import annotations

import os
import os.path as osp
import time

from vastmat.utils.io import atomic_write, write_json_atomic

from vastmat.evaluation.analysis import paired_difference

from .selection import RULE, complete_trials, held_aside, matcher_winners, preset_text, save_plots, trial_videos
from .space import LINKING, point_options, sample, search_space
from .study import (Objective, TuneSettings, check_storage, default_study_name, fold_run, make_folds, open_study,
                    per_video, run_trial, run_workers, shown_url, storage_url)

__all__ = ['TuneSettings', 'run_tuning', 'search_space', 'sample', 'point_options', 'make_folds', 'open_study',
           'run_trial', 'run_workers', 'check_storage', 'Objective', 'held_aside', 'matcher_winners', 'preset_text',
           'RULE', 'storage_url', 'shown_url', 'default_study_name', 'fold_run', 'per_video', 'complete_trials',
           'trial_videos']


def _points(value: float) -> str:
    return f'{100 * value:+.2f}'


def print_report(report: dict) -> None:
    """The tuned point against the base config, the held-aside folds and the winning matchers, as tables."""
    from rich.table import Table

    from vastmat.experiments.sweep import wide_console
    console = wide_console()
    level = int(100 * report['level'])
    table = Table(title=f'{report["tracker"]} tuned on {report["data_name"]} ({report["num_videos"]} videos, '
                        f'{len(report["folds"])} folds): HOTA, difference to the base config and its {level} % '
                        'interval')
    for column in ('', 'HOTA', 'base', 'difference', 'interval', 'resamples better'):
        table.add_column(column, justify='left' if not column else 'right')
    for label, row in (('tuned (all tuning videos)', report['official']),
                       ('held-aside choice per fold', report['held_aside'])):
        table.add_row(label, f'{100 * row["HOTA"]:.2f}', f'{100 * row["HOTA_reference"]:.2f}',
                      _points(row['difference']), f'{_points(row["low"])} .. {_points(row["high"])}',
                      f'{100 * row["share_better"]:.0f} %')
    console.print(table)
    folds = Table(title='Held-aside folds: the trial best on the other folds, scored on the fold')
    for column in ('fold', 'videos', 'trial', 'HOTA other folds', 'HOTA held aside'):
        folds.add_column(column, justify='right')
    for row in report['folds_table']:
        folds.add_row(str(row['fold']), str(row['videos']), str(row['trial']), f'{100 * row["HOTA_other_folds"]:.2f}',
                      f'{100 * row["HOTA_held_aside"]:.2f}')
    console.print(folds)
    matchers = Table(title=f'Each matcher at its own best settings (difference to IoU\'s best, {level} % interval)')
    for column in ('matcher', 'trial', 'HOTA', 'vs IoU', 'interval'):
        matchers.add_column(column, justify='left' if column == 'matcher' else 'right')
    for row in report['matchers']:
        versus = row.get('vs_iou')
        matchers.add_row(row['matcher'], str(row['trial']), f'{100 * row["HOTA"]:.2f}',
                         _points(versus['difference']) if versus else '',
                         f'{_points(versus["low"])} .. {_points(versus["high"])}' if versus else '')
    console.print(matchers)
    console.print(f'rule: {RULE}')
    console.print(f'best trial {report["best"]["trial"]}: {report["best"]["params"]}')
    console.print(f'preset: {report["preset_path"]}')


def run_tuning(settings: TuneSettings) -> dict:
    """Search (resuming the study where it stopped), then choose, compare, write the preset, the report
    (``tune.json``), the trials (``trials.csv``) and the plots into the work dir. Returns the report."""
    from vastmat.experiments.sweep import resolve_videos
    start = time.perf_counter()
    os.makedirs(settings.work_dir, exist_ok=True)
    search_space(settings.config, settings.space)  # an unknown space fails before anything runs
    check_storage(settings)
    videos = resolve_videos(settings)
    folds = make_folds(videos, settings.folds, settings.seed)
    name = settings.study_name or default_study_name(settings, folds)
    study = open_study(settings, name, folds)
    print(f'study {name!r} in {shown_url(storage_url(settings))}: {len(study.trials)} trials so far, running to '
          f'{settings.trials} finished with {settings.workers} {settings.launcher} worker(s)', flush=True)
    run_workers(settings, name, folds)

    study = open_study(settings, name, folds)
    trials = complete_trials(study)
    if not trials:
        raise RuntimeError(f'study {name!r}: no complete trial (all pruned or failed)')
    per_trial = {t.number: trial_videos(settings.work_dir, t) for t in trials}
    base = per_video([fold_run(settings, {}, fold) for fold in folds])
    best = max(trials, key=lambda t: (t.value, -t.number))
    folds_table, composite = held_aside(per_trial, folds)
    args = (settings.bootstrap, settings.level, settings.seed)
    from optuna.trial import TrialState
    data_name = settings.data_name or osp.basename(osp.normpath(settings.data_root))
    if data_name in ('gt', 'train', 'test'):
        data_name = osp.basename(osp.dirname(osp.normpath(settings.data_root)))
    report = dict(
        tracker=osp.splitext(osp.basename(settings.config))[0], config=settings.config, data_name=data_name,
        study=name, storage=shown_url(storage_url(settings)), launcher=settings.launcher,
        space=search_space(settings.config, settings.space),
        num_videos=len(videos), folds=folds, rule=RULE, level=settings.level, bootstrap=settings.bootstrap,
        complete=len(trials), pruned=len(study.get_trials(deepcopy=False, states=(TrialState.PRUNED, ))),
        failed=len(study.get_trials(deepcopy=False, states=(TrialState.FAIL, ))),
        best=dict(trial=best.number, HOTA=best.value, params=best.params,
                  options=point_options(settings.config, best.params, settings.extra)),
        official=paired_difference(per_trial[best.number], base, videos, *args),
        held_aside=paired_difference(composite, base, videos, *args), folds_table=folds_table,
        matchers=matcher_winners(trials, per_trial, videos, *args),
        trials=[dict(number=t.number, HOTA=t.value, params=t.params, pid=t.user_attrs.get('pid')) for t in trials])
    # --preset-out: a file, or a folder (the config's folder, say) that gets the default name
    preset_name = f'{report["tracker"]}_tuned-{data_name}.py'
    if LINKING in settings.space.split('+'):  # a linked preset: bytetrack_cached-dets_tuned-linked-<data>.py
        stem = report['tracker'].removesuffix(f'_tuned-{data_name}')
        preset_name = f'{stem}_tuned-linked-{data_name}.py'
    preset_path = settings.preset_out or osp.join(settings.work_dir, preset_name)
    if osp.isdir(preset_path):
        preset_path = osp.join(preset_path, preset_name)
    report['preset_path'] = preset_path
    with atomic_write(preset_path) as f:
        f.write(preset_text(settings, best, report, preset_path))
    report['plots'] = save_plots(study, settings.work_dir)
    with atomic_write(osp.join(settings.work_dir, 'trials.csv')) as f:
        keys = sorted({k for t in trials for k in t.params})
        f.write(','.join(['trial', 'HOTA'] + keys) + '\n')
        for t in trials:
            f.write(','.join([str(t.number), f'{t.value:.6f}'] + [str(t.params.get(k, '')) for k in keys]) + '\n')
    report['seconds'] = time.perf_counter() - start
    write_json_atomic(report, osp.join(settings.work_dir, 'tune.json'))
    print_report(report)
    return report
