"""Hooks the VastMAT runner always registers."""
from __future__ import annotations

import time

from mmengine.hooks import Hook

from vastmat.registry import HOOKS

from .checkpoint import to_plain_checkpoint


@HOOKS.register_module()
class PlainCheckpointHook(Hook):
    """Make every saved checkpoint plain data, so that it loads with ``weights_only=True``.

    Runs with the lowest priority, after other hooks (e.g. EMA) have added their state. The message hub's
    ``HistoryBuffer`` objects are stored as tagged dicts and rebuilt by :func:`vastmat.engine.checkpoint.safe_load`.
    """

    priority = 'LOWEST'

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        to_plain_checkpoint(checkpoint)


@HOOKS.register_module()
class ProgressBarHook(Hook):
    """Progress over the training iterations and the test samples (``custom_hooks``), for runs whose console log is
    quietened (the zoo benchmark): the full log still goes to the work dir.

    On a terminal a rich progress bar; otherwise (a log file, CI) a plain line at the start, every
    ``line_seconds`` and at the end, with the count, the elapsed time and the time left at the current pace.
    """

    priority = 'VERY_LOW'

    def __init__(self, description: str = '', line_seconds: float = 30.0) -> None:
        self.description = description
        self.line_seconds = line_seconds
        self._progress = None
        self._task = None
        self._plain: dict | None = None

    def _start(self, label: str, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        label = f'{self.description} {label}'.strip()
        if not Console().is_terminal:
            now = time.perf_counter()
            self._plain = dict(label=label, total=total, done=0, start=now, last=now)
            print(f'{label}: 0/{total}', flush=True)
            return
        self._progress = Progress(TextColumn('{task.description}'), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), transient=False)
        self._progress.start()
        self._task = self._progress.add_task(label, total=total)

    def _advance(self) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=1)
        elif self._plain is not None:
            plain = self._plain
            plain['done'] += 1
            now = time.perf_counter()
            if now - plain['last'] >= self.line_seconds:
                plain['last'] = now
                self._print_plain(now)

    def _print_plain(self, now: float) -> None:
        plain = self._plain
        elapsed = now - plain['start']
        left = elapsed / plain['done'] * (plain['total'] - plain['done']) if plain['done'] else float('nan')
        print(f"{plain['label']}: {plain['done']}/{plain['total']}, {elapsed:.0f} s elapsed, about {left:.0f} s "
              'left', flush=True)

    def _stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if self._plain is not None:
            self._print_plain(time.perf_counter())
            self._plain = None

    def before_train(self, runner) -> None:
        self._start('training', runner.max_iters - runner.iter)

    def after_train_iter(self, runner, batch_idx: int, data_batch=None, outputs=None) -> None:
        self._advance()

    def after_train(self, runner) -> None:
        self._stop()

    def before_test_epoch(self, runner) -> None:
        self._start('testing', len(runner.test_dataloader))

    def after_test_iter(self, runner, batch_idx: int, data_batch=None, outputs=None) -> None:
        self._advance()

    def after_test_epoch(self, runner, metrics=None) -> None:
        self._stop()


@HOOKS.register_module()
class AdaptiveThreadsHook(Hook):
    """Keep CPU training fast when another process shares the cores: torch's intra-op threads busy-wait for each
    other, so a thread whose core is taken stalls all of them (measured on 2 cores, the demo YOLOX: 0.20 s an
    iteration with 2 threads alone, 0.86 s beside one busy process; with 1 thread 0.27 s and 0.28 s;
    ``OMP_WAIT_POLICY=PASSIVE`` made 2 threads slow alone, 0.50 s).

    Trains with ``max_threads`` threads and times windows of ``window`` iterations: when a window is slower than
    ``slowdown`` times the fastest one seen with ``max_threads``, it falls back to 1 thread, and every
    ``retry_every`` iterations it tries ``max_threads`` again for one window (kept if that window is fast again).
    CPU only; the thread count is restored after training.
    """

    priority = 'VERY_LOW'

    def __init__(self, max_threads: int | None = None, window: int = 10, slowdown: float = 1.8,
                 retry_every: int = 100) -> None:
        self.max_threads = max_threads
        self.window, self.slowdown, self.retry_every = window, slowdown, retry_every

    def before_train(self, runner) -> None:
        import torch
        self._restore = torch.get_num_threads()
        self.max_threads = self.max_threads or self._restore
        self._threads = self.max_threads
        self._best: float | None = None  # fastest window with max_threads (seconds an iteration)
        self._count, self._start, self._since_fallback = 0, time.perf_counter(), 0
        self.switches: list[tuple[int, int]] = []  # (iteration, threads) of every change

    def _set(self, runner, threads: int) -> None:
        import torch
        torch.set_num_threads(threads)
        self._threads = threads
        self.switches.append((runner.iter + 1, threads))
        runner.logger.info(f'AdaptiveThreadsHook: {threads} thread(s) from iteration {runner.iter + 1}')

    def after_train_iter(self, runner, batch_idx: int, data_batch=None, outputs=None) -> None:
        if self.max_threads <= 1:
            return
        self._count += 1
        if self._count < self.window:
            return
        pace = (time.perf_counter() - self._start) / self._count
        self._count, self._start = 0, time.perf_counter()
        if runner.iter < self.window:  # the first window warms up (allocations, caches)
            return
        if self._threads == self.max_threads:
            if self._best is None or pace < self._best:
                self._best = pace
            elif pace > self.slowdown * self._best:
                self._set(runner, 1)
                self._since_fallback = 0
        else:
            self._since_fallback += self.window
            if self._since_fallback >= self.retry_every:
                self._set(runner, self.max_threads)

    def after_train(self, runner) -> None:
        import torch
        torch.set_num_threads(self._restore)
