"""The tuner's search: an Optuna study (TPE sampler, median pruner) in an RDB storage (SQLite by default: a killed
study resumes, several processes share it; a PostgreSQL URL for many machines), whose trials are runs of the
sweep's run cache (:mod:`vastmat.experiments.sweep.runs`), one per fold of videos.

Each trial is one task of a launcher (:mod:`vastmat.experiments.launchers`: this process, local worker processes or
ray tasks), ``workers`` at a time: the task opens the storage, asks the study for a point and tells it the result, so
the study in the storage is the only state the workers share. A task whose process dies leaves its trial running in
the storage (ray runs the task again, in a new trial): the next trial that starts once the dead one's heartbeat has
been silent ``4 x heartbeat`` seconds marks it failed, and so does the tuner that started it when its tasks have
ended.

A trial tracks the folds one after another; after each it reports the COMBINED HOTA of the videos tracked so far, and
the pruner stops a trial that is below the median of earlier trials at the same fold. Its value is the COMBINED HOTA
of all tuning videos. The folds split the videos by video (a seeded shuffle, dealt round-robin).
"""
from __future__ import annotations

import hashlib
import json
import os
import os.path as osp
import random
import time
import warnings
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from vastmat.utils.errors import UserInputError

from .space import point_options, sample, search_space


@dataclass
class TuneSettings:
    """A tuning run as ``tools/tune.py`` gives it."""

    config: str
    data_root: str
    det_root: str
    work_dir: str
    trials: int = 50  # complete + pruned trials the study ends with (resumed ones count)
    workers: int = 1  # trials at the same time
    storage: str | None = None  # SQLAlchemy URL; default sqlite:///<work_dir>/study.db
    launcher: str = 'local'  # where the trials run: 'local' (processes) or 'ray' (tasks)
    heartbeat: int = 5  # seconds between a running trial's heartbeats; one silent 4x as long is failed
    space: str = 'default'
    folds: int = 4
    seed: int = 0
    split: str | None = None
    videos: list[str] | None = None
    study_name: str | None = None  # default: a hash of what makes the study
    preset: str = 'vastmat'  # the evaluation preset
    data_name: str | None = None  # names the preset config (default: the data root's folder name)
    preset_out: str | None = None  # where the preset config goes (default: the work dir)
    bootstrap: int = 1000
    level: float = 0.9
    extra: dict[str, Any] = field(default_factory=dict)  # options every run gets (e.g. a trained D2MP)


def make_folds(videos: list[str], folds: int, seed: int) -> list[list[str]]:
    """``videos`` in ``folds`` groups: a seeded shuffle dealt round-robin, each group sorted."""
    if not 2 <= folds <= len(videos):
        raise UserInputError(f'--folds {folds}: need 2 <= folds <= the number of videos ({len(videos)})')
    order = sorted(videos)
    random.Random(seed).shuffle(order)
    return [sorted(order[i::folds]) for i in range(folds)]


def storage_url(settings: TuneSettings) -> str:
    return settings.storage or f'sqlite:///{osp.abspath(osp.join(settings.work_dir, "study.db"))}'


def default_study_name(settings: TuneSettings, folds: list[list[str]]) -> str:
    """A name that changes with what the trials' values depend on (config, the space and its entries, data, folds,
    options)."""
    space = search_space(settings.config, settings.space)
    identity = dict(config=osp.realpath(settings.config), space=settings.space, space_entries=repr(space),
                    data=osp.realpath(settings.data_root),
                    dets=osp.realpath(settings.det_root), folds=folds, preset=settings.preset, extra=settings.extra)
    digest = hashlib.sha1(json.dumps(identity, sort_keys=True, default=repr).encode()).hexdigest()[:10]
    return f'{osp.splitext(osp.basename(settings.config))[0]}-{settings.space}-{digest}'


