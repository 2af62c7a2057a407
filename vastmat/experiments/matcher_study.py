"""Trackers with several matchers on the same cached detections: the trackers of the matcher studies, read from the
registry, each run's config and options, and the matcher table (one tracker, its matchers side by side under one
setting, paper Table 5's layout).

A tracker joins the studies by declaring on its class (:class:`~vastmat.models.trackers.base_tracker.BaseTracker`)
``experiment_name`` and ``study_config`` (its config on cached detections), with ``study_own_matcher`` (the
``configs/matchers/`` name of that config's matcher), ``study_match_thresh`` (its first-stage match threshold in the
``paper`` and ``official`` settings), ``study_options`` (``--cfg-options`` of every run), ``study_cost`` and
``motion_checkpoint_key`` (the weights of a trained motion model it needs). Another matcher goes in by
:func:`vastmat.apis.swap_matcher`.
"""
from __future__ import annotations

import inspect
import json
import os.path as osp
from dataclasses import dataclass
from typing import Any

from mmengine.config import Config

from vastmat.utils.errors import UserInputError

SETTINGS = ('paper', 'official')
PIXELS = ('plus-one', 'plain')
DEFAULT_METRICS = ('HOTA', 'DetA', 'AssA', 'MOTA', 'IDF1', 'IDSW')
# the matcher table's matchers after the tracker's own
TABLE_MATCHERS = ('diou', 'cda-fixed', 'cda-adaptive')


@dataclass(frozen=True)
class StudyTracker:
    """A tracker of the matcher studies, as its class declares it."""

    name: str
    type: str
    config: str  # absolute path
    own_matcher: str
    match_thresh: tuple[str, dict[str, float]] | None = None
    options: tuple[str, ...] = ()
    cost: int = 1
    motion_checkpoint_key: str | None = None

    def threshold(self, setting: str) -> float | None:
        """The first-stage match threshold of ``setting`` (None: the config's)."""
        return None if self.match_thresh is None else self.match_thresh[1][setting]

    def is_own(self, matcher: str) -> bool:
        return matcher.replace('-', '_') == self.own_matcher.replace('-', '_')


def study_trackers() -> dict[str, StudyTracker]:
    """Every registered tracker class with an ``experiment_name`` and a ``study_config``, by name, the cheapest to
    run first (``study_cost``, then the name)."""
    from vastmat.models.trackers.zoo import config_path
    from vastmat.registry import MODELS
    MODELS.get('BYTETracker')  # the first lookup loads the plugins (vastmat.plugins entry points)
    found = {}
    for type_name, cls in MODELS.module_dict.items():
        if not inspect.isclass(cls) or not getattr(cls, 'experiment_name', None) or not getattr(
                cls, 'study_config', None):
            continue
        found[cls.experiment_name] = StudyTracker(
            cls.experiment_name, type_name, config_path(cls.study_config), cls.study_own_matcher,
            cls.study_match_thresh, tuple(cls.study_options), cls.study_cost, cls.motion_checkpoint_key)
    return dict(sorted(found.items(), key=lambda item: (item[1].cost, item[0])))


def study_tracker(name: str) -> StudyTracker:
    trackers = study_trackers()
    if name not in trackers:
        raise UserInputError(f'tracker {name!r} is not in the matcher studies (known: {", ".join(trackers)})')
    return trackers[name]


def matcher_config(tracker: StudyTracker, matcher: str) -> Config:
    """The tracker's study config with ``matcher`` (its own: the config as it is)."""
    from vastmat.apis import swap_matcher
    cfg = Config.fromfile(tracker.config)
    return cfg if tracker.is_own(matcher) else swap_matcher(cfg, matcher)


def pixel_options(cfg: Config, plus_one: bool) -> list[str]:
    """``--cfg-options`` that set the matcher's and its gate's pixel convention (and a fused matcher's geometric
    term's, and a tracker-level gate's) explicitly."""
    tracker = cfg.model.tracker
    options = [f'model.tracker.matcher.plus_one={plus_one}']
    for part in ('gate', 'geometric'):
        if tracker.matcher.get(part):
            options.append(f'model.tracker.matcher.{part}.plus_one={plus_one}')
    if tracker.get('gate'):
        options.append(f'model.tracker.gate.plus_one={plus_one}')
    return options


