"""Training speed of a config through its real runner, pipeline and optimizer (``tools/benchmark/train_speed.py``):
iterations/s, samples/s, peak memory, parameters and the last losses of a few timed iterations."""
from __future__ import annotations

import os.path as osp
import resource
import tempfile
import time
from typing import Any

import torch
from mmengine.config import Config
from mmengine.hooks import Hook

from vastmat.engine.cli import build_quiet_runner

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))


class IterationTimer(Hook):
    """Times the training iterations after ``warmup`` and records the peak memory and the last losses."""

    priority = 'VERY_LOW'

    def __init__(self, warmup: int) -> None:
        self.warmup, self.start, self.timed, self.losses = warmup, None, 0, {}

    @staticmethod
    def _sync() -> None:
        if torch.cuda.is_available():
            torch.cuda.synchronize()

    def before_train_iter(self, runner, batch_idx: int, data_batch: Any = None) -> None:
        if runner.iter == self.warmup:
            self._sync()
            if torch.cuda.is_available():
                torch.cuda.reset_peak_memory_stats()
            self.start = time.perf_counter()

    def after_train_iter(self, runner, batch_idx: int, data_batch: Any = None, outputs: Any = None) -> None:
        if self.start is not None:
            self.timed += 1
        self.losses = {k: v.detach().item() for k, v in (outputs or {}).items() if torch.is_tensor(v) and v.numel() == 1}

    def elapsed(self) -> float:
        self._sync()
        return time.perf_counter() - self.start


def set_data_root(dataset: dict, root: str) -> None:
    """Point a training dataset config (also one wrapped by MultiImageMixDataset etc.) at ``root``."""
    if 'data_root' in dataset:
        dataset['data_root'] = root
    if isinstance(dataset.get('dataset'), dict):
        set_data_root(dataset['dataset'], root)


def benchmark(config: str, data_root: str, iters: int, warmup: int, amp: bool) -> dict:
    """Train ``warmup + iters`` iterations of ``config``; returns its speed and memory."""
    cfg = Config.fromfile(config)
    root = data_root.rstrip('/') + '/'
    set_data_root(cfg.train_dataloader.dataset, root)
    cfg.train_dataloader.num_workers = min(cfg.train_dataloader.get('num_workers', 2), 4)
    cfg.train_dataloader.persistent_workers = cfg.train_dataloader.num_workers > 0
    cfg.train_cfg = dict(type='IterBasedTrainLoop', max_iters=warmup + iters, val_interval=10 ** 9)
    for key in ('val_dataloader', 'val_evaluator', 'val_cfg', 'test_dataloader', 'test_evaluator', 'test_cfg'):
        cfg.pop(key, None)
    cfg.param_scheduler = []
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=10 ** 9, by_epoch=False, save_last=False)
    cfg.default_hooks.logger = dict(type='LoggerHook', interval=10 ** 9)
    cfg.custom_hooks = []
    cfg.log_processor = dict(by_epoch=False)
    cfg.load_from, cfg.resume = None, False
    _drop_pretrained(cfg.model)
    if amp:
        cfg.optim_wrapper.type = 'AmpOptimWrapper'
        cfg.optim_wrapper.loss_scale = 'dynamic'
    with tempfile.TemporaryDirectory() as work_dir:
        cfg.work_dir = work_dir
        runner = build_quiet_runner(cfg)
        timer = IterationTimer(warmup)
        runner.register_hook(timer)
        runner.train()
        seconds = timer.elapsed()
    model = runner.model.module if hasattr(runner.model, 'module') else runner.model
    batch = cfg.train_dataloader.batch_size
    peak = (torch.cuda.max_memory_allocated() if torch.cuda.is_available()
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    return dict(config=osp.relpath(config, REPO) if config.startswith(REPO) else config, batch_size=batch,
                iters=timer.timed, seconds=seconds, iters_per_s=timer.timed / seconds,
                samples_per_s=timer.timed * batch / seconds, peak_memory_gib=peak / 2 ** 30,
                peak_memory_kind='cuda max_memory_allocated' if torch.cuda.is_available() else 'process peak RSS',
                parameters=sum(p.numel() for p in model.parameters()), device=device_name(), losses=timer.losses)


def _drop_pretrained(node: Any) -> None:
    """Remove downloads of pretrained weights (init_cfg Pretrained with a URL): speed does not depend on them and
    the machine may be offline."""
    if isinstance(node, dict):
        init = node.get('init_cfg')
        if isinstance(init, dict) and init.get('type') == 'Pretrained' and '://' in str(init.get('checkpoint')):
            node['init_cfg'] = None
        for value in node.values():
            _drop_pretrained(value)
    elif isinstance(node, list):
        for value in node:
            _drop_pretrained(value)


def device_name() -> str:
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else f'CPU ({torch.get_num_threads()} threads)'
