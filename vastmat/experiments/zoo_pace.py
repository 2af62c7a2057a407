"""This machine's pace on the zoo's work, measured before the zoo plans (:mod:`.zoo_plan`): a few timed training
iterations of every config it is about to train, against the same probe on the build machine.

A config's ``zoo_seconds_per_iter`` is its pace in ``make demo`` on the build machine, and its
``zoo_probe_seconds_per_iter`` the pace of :func:`probe_seconds_per_iter` there. Here the same probe gives this
machine's factor for that config (seconds here / seconds there), which scales its training in the plan; the median
factor scales the tests, the detections and the report. The probe is the real training step (the data pipeline,
the forward and backward passes, the optimiser step) at one thread, two probes at a time on 2 cores (as the
trainings run: two workers side by side), from the config's own seed; it leaves
out the hooks and the start weights (a start checkpoint may not be trained yet), which cost the same on every
machine and so cancel in the factor. Model kinds slow down differently on another CPU (on an AVX2-only Zen 3 the
demo YOLOX took 2.0 times its plan and FairMOT 1.5 times): one factor a config.
"""
from __future__ import annotations

import copy
import logging
import os.path as osp
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from mmengine.config import Config

PROBE_ITERS = 6  # timed iterations
PROBE_WARMUP = 2  # untimed first iterations (lazy allocations, the first kernels of each input shape)
MIN_PROBED_ITERS = 10 * (PROBE_ITERS + PROBE_WARMUP)  # a shorter training is not worth its probe (tests: 2)


@dataclass
class MachinePace:
    """This machine's seconds against the build machine's: ``factors`` by config path (measured), ``probe_seconds``
    the probe's time."""

    factors: dict[str, float] = field(default_factory=dict)
    probe_seconds: float = 0.0

    @property
    def typical(self) -> float:
        """The median factor (1: nothing measured), for the work no config's probe covers (tests, detections)."""
        return statistics.median(self.factors.values()) if self.factors else 1.0

    def of(self, config: str) -> float:
        """The factor of ``config``'s training (the typical one where it was not measured)."""
        return self.factors.get(config, self.typical)

    def describe(self) -> str:
        if not self.factors:
            return "the build machine's pace (nothing measured)"
        low, high = min(self.factors.values()), max(self.factors.values())
        return (f'this machine measured at x{low:.2f}' + (f' to x{high:.2f}' if high > low else '')
                + f" of the build machine's time on {len(self.factors)} training(s), in {self.probe_seconds:.0f} s")


def _without_start_weights(node: Any) -> Any:
    """``node`` less every ``Pretrained`` init_cfg (a start checkpoint that may not be trained yet)."""
    if isinstance(node, dict):
        return {key: _without_start_weights(value) for key, value in node.items()
                if not (key == 'init_cfg' and isinstance(value, dict) and value.get('type') == 'Pretrained')}
    if isinstance(node, (list, tuple)):
        return type(node)(_without_start_weights(value) for value in node)
    return node


def probe_seconds_per_iter(cfg: Config, iters: int = PROBE_ITERS, warmup: int = PROBE_WARMUP) -> float:
    """Seconds of one training iteration of ``cfg`` (a zoo training config) at one thread: the mean of ``iters``
    timed iterations after ``warmup`` untimed ones, from the config's seed, without its start weights. Its runner's
    log lies in ``cfg.work_dir/pace``."""
    from vastmat.engine.runner_builder import build_quiet_runner
    from vastmat.utils.threads import torch_threads
    cfg = Config(_without_start_weights(cfg.to_dict()), filename=cfg.filename)
    cfg.load_from = None
    cfg.resume = False
    cfg.custom_hooks = []
    cfg.work_dir = osp.join(cfg.work_dir, 'pace')
    with torch_threads(1):
        runner = build_quiet_runner(copy.deepcopy(cfg))
        model = runner.model
        model.train()
        level = runner.logger.level
        runner.logger.setLevel(logging.ERROR)  # not a warning for every frozen parameter
        optim_wrapper = runner.build_optim_wrapper(cfg.optim_wrapper)
        runner.logger.setLevel(level)
        batches = iter(runner.build_dataloader(cfg.train_dataloader, seed=runner.seed))
        for step in range(warmup + iters):
            if step == warmup:
                start = time.perf_counter()
            model.train_step(next(batches), optim_wrapper=optim_wrapper)
        return (time.perf_counter() - start) / iters


def _probe(item: tuple[str, dict, str]) -> tuple[str, float]:
    """:func:`probe_seconds_per_iter` of one ``(config path, its config as a dict, its file name)`` in a worker."""
    path, settings, filename = item
    return path, probe_seconds_per_iter(Config(settings, filename=filename))


def probe_configs(configs: dict[str, Config], workers: int = 2) -> dict[str, float]:
    """``{config path: seconds an iteration}`` of each of ``configs`` ({config path: its zoo training config}),
    probed ``workers`` at a time, each in a process at one thread (as the zoo's trainings run)."""
    from .launchers import run_tasks
    seconds = {}
    items = [(path, cfg.to_dict(), cfg.filename) for path, cfg in configs.items()]
    run_tasks(_probe, items, 'local', workers, lambda item, reply: seconds.update([reply]),
              describe=lambda item: f'in the pace probe of {item[0]}')
    return {path: seconds[path] for path in configs}


def measure_pace(configs: dict[str, Config], workers: int = 2) -> MachinePace:
    """This machine's factor of each of ``configs`` ({config path: its zoo training config}) that names its
    ``zoo_probe_seconds_per_iter`` and trains :data:`MIN_PROBED_ITERS` iterations or more, ``workers`` probes at a
    time (the build machine's were measured so: ``tools/benchmark/zoo_pace.py``)."""
    start = time.perf_counter()
    probed = {path: cfg for path, cfg in configs.items() if cfg.get('zoo_probe_seconds_per_iter')
              and cfg.train_cfg.get('max_iters', 0) >= MIN_PROBED_ITERS}
    seconds = probe_configs(probed, workers) if probed else {}
    return MachinePace({path: seconds[path] / cfg.zoo_probe_seconds_per_iter for path, cfg in probed.items()},
                       time.perf_counter() - start)