def shown_url(url: str) -> str:
    """``url`` with its password hidden, for messages."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


_STORAGES: dict[tuple[int, str, int], Any] = {}  # by (process, url, heartbeat): one engine per process


def rdb_storage(url: str, heartbeat: int = 5, attempts: int = 5) -> Any:
    """Optuna's RDB storage of ``url`` (one per process), with heartbeats every ``heartbeat`` seconds (a trial whose
    process was killed is marked failed by the next trial that starts, once silent ``4 x heartbeat`` seconds).
    Processes that open a new database at once race to make its tables (Optuna makes them without a lock: "table
    studies already exists", "UNIQUE constraint failed: alembic_version"); the losers open it again, when the tables
    are there. A URL that names no database the tuner can reach fails at once, naming ``--storage``."""
    key = (os.getpid(), url, heartbeat)  # a forked worker opens its own connections
    if key in _STORAGES:
        return _STORAGES[key]
    import optuna
    from sqlalchemy.exc import ArgumentError, IntegrityError, OperationalError
    for attempt in range(attempts):
        try:
            storage = optuna.storages.RDBStorage(url, heartbeat_interval=heartbeat, grace_period=4 * heartbeat)
            break
        except ArgumentError as exc:
            raise UserInputError(f'--storage {shown_url(url)}: not a database URL the tuner can open ({exc}); '
                                 'e.g. sqlite:///PATH or postgresql://USER@HOST:PORT/DB') from None
        except ImportError:
            raise UserInputError(f'--storage {shown_url(url)}: no driver for it is installed (PostgreSQL: pip '
                                 'install -r requirements/postgres.txt)') from None
        except (IntegrityError, OperationalError) as exc:
            if attempt == attempts - 1 or not _lost_a_race(exc):
                if isinstance(exc, OperationalError):
                    reason = str(exc.orig).strip().splitlines()[0]
                    raise UserInputError(f'--storage {shown_url(url)}: cannot open it: {reason}') from None
                raise
            time.sleep(0.2 * (attempt + 1))
    _STORAGES[key] = storage
    return storage


def _lost_a_race(exc: Exception) -> bool:
    """Whether opening a storage failed because another process was making its tables at the same time (worth another
    try), not for good (no such database, server or user: named at once, not after seconds of tries)."""
    from sqlalchemy.exc import IntegrityError
    message = str(getattr(exc, 'orig', exc)).lower()
    return isinstance(exc, IntegrityError) or 'already exists' in message or 'database is locked' in message


def check_storage(settings: TuneSettings) -> None:
    """Refuse a SQLite storage where the trials run on several machines (a ray cluster of more than one node): each
    node would write a file of its own."""
    url = storage_url(settings)
    if settings.launcher != 'ray' or not url.startswith('sqlite'):
        return
    from vastmat.experiments.launchers import ray_nodes
    nodes = ray_nodes(settings.workers)
    if nodes > 1:
        raise UserInputError(
            f'--storage {url}: a SQLite file cannot be shared by the {nodes} nodes of the ray cluster '
            f'(RAY_ADDRESS={os.environ.get("RAY_ADDRESS")}); give a database server every node reaches, e.g. '
            '--storage postgresql://USER@HOST:PORT/DB (docs/scaling.md)')


def open_study(settings: TuneSettings, name: str, folds: list[list[str]], index: int = 0) -> Any:
    """The study ``name`` of the storage, made if absent (median pruner, a TPE sampler seeded with ``settings.seed +
    index``: each trial a run starts gets its own index, so that no two propose the same random point); its folds
    must be these."""
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings('ignore', category=optuna.exceptions.ExperimentalWarning)  # heartbeats, grouped TPE
    storage = rdb_storage(storage_url(settings), settings.heartbeat)
    sampler = optuna.samplers.TPESampler(seed=settings.seed + index, n_startup_trials=10, multivariate=True,
                                         group=True)
    pruner = optuna.pruners.MedianPruner(n_startup_trials=8, n_warmup_steps=1)
    study = optuna.create_study(study_name=name, storage=storage, sampler=sampler, pruner=pruner,
                                direction='maximize', load_if_exists=True)
    saved = study.user_attrs.get('folds')
    if saved is None:
        study.set_user_attr('folds', folds)
        study.set_user_attr('settings', {k: v for k, v in asdict(settings).items() if k != 'trials'})
    elif saved != folds:
        raise UserInputError(f'study {name!r} in {shown_url(storage_url(settings))} has other folds: give another '
                             '--study-name')
    return study


def fold_run(settings: TuneSettings, options: dict[str, Any], videos: list[str]) -> dict:
    """The run spec (the sweep's: id, folder, cache) of ``options`` on ``videos``."""
    from vastmat.experiments.sweep import make_runs
    pairs = list(settings.extra.items()) + list(options.items())
    return make_runs(settings, pairs, [], videos, settings.work_dir)[0]


def run_metrics(run: dict) -> dict:
    """The run's metrics.json (per video and COMBINED), the run executed first where it is not done."""
    from vastmat.experiments.sweep import execute_run, is_done
    if not is_done(run):
        execute_run(run)
    with open(osp.join(run['run_dir'], 'metrics.json'), encoding='utf-8') as f:
        return json.load(f)


def per_video(runs: list[dict]) -> dict[str, dict]:
    """The per-video metrics of a point's fold runs, all videos in one dict."""
    out: dict[str, dict] = {}
    for run in runs:
        metrics = run_metrics(run)
        out.update({video: metrics[video] for video in run['videos']})
    return out


class Objective:
    """One trial: a point of the space, tracked fold by fold (pruned where the pruner says), valued by the COMBINED
    HOTA of all tuning videos."""

    def __init__(self, settings: TuneSettings, folds: list[list[str]], run: str | None = None) -> None:
        self.settings, self.folds, self.run = settings, folds, run
        self.space = search_space(settings.config, settings.space)

    def __call__(self, trial: Any) -> float:
        import optuna

        from vastmat.evaluation.mot_eval import combined_hota
        self.number = trial.number
        # the tuner that started it first (run_workers fails its trials still running at the end), then the pid:
        # a worker killed between the two writes leaves no pid (a trial with a pid has its run)
        trial.set_user_attr('run', self.run)
        trial.set_user_attr('pid', os.getpid())
        params = sample(trial, self.space)
        options = point_options(self.settings.config, params, self.settings.extra)
        results: dict[str, dict] = {}
        run_ids = []
        for step, videos in enumerate(self.folds):
            run = fold_run(self.settings, options, videos)
            results.update(per_video([run]))
            run_ids.append(run['id'])
            trial.set_user_attr('run_ids', run_ids)
            trial.report(combined_hota(results, list(results)), step)
            if step < len(self.folds) - 1 and trial.should_prune():
                raise optuna.TrialPruned()
        return combined_hota(results, list(results))


def finished_count(study: Any) -> int:
    from optuna.trial import TrialState
    return len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)))


