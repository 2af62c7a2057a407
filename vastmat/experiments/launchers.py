"""Where the experiments' tasks run: a sweep's runs, a tuning's trials, the zoo's members. One module for all three.

``local``: this process (one worker) or a pool of ``workers`` forked processes (they inherit the imports; each ends
when the process that started it is gone). ``ray``: remote tasks, one CPU each, on the ray this process is connected
to, else the cluster of ``RAY_ADDRESS`` when it is set (its workers must import vastmat and see the same paths), else
a local ray with ``workers`` CPUs; a task whose worker dies is run again by ray. ``torchrun``: each rank takes its
share (:func:`rank_share`) and runs it locally; :func:`torchrun_barrier` waits for the others.

Every launcher keeps at most ``workers`` tasks in flight and pulls the next task when one ends, so a caller can decide
what to run next from what has finished (the tuner's trials); :func:`run_tasks` runs a fixed list.
"""
from __future__ import annotations

import multiprocessing
import os
import threading
import time
from datetime import timedelta
from typing import Any, Callable, Iterable

from vastmat.utils.errors import UserInputError

LAUNCHERS = ('local', 'ray', 'torchrun')
Done = Callable[[Any, Any], None]  # done(task, result), in the calling process, as each task ends
NextTask = Callable[[], Any]  # the next task to start, or None for none now


def _exit_with_parent(parent: int) -> None:
    """End this process when the process that started it is gone (a killed tool leaves no worker running tasks):
    a daemon thread that watches the parent's pid."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)
    threading.Thread(target=watch, daemon=True).start()


def _worker_init(parent: int) -> None:
    """A local worker process: one thread (the workers already fill the cores), ended with its parent."""
    import torch
    torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    _exit_with_parent(parent)


def _failed(exc: BaseException, note: str) -> BaseException:
    exc.add_note(note)
    return exc


def _serial(fn: Callable[[Any], Any], next_task: NextTask, done: Done, started: Callable[[], Any],
            describe: Callable[[Any], str]) -> None:
    started()
    while (task := next_task()) is not None:
        try:
            result = fn(task)
        except Exception as exc:
            raise _failed(exc, describe(task))
        done(task, result)


def _in_flight(submit: Callable[[Any], Any], wait_one: Callable[[list], Any], result_of: Callable[[Any], Any],
               cancel: Callable[[list], None], next_task: NextTask, workers: int, done: Done,
               started: Callable[[], Any], describe: Callable[[Any], str]) -> None:
    """The loop of the pool and of ray: ``workers`` tasks in flight (``submit(task)`` gives a handle), the next
    pulled as one ends (``wait_one(handles)``, ``result_of(handle)``); a failure cancels the others."""
    pending: dict[Any, Any] = {}

    def fill() -> None:
        while len(pending) < workers and (task := next_task()) is not None:
            pending[submit(task)] = task
    fill()
    started()
    while pending:
        handle = wait_one(list(pending))
        task = pending.pop(handle)
        try:
            result = result_of(handle)
        except Exception as exc:
            cancel(list(pending))
            raise _failed(exc, describe(task))
        done(task, result)
        fill()


def _pool(fn: Callable[[Any], Any], next_task: NextTask, workers: int, done: Done, started: Callable[[], Any],
          describe: Callable[[Any], str]) -> None:
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # fork: the workers inherit the imports (torch, mmdet and the registries), no second start-up each
    method = 'fork' if 'fork' in multiprocessing.get_all_start_methods() else None
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                             initializer=_worker_init, initargs=(os.getpid(), )) as pool:
        _in_flight(lambda task: pool.submit(fn, task),
                   lambda futures: next(iter(wait(futures, return_when=FIRST_COMPLETED)[0])),
                   lambda future: future.result(), lambda _: pool.shutdown(wait=True, cancel_futures=True),
                   next_task, workers, done, started, describe)


def _ray(fn: Callable[[Any], Any], next_task: NextTask, workers: int, done: Done, started: Callable[[], Any],
         describe: Callable[[Any], str]) -> None:
    ray = connect_ray(workers)
    remote = ray.remote(num_cpus=1)(fn)

    def cancel(refs: list) -> None:
        for ref in refs:
            ray.cancel(ref)
    _in_flight(remote.remote, lambda refs: ray.wait(refs, num_returns=1)[0][0], ray.get, cancel, next_task, workers,
               done, started, describe)


def run_pulled(fn: Callable[[Any], Any], next_task: NextTask, launcher: str, workers: int, done: Done,
               started: Callable[[], Any] = lambda: None, describe: Callable[[Any], str] = repr) -> None:
    """``fn(task)`` for the tasks ``next_task()`` gives, at most ``workers`` at a time, ``done(task, result)`` here as
    each ends; ``next_task`` is asked again whenever a worker is free, and the launcher ends once it gives None with
    nothing in flight. ``started()`` once the workers exist. A failing task stops the others and raises its error
    with the note ``describe(task)``.

    Args:
        fn: a module-level function (it is pickled for the workers).
        launcher: ``local`` or ``ray`` (a torchrun rank runs its share with ``local``).
    """
    if launcher == 'ray':
        _ray(fn, next_task, max(workers, 1), done, started, describe)
    elif workers <= 1:
        _serial(fn, next_task, done, started, describe)
    else:
        _pool(fn, next_task, workers, done, started, describe)


def run_tasks(fn: Callable[[Any], Any], tasks: Iterable[Any], launcher: str, workers: int, done: Done,
              started: Callable[[], Any] = lambda: None, describe: Callable[[Any], str] = repr) -> None:
    """``fn(task)`` for each of ``tasks`` (in order, at most ``workers`` at a time); as :func:`run_pulled`."""
    tasks = list(tasks)
    pending = iter(tasks)
    run_pulled(fn, lambda: next(pending, None), launcher, min(workers, max(len(tasks), 1)), done, started, describe)


def import_ray(flag: str = '--launcher ray') -> Any:
    """The ``ray`` module (the optional extra ``vastmat[ray]``)."""
    try:
        import ray
    except ImportError:
        raise UserInputError(f'{flag}: ray is not installed (pip install -r requirements/ray.txt)') from None
    return ray


def connect_ray(workers: int) -> Any:
    """The ray this process is connected to; else the cluster of ``RAY_ADDRESS``; else a new local ray with
    ``workers`` CPUs."""
    ray = import_ray()
    if not ray.is_initialized():
        address = os.environ.get('RAY_ADDRESS')
        try:
            if address:
                ray.init(address='auto', log_to_driver=False)
            else:
                ray.init(address='local', num_cpus=max(workers, 1), include_dashboard=False, log_to_driver=False)
        except ConnectionError as exc:
            raise UserInputError(f'--launcher ray: RAY_ADDRESS={address}: {exc}') from None
    return ray


def ray_nodes(workers: int) -> int:
    """The number of alive nodes of the ray :func:`connect_ray` connects to."""
    ray = connect_ray(workers)
    return sum(1 for node in ray.nodes() if node.get('Alive'))


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
