"""Hooks the VastMAT runner always registers."""
from __future__ import annotations

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
    """A rich progress bar over the training iterations and the test samples (``custom_hooks``), for runs whose
    console log is quietened (the zoo benchmark): the full log still goes to the work dir."""

    priority = 'VERY_LOW'

    def __init__(self, description: str = '') -> None:
        self.description = description
        self._progress = None
        self._task = None

    def _start(self, label: str, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        self._progress = Progress(TextColumn('{task.description}'), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), transient=False)
        self._progress.start()
        self._task = self._progress.add_task(f'{self.description} {label}'.strip(), total=total)

    def _stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def before_train(self, runner) -> None:
        self._start('training', runner.max_iters - runner.iter)

    def after_train_iter(self, runner, batch_idx: int, data_batch=None, outputs=None) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=1)

    def after_train(self, runner) -> None:
        self._stop()

    def before_test_epoch(self, runner) -> None:
        self._start('testing', len(runner.test_dataloader))

    def after_test_iter(self, runner, batch_idx: int, data_batch=None, outputs=None) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=1)

    def after_test_epoch(self, runner, metrics=None) -> None:
        self._stop()
