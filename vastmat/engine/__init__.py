"""Runner, hooks, checkpoint safety and command-line helpers."""
from .checkpoint import (UnsafeCheckpointError, install_safe_checkpoint_loader, safe_load,
                         to_plain_checkpoint)
from .dist import close_distributed
from .hooks import PlainCheckpointHook, ProgressBarHook
from .optim_wrapper import SeparateClipOptimWrapper, SeparateClipOptimWrapperConstructor
from .runner import VastMATRunner
from .schedulers import WarmupFromOneOverN

install_safe_checkpoint_loader()

__all__ = ['close_distributed', 'UnsafeCheckpointError', 'safe_load', 'to_plain_checkpoint',
           'install_safe_checkpoint_loader',
           'PlainCheckpointHook', 'ProgressBarHook', 'SeparateClipOptimWrapper',
           'SeparateClipOptimWrapperConstructor', 'VastMATRunner', 'WarmupFromOneOverN']
