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
