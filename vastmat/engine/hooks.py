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
