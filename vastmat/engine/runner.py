"""The VastMAT runner: mmengine's ``Runner`` with weights-only checkpoints and distributed runs on CPU."""
from __future__ import annotations

import copy
from typing import Any

from mmengine.config import Config
from mmengine.runner import Runner

from vastmat.registry import RUNNERS

from .checkpoint import install_safe_checkpoint_loader
from .dist import init_cpu_distributed, needs_cpu_distributed
from .hooks import PlainCheckpointHook


class FormattedOnceConfig(Config):
    """A ``Config`` that formats its ``pretty_text`` once. mmengine's ``Runner`` formats the whole config with yapf
    four times while it starts (the log, the dumped file, the visualizer's copy), about 0.8 s each for a detector
    config: most of the time of a short test run."""

    @property
    def pretty_text(self) -> str:
        text = self.__dict__.get('_vastmat_pretty_text')
        if text is None:
            text = super().pretty_text
            object.__setattr__(self, '_vastmat_pretty_text', text)  # Config's own __setattr__ writes config keys
        return text


@RUNNERS.register_module()
class VastMATRunner(Runner):
    """``Runner`` that (1) writes checkpoints as plain data and loads every checkpoint with ``weights_only=True``,
    (2) runs distributed on machines without a GPU (gloo, ``device_ids=None``), (3) formats its config once.

    Selected by ``runner_type = 'VastMATRunner'`` in ``configs/_base_/default_runtime.py``; everything else is
    mmengine's ``Runner``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        install_safe_checkpoint_loader()
        if isinstance(kwargs.get('cfg'), Config) and not isinstance(kwargs['cfg'], FormattedOnceConfig):
            kwargs['cfg'] = copy.deepcopy(kwargs['cfg'])
            object.__setattr__(kwargs['cfg'], '__class__', FormattedOnceConfig)  # Config.__setattr__ sets keys
        launcher = kwargs.get('launcher', 'none')
        if needs_cpu_distributed(launcher):
            init_cpu_distributed(launcher)
            # mmengine wraps the model with device_ids=[LOCAL_RANK], a CUDA device; on the CPU it must be None.
            # The wrapper is read from cfg.model_wrapper_cfg; the rest mirrors mmengine's default wrapper.
            cfg = copy.deepcopy(kwargs.get('cfg') or Config(dict()))
            wrapper = cfg.get('model_wrapper_cfg') or dict(
                type='MMDistributedDataParallel', broadcast_buffers=False,
                find_unused_parameters=cfg.get('find_unused_parameters', False))
            wrapper.setdefault('device_ids', None)
            cfg.model_wrapper_cfg = wrapper
            kwargs['cfg'] = cfg
        super().__init__(*args, **kwargs)

    def wrap_model(self, model_wrapper_cfg: dict | None, model: Any) -> Any:
        """As mmengine's, except that a model without trainable parameters (a tracker on cached detections) is not
        wrapped: DistributedDataParallel refuses such a model, and testing needs no gradient synchronisation."""
        import torch.distributed as torch_dist
        if torch_dist.is_available() and torch_dist.is_initialized() and not any(
                p.requires_grad for p in model.parameters()):
            return model
        return super().wrap_model(model_wrapper_cfg, model)

    def register_hooks(self, default_hooks=None, custom_hooks=None) -> None:
        super().register_hooks(default_hooks, custom_hooks)
        if not any(isinstance(hook, PlainCheckpointHook) for hook in self._hooks):
            self.register_hook(PlainCheckpointHook())