@dataclass(frozen=True)
class TrialTask:
    """One trial for a launcher's worker: the study, the index that seeds its sampler and the tuner's run."""

    settings: TuneSettings
    name: str
    folds: list[list[str]]
    index: int
    run: str


def run_trial(task: TrialTask) -> dict:
    """Run one trial of the study in this process (a launcher's task): ``dict(number, state, value, pid, seconds)``.
    A point whose tracker does not build (a space entry outside what the tracker accepts) fails alone."""
    from vastmat.utils.threads import torch_threads
    start = time.perf_counter()
    study = open_study(task.settings, task.name, task.folds, task.index)
    objective = Objective(task.settings, task.folds, task.run)
    with torch_threads(1):
        study.optimize(objective, n_trials=1, catch=(UserInputError, ))
    trial, = (t for t in study.get_trials(deepcopy=False) if t.number == objective.number)
    return dict(number=trial.number, state=trial.state.name, value=trial.value, pid=os.getpid(),
                seconds=time.perf_counter() - start)


def run_workers(settings: TuneSettings, name: str, folds: list[list[str]]) -> None:
    """Trials, one launcher task each and ``settings.workers`` at a time, until the study holds ``settings.trials``
    finished (complete or pruned) ones: a new trial starts only while the finished ones and those in flight fall
    short of it (several tuners on one study stop together), and at most as many as were missing when this run
    began (a failed point is not run again). Once every task has ended, a trial of this run still running in the
    storage lost its worker (ray ran the task again, in a new trial): it is marked failed."""
    import uuid

    from optuna.trial import TrialState

    from vastmat.experiments.launchers import run_pulled
    study = open_study(settings, name, folds)
    run = uuid.uuid4().hex
    first, left = len(study.trials), settings.trials - finished_count(study)
    # the workers may run elsewhere (ray): they get absolute paths
    remote = replace(settings, **{key: osp.abspath(getattr(settings, key))
                                  for key in ('config', 'data_root', 'det_root', 'work_dir')})
    remote = replace(remote, storage=storage_url(remote))
    count = dict(started=0, in_flight=0)

    def next_task() -> TrialTask | None:
        if count['started'] >= left or finished_count(study) + count['in_flight'] >= settings.trials:
            return None
        count['started'] += 1
        count['in_flight'] += 1
        return TrialTask(remote, name, folds, first + count['started'] - 1, run)

    def done(task: TrialTask, result: dict) -> None:
        count['in_flight'] -= 1
        value = '' if result['value'] is None else f'HOTA {100 * result["value"]:.2f}, '
        print(f'  trial {result["number"]}: {result["state"].lower()} ({value}{result["seconds"]:.1f} s, '
              f'pid {result["pid"]})', flush=True)

    run_pulled(run_trial, next_task, settings.launcher, settings.workers, done,
               describe=lambda task: f'in a trial of study {name!r} (sampler index {task.index})')
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING, )):
        if trial.user_attrs.get('run') == run:
            study.tell(trial.number, state=TrialState.FAIL, skip_if_finished=True)
            print(f'  trial {trial.number}: failed (its worker, pid {trial.user_attrs.get("pid")}, died)', flush=True)