def run_options(cfg: Config, tracker: StudyTracker, setting: str = 'paper', plus_one: bool = True,
                cfg_options: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The ``--cfg-options`` of one run of ``cfg`` (a :func:`matcher_config`) but the preset and the videos: the
    pixel convention, then ``cfg_options``, then the setting's first-stage match threshold (if the tracker has one)."""
    options = [*pixel_options(cfg, plus_one), *cfg_options]
    if tracker.match_thresh is not None:
        options.append(f'model.tracker.{tracker.match_thresh[0]}={tracker.threshold(setting)}')
    return options


def option_dict(texts: list[str], flag: str = '--cfg-options') -> dict[str, Any]:
    """``KEY=VALUE`` texts as a dict (values read by :mod:`vastmat.utils.options`; a later key wins)."""
    from vastmat.utils.options import parse_option
    return dict(parse_option(text, flag) for text in texts)


# ------------------------------------------------------------------------------------------------------ comparison

def compare_runs(paths: list[str], names: list[str] | None = None, metrics: list[str] | tuple[str, ...] =
                 DEFAULT_METRICS, row: str = 'COMBINED', title: str | None = None, csv: str | None = None) -> dict:
    """Several runs' metrics JSON side by side, printed with the best two of each metric marked (and the values with
    their ranks written to ``csv``); returns ``dict(rows, ranks)``."""
    from rich.console import Console

    from vastmat.evaluation.report import ranked_table, write_ranked_csv
    names = names or [osp.basename(osp.dirname(osp.abspath(p))) or p for p in paths]
    if len(names) != len(paths) or len(set(names)) != len(names):
        raise UserInputError('--names must give one distinct name per run')
    rows = {}
    for name, path in zip(names, paths):
        with open(path, encoding='utf-8') as f:
            data = json.load(f)
        entry = data.get(row, data if row == 'COMBINED' and 'HOTA' in data else None)
        if entry is None:
            raise UserInputError(f'{path}: no entry {row!r}')
        missing = [m for m in metrics if m not in entry]
        if missing:
            raise UserInputError(f'{path}: no metric {missing[0]!r} in {row!r}')
        rows[name] = {m: entry[m] for m in metrics}
    caption = f'{len(names)} runs ({row})'
    table, ranks = ranked_table(rows, [(m, m, m) for m in metrics], f'{title}\n{caption}' if title else caption)
    Console().print(table)
    if csv:
        write_ranked_csv(rows, ranks, list(metrics), csv)
    return dict(rows=rows, ranks=ranks)


def paired_hota(paths: list[str], names: list[str], reference: str, videos: list[str] | None = None,
                samples: int = 1000, level: float = 0.9, seed: int = 0) -> dict:
    """Each run's COMBINED HOTA on ``videos`` (default: the videos every run has; TrackEval's combination of the
    per-video results) and its difference to the run ``reference`` with the ``level`` interval over ``samples``
    paired resamples of the videos (:func:`vastmat.evaluation.analysis.bootstrap_hota`); printed, and returned as
    ``dict(videos, rows)``."""
    from rich.console import Console
    from rich.table import Table

    from vastmat.evaluation.analysis import paired_difference, video_names
    if reference not in names:
        raise UserInputError(f'--reference {reference}: not one of the --names ({", ".join(names)})')
    per_video = {}
    for name, path in zip(names, paths):
        with open(path, encoding='utf-8') as f:
            per_video[name] = json.load(f)
    shared = sorted(set.intersection(*(set(video_names(d)) for d in per_video.values())))
    videos = list(videos) if videos else shared
    missing = {name: [v for v in videos if v not in d] for name, d in per_video.items()}
    for name, absent in missing.items():
        if absent:
            raise UserInputError(f'{name}: no per-video results for {", ".join(absent[:5])} (a metrics_per_video.json '
                                 'or an eval_mot.py JSON holds them)')
    rows = [dict(name=name, **paired_difference(per_video[name], per_video[reference], videos, samples, level, seed))
            for name in names]
    table = Table(title=f'COMBINED HOTA on {len(videos)} videos, difference to {reference} and its '
                        f'{round(100 * level)} % interval ({samples} paired resamples of the videos)')
    for column in ('run', 'HOTA', f'- {reference}', 'interval', 'resamples better'):
        table.add_column(column, justify='left' if column == 'run' else 'right')
    for row in rows:
        same = row['name'] == reference
        table.add_row(row['name'], f'{100 * row["HOTA"]:.2f}', '' if same else f'{100 * row["difference"]:+.2f}',
                      '' if same else f'{100 * row["low"]:+.2f} .. {100 * row["high"]:+.2f}',
                      '' if same else f'{100 * row["share_better"]:.0f} %')
    Console().print(table)
    return dict(videos=videos, rows=rows)


# ------------------------------------------------------------------------------------------------------ the table

def matcher_table(tracker: str, data_root: str, det_root: str, work_dir: str, matchers: list[str] | None = None,
                  setting: str = 'paper', pixels: str = 'plus-one', preset: str = 'vastmat',
                  videos: list[str] | None = None, cfg_options: list[str] | tuple[str, ...] = ()) -> dict:
    """Run ``tracker`` with each matcher (default: its own, then :data:`TABLE_MATCHERS`) into
    ``work_dir/<matcher>/`` as ``tools/test.py`` does; the table goes to ``work_dir/table.csv`` and, with the
    settings, ``table.json``."""
    from vastmat.apis import run_tracking_test
    from vastmat.utils.io import write_json_atomic
    member = study_tracker(tracker)
    matchers = list(matchers or [member.own_matcher, *TABLE_MATCHERS])
    if len(set(matchers)) != len(matchers):
        raise UserInputError('--matchers: a matcher is given twice')
    configs = {matcher: matcher_config(member, matcher) for matcher in matchers}  # every name checked first
    plus_one = pixels == 'plus-one'
    runs = []
    for matcher, cfg in configs.items():
        run_dir = osp.join(work_dir, matcher)
        options = [f'test_evaluator.preset={preset}', *run_options(cfg, member, setting, plus_one, cfg_options)]
        if videos:
            options.append('test_dataloader.dataset.videos=[' + ','.join(videos) + ']')
        print(f'== {tracker}, matcher {matcher}: {run_dir}', flush=True)
        run_tracking_test(cfg, data_root, det_root, run_dir, option_dict(options))
        runs.append(osp.join(run_dir, 'metrics_per_video.json'))
    threshold = member.threshold(setting)
    settings = dict(tracker=tracker, setting=setting, match_thresh=threshold, pixels=pixels, preset=preset,
                    cfg_options=list(cfg_options))
    title = (f'{tracker}, match threshold {threshold if member.match_thresh else "of the config"} ({setting}), '
             f'{"+1 pixel" if plus_one else "no +1 pixel"} convention in every matcher and gate')
    table = compare_runs(runs, matchers, csv=osp.join(work_dir, 'table.csv'), title=title)
    write_json_atomic(dict(settings, rows=table['rows']), osp.join(work_dir, 'table.json'))
    return dict(table, settings=settings)
