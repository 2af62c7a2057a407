"""Matchers against IoU where animals are many and slow and where they are few and fast: the
motion-matcher study (``tools/analysis/motion_matcher_study.py`` is its command line).

Every tracker of the matcher studies (:func:`~vastmat.experiments.matcher_study.study_trackers`) runs with every
matcher on every setting's videos, on cached detections:

* ``10fps`` (dense): AnimalTrack train at 10 FPS with its own simulated detections (a folder with gt/ and dets/);
* ``5fps`` and ``3fps`` (sparse / fast): AnimalTrack train (30 FPS) strided by 6 and 10, detections simulated
  (:func:`simulated_setting`) once into W/data/AnimalTrack-<fps>fps-sim and reused while its simulation.json (source,
  stride, seed) matches.

In each setting the table also scores the sparsest third of the videos (the ``round(n / 3)`` videos with the fewest
animals per frame, ties by name) from the same tracks (only the scoring is redone, over the subset, and cached in the
run's folder). A run is one tracker, matcher and setting: the tracker's study config with the matcher swapped in
(:func:`vastmat.apis.swap_matcher`) and the matcher table's options (:func:`~.matcher_study.run_options`), run as a
sweep's run (:mod:`vastmat.experiments.sweep`: W/runs/<id>/, reused when its metrics.json exists). Per tracker: its
``study_options`` and, for a tracker with ``motion_checkpoint_key`` (DiffMOT), the trained motion model.

Per video, from the setting's ground truth (valid rows; the strided frames of a sparse setting): animals per frame
(ground-truth boxes over frames) and the normalised displacement (the median, over same-identity pairs of boxes in
consecutive frames, of the centre distance over the mean of the two boxes' diagonals;
:func:`vastmat.datasets.statistics.normalized_displacement`). Outputs in W: table.csv, targets.csv, table.json and
gain.png (per-video HOTA gain over IoU against animals per frame and against normalised displacement).
"""
from __future__ import annotations

import argparse
import os.path as osp
import time

from vastmat.experiments.matcher_study import study_trackers
from vastmat.utils.io import write_json_atomic

from .runs import execute, make_runs, run_metrics, run_seconds, setting_roots, sparsest_third, video_statistics
from .settings import SETTING_TRACKER, StudySettings
from .table import (add_intervals, bootstrap_groups, make_rows, per_video_rows, plot_gains, print_table, print_targets,
                    print_times, target_rows, write_csv)

__all__ = ['StudySettings', 'run_study']


def run_study(study: StudySettings) -> dict:
    """Run the study (checked first); returns the rows, the targets, the per-video rows, the statistics, how many
    runs were computed and reused, and the seconds it took."""
    from vastmat.experiments.sweep.runs import resolve_videos
    start = time.perf_counter()
    study.check()
    roots = setting_roots(study)
    videos, stats, subsets = {}, {}, {}
    for setting, root in roots.items():
        videos[setting] = resolve_videos(argparse.Namespace(split=None, videos=study.videos, **{
            k: root[k] for k in ('data_root', 'det_root')}))
        stats[setting] = video_statistics(root['data_root'], videos[setting])
        subsets[setting] = sparsest_third(stats[setting])
    runs = make_runs(study, roots, videos)
    computed, reused = execute(runs, study.workers)
    metrics = {run['id']: run_metrics(run) for run in runs}  # each run's metrics.json, read once
    rows = make_rows(runs, metrics, subsets)
    draws = bootstrap_groups(runs, metrics, subsets, study.bootstrap, study.seed) if study.bootstrap else None
    add_intervals(rows, draws, study.level)
    targets = target_rows(rows, draws, study.candidate, study.level) if study.candidate else []
    per_video = per_video_rows(runs, metrics, stats)
    threshold = study_trackers()[SETTING_TRACKER].threshold(study.match_setting)
    title = (f'HOTA gain over IoU ({study.match_setting} setting: ByteTrack match_thresh {threshold}; '
             f'{"+1 pixel" if study.pixels == "plus-one" else "no +1 pixel"} convention; preset {study.preset})')
    print_table(rows, title, study.level)
    if targets:
        print_targets(targets, study.candidate, study.level, study.bootstrap)
    seconds = print_times(runs)
    settings = dict(trackers=study.trackers, settings={s: dict(roots[s], fps=stats[s][videos[s][0]]['frame_rate'])
                                                       for s in study.settings},
                    matchers=study.matchers, match_setting=study.match_setting, match_thresh=threshold,
                    pixels=study.pixels, preset=study.preset, cfg_options=study.cfg_options,
                    d2mp_checkpoint=study.d2mp_checkpoint, videos=study.videos, bootstrap=study.bootstrap,
                    level=study.level, seed=study.seed, candidate=study.candidate)
    write_csv(rows, osp.join(study.work_dir, 'table.csv'))
    if targets:
        write_csv(targets, osp.join(study.work_dir, 'targets.csv'))
    report = dict(settings=settings, title=title, rows=rows, targets=targets, per_video=per_video, statistics=stats,
                  sparsest_third=subsets, seconds=seconds,
                  runs=[dict(tracker=r['tracker'], setting=r['setting'], matcher=r['matcher'], id=r['id'],
                             run_dir=r['run_dir'], config=r['config'], cfg_options=r['cfg_options'],
                             seconds=run_seconds(r)) for r in runs])
    write_json_atomic(report, osp.join(study.work_dir, 'table.json'))
    plot_gains(per_video, study.matchers, study.color_by, osp.join(study.work_dir, 'gain.png'),
               f'{title}\n{", ".join(study.trackers)} on {", ".join(study.settings)}; colour: {study.color_by}')
    print(f'table: {osp.join(study.work_dir, "table.csv")}, {osp.join(study.work_dir, "table.json")}; '
          f'plot: {osp.join(study.work_dir, "gain.png")}', flush=True)
    return dict(rows=rows, targets=targets, per_video=per_video, statistics=stats, sparsest_third=subsets,
                computed=computed, reused=reused, seconds=time.perf_counter() - start)

