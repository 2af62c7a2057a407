"""Gradient clipping per part of a model (MOTIP's ``SEPARATE_CLIP_NORM``): mmengine's ``OptimWrapper`` clips the
norm of all gradients together; MOTIP clips the DETR's gradients and the rest's separately, each to ``max_norm``."""
from __future__ import annotations

from typing import Sequence

from mmengine.optim import DefaultOptimWrapperConstructor, OptimWrapper
from torch import nn

from vastmat.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIM_WRAPPERS


@OPTIM_WRAPPERS.register_module()
class SeparateClipOptimWrapper(OptimWrapper):
    """``OptimWrapper`` whose ``clip_grad`` applies to each parameter set on its own: the parameters whose name
    starts with each of ``clip_prefixes`` (one set per prefix), and all the others. Built by
    :class:`SeparateClipOptimWrapperConstructor`, which knows the names.

    Args:
        clip_prefixes: parameter-name prefixes of the sets, e.g. ``['detector.']`` (MOTIP: the DETR, then the
            trajectory modelling and ID decoder).
        *args, **kwargs: ``OptimWrapper`` arguments; ``clip_grad`` is required.
    """

    def __init__(self, *args, clip_prefixes: Sequence[str] = ('detector.',), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not hasattr(self, 'clip_grad_kwargs'):
            raise ValueError('SeparateClipOptimWrapper: optim_wrapper.clip_grad is required (e.g. dict(max_norm=0.1))')
        self.clip_prefixes = tuple(clip_prefixes)
        self.clip_sets: list[list[nn.Parameter]] | None = None

    def bind_parameters(self, model: nn.Module) -> None:
        """Split ``model``'s trainable parameters into the clipping sets."""
        sets: list[list[nn.Parameter]] = [[] for _ in range(len(self.clip_prefixes) + 1)]
        for name, param in model.named_parameters():
            if not param.requires_grad:
                continue
            index = next((i for i, prefix in enumerate(self.clip_prefixes) if name.startswith(prefix)),
                         len(self.clip_prefixes))
            sets[index].append(param)
        for prefix, params in zip(self.clip_prefixes, sets):
            if not params:
                raise ValueError(f'SeparateClipOptimWrapper: no trainable parameter name starts with {prefix!r} '
                                 '(optim_wrapper.clip_prefixes)')
        self.clip_sets = sets

    def _clip_grad(self) -> None:
        if self.clip_sets is None:
            raise RuntimeError('SeparateClipOptimWrapper: parameters not bound; build it with '
                               "constructor='SeparateClipOptimWrapperConstructor'")
        names = [*self.clip_prefixes, 'other']
        for name, params in zip(names, self.clip_sets):
            params = [p for p in params if p.grad is not None]
            if params:
                grad = self.clip_func(params, **self.clip_grad_kwargs)
                if grad is not None:
                    self.message_hub.update_scalar(f'train/{self.grad_name}_{name.rstrip(".")}', float(grad))


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class SeparateClipOptimWrapperConstructor(DefaultOptimWrapperConstructor):
    """mmengine's default constructor (``paramwise_cfg`` and all), then binds the model's parameter names to a
    :class:`SeparateClipOptimWrapper`."""

    def __call__(self, model: nn.Module) -> OptimWrapper:
        wrapper = super().__call__(model)
        if not isinstance(wrapper, SeparateClipOptimWrapper):
            raise TypeError("SeparateClipOptimWrapperConstructor builds optim_wrapper type='SeparateClipOptimWrapper', "
                            f'got {type(wrapper).__name__}')
        wrapper.bind_parameters(model.module if hasattr(model, 'module') else model)
        return wrapper
