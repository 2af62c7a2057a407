"""Learning-rate schedules of the official codes that mmengine's schedulers do not express as configs."""
from __future__ import annotations

from mmengine.optim.scheduler import LinearLR

from vastmat.registry import PARAM_SCHEDULERS


@PARAM_SCHEDULERS.register_module()
class WarmupFromOneOverN(LinearLR):
    """A linear warm-up over ``N = end - begin`` steps from ``lr / N`` at the first step to ``lr`` at step ``N - 1``:
    MOTIP's ``lr_warmup`` (``lr * (i + 1) / N``, N the iterations of its warm-up epochs). mmengine's ``LinearLR``
    takes a fixed ``start_factor``; N is known only once ``convert_to_iter_based`` has turned the epochs into
    iterations, which happens before this ``__init__`` (``build_iter_from_epoch``)."""

    def __init__(self, optimizer, begin: int = 0, end: int = 1, **kwargs) -> None:
        super().__init__(optimizer, start_factor=1.0 / (end - begin), end_factor=1.0, begin=begin, end=end, **kwargs)
