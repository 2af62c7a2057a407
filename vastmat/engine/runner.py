"""The VastMAT runner: mmengine's ``Runner`` with weights-only checkpoints and distributed runs on CPU."""
from __future__ import annotations

from typing import Any

from mmengine.runner import Runner

from vastmat.registry import RUNNERS

from .checkpoint import install_safe_checkpoint_loader
from .dist import init_cpu_distributed, needs_cpu_distributed
from .hooks import PlainCheckpointHook


@RUNNERS.register_module()
class VastMATRunner(Runner):
    """``Runner`` that (1) writes checkpoints as plain data and loads every checkpoint with ``weights_only=True``,
    (2) runs distributed on machines without a GPU (gloo, ``device_ids=None``).

    Selected by ``runner_type = 'VastMATRunner'`` in ``configs/_base_/default_runtime.py``; everything else is
    mmengine's ``Runner``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        install_safe_checkpoint_loader()
        launcher = kwargs.get('launcher', 'none')
        if needs_cpu_distributed(launcher):
            init_cpu_distributed(launcher)
            if kwargs.get('model_wrapper_cfg') is None:
                # mmengine's default passes device_ids=[LOCAL_RANK], which means a CUDA device.
                kwargs['model_wrapper_cfg'] = dict(type='MMDistributedDataParallel', device_ids=None)
        super().__init__(*args, **kwargs)

    def register_hooks(self, default_hooks=None, custom_hooks=None) -> None:
        super().register_hooks(default_hooks, custom_hooks)
        if not any(isinstance(hook, PlainCheckpointHook) for hook in self._hooks):
            self.register_hook(PlainCheckpointHook())
