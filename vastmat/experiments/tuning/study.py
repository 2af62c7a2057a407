"""The tuner's search: an Optuna study (TPE sampler, median pruner) in an RDB storage (SQLite by default: a killed
study resumes, several processes share it; any SQLAlchemy URL for many machines), whose trials are runs of the
sweep's run cache (:mod:`vastmat.experiments.sweep.runs`), one per fold of videos.

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
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from multiprocessing import get_all_start_methods, get_context
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
    workers: int = 1  # processes sharing the study
    storage: str | None = None  # SQLAlchemy URL; default sqlite:///<work_dir>/study.db
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


def rdb_storage(url: str, attempts: int = 5) -> Any:
    """Optuna's RDB storage of ``url``, with heartbeats (a trial whose process was killed is marked failed by the next
    process that runs one). Processes that open a new database at once race to make its tables (Optuna makes them
    without a lock: "table studies already exists", "UNIQUE constraint failed: alembic_version"); the losers open it
    again, when the tables are there."""
    import optuna
    from sqlalchemy.exc import IntegrityError, OperationalError
    for attempt in range(attempts):
        try:
            return optuna.storages.RDBStorage(url, heartbeat_interval=5, grace_period=20)
        except (IntegrityError, OperationalError):
            if attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))


def open_study(settings: TuneSettings, name: str, folds: list[list[str]]) -> Any:
    """The study ``name`` of the storage, made if absent (TPE seeded, median pruner); its folds must be these."""
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings('ignore', category=optuna.exceptions.ExperimentalWarning)  # heartbeats, grouped TPE
    storage = rdb_storage(storage_url(settings))
    # each process its own seed (two TPE samplers with one seed would propose the same points)
    sampler = optuna.samplers.TPESampler(seed=settings.seed + os.getpid(), n_startup_trials=10, multivariate=True,
                                         group=True)
    pruner = optuna.pruners.MedianPruner(n_startup_trials=8, n_warmup_steps=1)
    study = optuna.create_study(study_name=name, storage=storage, sampler=sampler, pruner=pruner,
                                direction='maximize', load_if_exists=True)
    saved = study.user_attrs.get('folds')
    if saved is None:
        study.set_user_attr('folds', folds)
        study.set_user_attr('settings', {k: v for k, v in asdict(settings).items() if k != 'trials'})
    elif saved != folds:
        raise UserInputError(f'study {name!r} in {storage_url(settings)} has other folds: give another --study-name')
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

    def __init__(self, settings: TuneSettings, folds: list[list[str]]) -> None:
        self.settings, self.folds = settings, folds
        self.space = search_space(settings.config, settings.space)

    def __call__(self, trial: Any) -> float:
        import optuna

        from vastmat.evaluation.mot_eval import combined_hota
        params = sample(trial, self.space)
        options = point_options(self.settings.config, params)
        trial.set_user_attr('pid', os.getpid())
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


def optimize(settings: TuneSettings, name: str, folds: list[list[str]], progress: bool = True,
             share: int | None = None) -> None:
    """Run trials of the study until it holds ``settings.trials`` finished (complete or pruned) ones, at most
    ``share`` of them here (several processes share the study)."""
    from optuna.study import MaxTrialsCallback
    from optuna.trial import TrialState

    from vastmat.utils.threads import torch_threads
    study = open_study(settings, name, folds)
    left = settings.trials - finished_count(study)
    if share is not None:
        left = min(left, share)
    if left <= 0:
        return
    with torch_threads(1):
        # a point whose tracker does not build (a space entry outside what the tracker accepts) fails alone
        study.optimize(Objective(settings, folds), n_trials=left, show_progress_bar=progress, catch=(UserInputError, ),
                       callbacks=[MaxTrialsCallback(settings.trials, states=(TrialState.COMPLETE, TrialState.PRUNED))])


def _exit_with_parent(parent: int) -> None:
    """End this worker when the process that started it is gone (a killed tune.py leaves no worker running
    trials): a daemon thread that watches the parent's pid."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)
    threading.Thread(target=watch, daemon=True).start()


def _worker(settings: TuneSettings, name: str, folds: list[list[str]], share: int, parent: int) -> None:
    _exit_with_parent(parent)
    os.environ['OMP_NUM_THREADS'] = '1'
    optimize(settings, name, folds, progress=False, share=share)


def run_workers(settings: TuneSettings, name: str, folds: list[list[str]]) -> None:
    """``settings.workers`` processes share the study (one: it runs here)."""
    if settings.workers <= 1:
        optimize(settings, name, folds)
        return
    left = settings.trials - finished_count(open_study(settings, name, folds))
    if left <= 0:
        return
    # each worker its share of the trials left (every worker runs some); the callback stops all at the total
    shares = [left // settings.workers + (i < left % settings.workers) for i in range(settings.workers)]
    # fork, as the sweep's local launcher: the workers inherit the imports (no second start-up each); each opens
    # the storage anew
    context = get_context('fork' if 'fork' in get_all_start_methods() else 'spawn')
    with ProcessPoolExecutor(settings.workers, mp_context=context) as pool:
        futures = [pool.submit(_worker, settings, name, folds, share, os.getpid()) for share in shares if share]
        for future in futures:
            future.result()
