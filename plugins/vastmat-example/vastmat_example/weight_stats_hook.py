"""A hook that logs the global L2 norm and the largest absolute value of the model's weights."""
import torch
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper

from vastmat.registry import HOOKS


@HOOKS.register_module()
class WeightStatsHook(Hook):
    """Every ``interval`` training iterations, put ``weight_norm`` and ``weight_absmax`` into the message hub (and so
    into the training log): a cheap way to see weights diverge or collapse.

    Args:
        interval: iterations between two measurements.
    """

    priority = 'BELOW_NORMAL'

    def __init__(self, interval: int = 50) -> None:
        if interval < 1:
            raise ValueError(f'WeightStatsHook: interval must be >= 1, got {interval}')
        self.interval = interval

    @staticmethod
    def weight_stats(model: torch.nn.Module) -> dict:
        """The global L2 norm and the largest absolute value over all parameters."""
        if is_model_wrapper(model):
            model = model.module
        params = [p.detach() for p in model.parameters()]
        if not params:
            return dict(weight_norm=0.0, weight_absmax=0.0)
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p) for p in params]))
        absmax = torch.stack([p.abs().max() for p in params]).max()
        return dict(weight_norm=float(norm), weight_absmax=float(absmax))

    def after_train_iter(self, runner, batch_idx: int, data_batch=None, outputs=None) -> None:
        if self.every_n_train_iters(runner, self.interval):
            for name, value in self.weight_stats(runner.model).items():
                runner.message_hub.update_scalar(f'train/{name}', value)
