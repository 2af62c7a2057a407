"""Where a sweep's runs execute: ``local`` (this process or a pool of ``workers`` processes), ``ray`` (remote tasks;
``RAY_ADDRESS`` set: the running cluster, whose workers must import vastmat and see the same paths, else a local ray
with ``workers`` CPUs) or ``torchrun`` (rank r takes runs r, r + world size, ...; a gloo barrier, then rank 0 writes
the table)."""
from __future__ import annotations

import multiprocessing
import os
from datetime import timedelta
from typing import Any, Callable

from vastmat.utils.errors import UserInputError

from .runs import execute_run

LAUNCHERS = ('local', 'ray', 'torchrun')
Done = Callable[[dict, dict], None]


def _worker_init() -> None:
    """One thread per worker process: the workers already fill the cores."""
    import torch
    torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass


def _failed(run: dict, exc: BaseException) -> BaseException:
    exc.add_note(f'in sweep run {run["id"]} ({run["label"]}), folder {run["run_dir"]}')
    return exc


def run_local(todo: list[dict], workers: int, done: Done, started: Callable[[], Any] = lambda: None) -> None:
    """``todo`` in this process (one worker) or a process pool; ``started()`` once the workers exist,
    ``done(run, result)`` after each run."""
    if workers <= 1 or len(todo) <= 1:
        started()
        for run in todo:
            try:
                done(run, execute_run(run))
            except Exception as exc:
                raise _failed(run, exc)
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # fork: the workers inherit the imports (torch, mmdet and the registries), no second start-up each
    method = 'fork' if 'fork' in multiprocessing.get_all_start_methods() else None
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=context,
                             initializer=_worker_init) as pool:
        futures = {pool.submit(execute_run, run): run for run in todo}
        started()
        for future in as_completed(futures):
            run = futures[future]
            try:
                result = future.result()
            except Exception as exc:
                pool.shutdown(wait=True, cancel_futures=True)
                raise _failed(run, exc)
            done(run, result)


def run_ray(todo: list[dict], workers: int, done: Done, started: Callable[[], Any] = lambda: None) -> None:
    """``todo`` as ray remote tasks (one CPU each) on the ray this process is connected to, else the cluster of
    ``RAY_ADDRESS`` if set, else a local ray with ``workers`` CPUs."""
    ray = import_ray()
    if not ray.is_initialized():
        if os.environ.get('RAY_ADDRESS'):
            ray.init(address='auto')
        else:
            ray.init(num_cpus=max(workers, 1))
    remote = ray.remote(num_cpus=1)(execute_run)
    pending = {remote.remote(run): run for run in todo}
    started()
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        run = pending.pop(ready[0])
        try:
            result = ray.get(ready[0])
        except Exception as exc:
            for ref in pending:
                ray.cancel(ref)
            raise _failed(run, exc)
        done(run, result)


def import_ray() -> Any:
    """The ``ray`` module (the optional extra ``vastmat[ray]``)."""
    try:
        import ray
    except ImportError:
        raise UserInputError('--launcher ray: ray is not installed (pip install -r requirements/ray.txt)') from None
    return ray


def rank_share(num_runs: int, rank: int, world_size: int) -> list[int]:
    """The run indices of one rank: ``rank, rank + world_size, ...`` (disjoint, together all of them)."""
    if not 0 <= rank < world_size:
        raise ValueError(f'rank {rank} is not in [0, {world_size})')
    return list(range(rank, num_runs, world_size))


def torchrun_env() -> tuple[int, int]:
    """``(rank, world_size)`` from torchrun's environment."""
    try:
        rank, world_size = int(os.environ['RANK']), int(os.environ['WORLD_SIZE'])
    except (KeyError, ValueError):
        raise UserInputError('--launcher torchrun: RANK and WORLD_SIZE are not set; start the sweep with '
                             'torchrun --nproc_per_node N tools/analysis/sweep.py ...') from None
    if not 0 <= rank < world_size:
        raise UserInputError(f'--launcher torchrun: RANK={rank} is not in [0, WORLD_SIZE={world_size})')
    return rank, world_size


def torchrun_barrier(world_size: int, timeout_s: float) -> None:
    """Wait for every rank (gloo, torchrun's MASTER_ADDR / MASTER_PORT)."""
    if world_size <= 1:
        return
    import torch.distributed as dist
    if not all(os.environ.get(k) for k in ('MASTER_ADDR', 'MASTER_PORT')):
        raise UserInputError('--launcher torchrun: MASTER_ADDR and MASTER_PORT are not set (torchrun sets them)')
    if not dist.is_initialized():
        dist.init_process_group('gloo', timeout=timedelta(seconds=timeout_s))
    dist.barrier()
    dist.destroy_process_group()


def execute_todo(todo: list[dict], settings: Any) -> None:
    """The runs still to do, with a progress bar over runs.

    Args:
        settings: has ``launcher`` (``local`` or ``ray``; torchrun ranks run their share locally) and ``workers``.
    """
    if not todo:
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    launch = run_ray if settings.launcher == 'ray' else run_local
    progress = Progress(TextColumn('{task.description}'), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    task = progress.add_task('sweep runs', total=len(todo))

    def done(run: dict, result: dict) -> None:
        progress.console.print(f'  {run["label"]}: HOTA {100 * result["HOTA"]:.3f} in {result["seconds"]:.1f} s '
                               f'({run["id"]})')
        progress.advance(task)

    try:  # the display starts once the launcher has its workers (a local pool forks before the display's thread)
        launch(todo, settings.workers, done, progress.start)
    finally:
        progress.stop()
