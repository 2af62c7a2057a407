#!/usr/bin/env python
"""Benchmark: training iterations per second and peak memory of full-size models, a few iterations each, through
the real runner, pipeline and optimizer of their configs (the GPU check of a model issue).

    python tools/benchmark/train_speed.py CONFIG [CONFIG ...] --data-root data/demo [--iters 20] [--warmup 5]
        [--amp] [--out work_dirs/train_speed.json]

Each config trains ``--warmup`` + ``--iters`` iterations on its own training pipeline and batch size (per GPU) from
``--data-root`` (any VastMAT root: the demo data is enough, its frames are resized to the config's input size), with
validation and checkpoints off, in a temporary work dir. Reported per config: iterations/s and samples/s (a sample
is one item of the batch: a frame, a key / reference pair for QDTrack, a clip of 30 frames for MOTIP) over the timed
iterations (after the warm-up; the GPU synchronised around them), peak memory (``torch.cuda.max_memory_allocated`` of the timed iterations on a GPU; on
a CPU the process's peak resident set so far, which includes earlier configs: give one config per run), parameters,
and the last losses. The table is printed and the numbers saved as JSON. On a CPU the same runs are a (slow) smoke
test of the configs.
"""
from __future__ import annotations

import argparse
import os.path as osp
import resource
import tempfile
import time
from typing import Any

import torch
from mmengine.config import Config
from mmengine.hooks import Hook
from rich.console import Console
from rich.table import Table

from vastmat.engine.cli import build_quiet_runner
from vastmat.utils.io import write_json_atomic

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
                parameters=sum(p.numel() for p in model.parameters()), device=_device(), losses=timer.losses)


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


def _device() -> str:
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else f'CPU ({torch.get_num_threads()} threads)'


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('configs', nargs='+')
    parser.add_argument('--data-root', default='data/demo', help='a VastMAT root with a protocol1 train split')
    parser.add_argument('--iters', type=int, default=20, help='timed iterations')
    parser.add_argument('--warmup', type=int, default=5, help='iterations before timing starts')
    parser.add_argument('--amp', action='store_true', help='automatic mixed precision')
    parser.add_argument('--out', help='JSON file for the results')
    args = parser.parse_args(argv)
    if args.iters < 1 or args.warmup < 0:
        parser.error('--iters must be >= 1 and --warmup >= 0')
    results = []
    console = Console()
    for config in args.configs:
        console.print(f'[bold]{config}[/]: {args.warmup} + {args.iters} iterations on {_device()}')
        results.append(benchmark(config, args.data_root, args.iters, args.warmup, args.amp))
    table = Table(title='Training speed')
    for column in ('config', 'batch', 'iter/s', 'samples/s', 'peak memory (GiB)', 'parameters', 'device'):
        table.add_column(column, justify='left' if column in ('config', 'device') else 'right')
    for r in results:
        table.add_row(osp.basename(r['config']), str(r['batch_size']), f"{r['iters_per_s']:.2f}",
                      f"{r['samples_per_s']:.1f}", f"{r['peak_memory_gib']:.2f}", f"{r['parameters']:,}", r['device'])
    console.print(table)
    if args.out:
        write_json_atomic(results, args.out)
    return results


if __name__ == '__main__':
    main()
