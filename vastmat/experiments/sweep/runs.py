"""A sweep's runs: one spec (a plain dict, sent to the workers) per grid point, its id, its folder and its cache.

W/runs/<id>/ holds results/<video>.txt, metrics.json (per video and COMBINED, TrackEval names) and settings.json; the
id is a hash of the config (path and content), the resolved options, the detection and data roots, the videos and the
evaluation preset. A run whose metrics.json exists is done (it is written last, atomically), so a sweep resumes where
it stopped.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import os.path as osp
import time
from typing import Any

from mmengine.config import Config

from vastmat.utils.errors import UserInputError
from vastmat.utils.options import format_value

from .plan import Axis, resolve_options

# config paths inside the repository enter a run's id relative to it (a clone elsewhere keeps its ids)
REPO = osp.dirname(osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))
# what settings.json repeats of a run's spec
SETTINGS_KEYS = ('id', 'config', 'options', 'params', 'det_root', 'data_root', 'videos', 'preset')


def build_config(config: str, options: dict[str, Any], flags: dict[str, str] | None = None) -> Config:
    """A run's config: ``options`` applied in order (checked, a dict replacing the whole entry), then the plugins'
    adjustments (as ``tools/test.py``). The one place a run's config is made.

    Args:
        flags: the command-line flag that gave each key, named in the errors.
    """
    from vastmat.engine.config_options import apply_cfg_options
    from vastmat.plugins import adjust_config
    return adjust_config(apply_cfg_options(Config.fromfile(config), options, flags))


def run_id(settings: dict) -> str:
    """A short stable hash of what makes a run (config path and content, options, roots, videos, preset)."""
    text = json.dumps(settings, sort_keys=True, default=repr)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _config_path(config: str) -> str:
    path = osp.realpath(config)
    return osp.relpath(path, REPO) if path.startswith(REPO + os.sep) else path


def make_runs(settings: Any, fixed: list[tuple[str, Any]], axes: list[Axis], videos: list[str],
              work_dir: str) -> list[dict]:
    """One run spec per grid point, in grid order.

    Args:
        settings: has ``config``, ``det_root``, ``data_root`` and ``preset`` (a :class:`SweepSettings`).
    """
    runs = []
    # the config's content (its _base_ files resolved) is part of a run's identity: an edited config is rerun
    content = json.dumps(Config.fromfile(settings.config).to_dict(), sort_keys=True, default=repr)
    config_sha = hashlib.sha1(content.encode()).hexdigest()[:12]
    for point in itertools.product(*(range(len(axis.values)) for axis in axes)):
        pairs = fixed + [(axis.key, axis.values[i]) for axis, i in zip(axes, point)]
        identity = dict(config=_config_path(settings.config), config_sha=config_sha, options=resolve_options(pairs),
                        det_root=osp.realpath(settings.det_root), data_root=osp.realpath(settings.data_root),
                        videos=list(videos), preset=settings.preset)
        rid = run_id(identity)
        params = {axis.name: axis.labels[i] for axis, i in zip(axes, point)}
        runs.append(dict(identity, id=rid, params=params, values={a.key: a.values[i] for a, i in zip(axes, point)},
                         label=', '.join(params.values()) or 'base', config_file=osp.abspath(settings.config),
                         run_dir=osp.join(osp.abspath(work_dir), 'runs', rid)))
    ids = [run['id'] for run in runs]
    if len(set(ids)) != len(ids):
        raise UserInputError('two grid points resolve to the same settings (a value given twice?)')
    return runs


def check_runs(runs: list[dict], flags: dict[str, str]) -> None:
    """Every run's config (its keys and value types) and model (its components' arguments) build, before anything
    runs."""
    from vastmat.apis import init_model
    from vastmat.engine.config_check import build_checked
    for run in runs:
        cfg = build_config(run['config_file'], run['options'], flags)
        point = ', '.join(f'{k}={format_value(v)}' for k, v in run['values'].items()) or 'the base settings'
        build_checked(f'the model of the run {point}', lambda: init_model(cfg, detector=False))


def resolve_videos(settings: Any) -> list[str]:
    """The videos, each with its detections (checked here, before anything runs).

    Args:
        settings: has ``data_root``, ``det_root``, ``split`` and ``videos`` (a :class:`SweepSettings`).
    """
    from vastmat.apis import video_list
    from vastmat.datasets.detections import detection_file
    if not osp.isdir(settings.data_root):
        raise FileNotFoundError(f'{settings.data_root}: no such data root')
    try:
        videos = video_list(settings.data_root, settings.split, settings.videos)
    except ValueError as exc:
        raise UserInputError(f'--split {settings.split}: {exc}') from None
    for video in videos:
        detection_file(settings.det_root, video)
    return videos


def is_done(run: dict) -> bool:
    """Whether the run finished (its metrics.json exists)."""
    return osp.isfile(osp.join(run['run_dir'], 'metrics.json'))


def execute_run(run: dict) -> dict:
    """Track and score one grid point; writes its folder, metrics.json last. Returns its id, COMBINED HOTA and
    seconds."""
    from vastmat.apis import init_model, track_and_score
    from vastmat.utils.io import write_json_atomic
    start = time.perf_counter()
    cfg = build_config(run['config_file'], run['options'])
    settings = dict({k: run[k] for k in SETTINGS_KEYS}, model=cfg.model.to_dict(),
                    rank=int(os.environ.get('RANK', 0)), pid=os.getpid())
    write_json_atomic(settings, osp.join(run['run_dir'], 'settings.json'))
    # metrics.json (written by track_and_score) marks a finished run; settings.json gets the timings after it
    metrics, tracking = track_and_score(init_model(cfg, detector=False), run['data_root'], run['det_root'],
                                        run['videos'], run['run_dir'], run['preset'])
    seconds = dict(tracking=tracking, total=time.perf_counter() - start)
    write_json_atomic(dict(settings, seconds=seconds), osp.join(run['run_dir'], 'settings.json'))
    return dict(id=run['id'], HOTA=metrics['COMBINED']['HOTA'], seconds=seconds['total'])


def describe_run(run: dict) -> str:
    """The note a failing run's error carries."""
    return f'in sweep run {run["id"]} ({run["label"]}), folder {run["run_dir"]}'


def execute_todo(todo: list[dict], settings: Any) -> None:
    """The runs still to do, through the launcher (:mod:`vastmat.experiments.launchers`), with a progress bar.

    Args:
        settings: has ``launcher`` (``local`` or ``ray``; torchrun ranks run their share locally) and ``workers``.
    """
    if not todo:
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..launchers import run_tasks
    progress = Progress(TextColumn('{task.description}'), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    task = progress.add_task('sweep runs', total=len(todo))

    def done(run: dict, result: dict) -> None:
        progress.console.print(f'  {run["label"]}: HOTA {100 * result["HOTA"]:.3f} in {result["seconds"]:.1f} s '
                               f'({run["id"]})')
        progress.advance(task)

    try:  # the display starts once the launcher has its workers (a local pool forks before the display's thread)
        run_tasks(execute_run, todo, 'ray' if settings.launcher == 'ray' else 'local', settings.workers, done,
                  progress.start, describe_run)
    finally:
        progress.stop()
