"""Building runners from configs, for the tools and for library code that trains or tests in-process (the zoo, the
benchmarks): the runner named by ``runner_type``, a quiet variant for tools that show their own progress, and
mixed precision.

The only state is the count of runners a :class:`RunnerBuilder` has built, held by that object: mmengine keys its
logger and visualizer by name, the experiment name (with a timestamp in seconds) and the config's visualizer name
(mmdet's default runtime: 'visualizer'), and hands a runner the instance of that name made first in the process, which
writes to the first run's ``vis_data``; so each runner gets names of its own. :data:`RUNNER_BUILDER` is the
process's builder, and :func:`build_runner` / :func:`build_quiet_runner` are its methods.
"""
from __future__ import annotations

import logging
import os.path as osp

from mmengine.config import Config
from mmengine.runner import Runner


class RunnerBuilder:
    """Builds runners and counts them (``built``), so that each runner in a process gets its own visualizer and
    each runner after the first its own experiment name (the module docstring says why)."""

    def __init__(self) -> None:
        self.built = 0

    def build(self, cfg: Config) -> Runner:
        """Build the runner named by ``runner_type`` (VastMAT's configs use ``VastMATRunner``); a config without
        one gets mmengine's ``Runner``."""
        import vastmat.engine  # noqa: F401  (safe checkpoint loading, the runner and its hooks)
        from vastmat.registry import RUNNERS  # looked up from our registry: mmengine's root knows no default scope yet
        if self.built and cfg.get('experiment_name') is None:
            cfg.experiment_name = f'{osp.splitext(osp.basename(cfg.filename or "run"))[0]}_run{self.built}'
        if isinstance(cfg.get('visualizer'), dict):
            cfg.visualizer.name = f'{cfg.visualizer.get("name") or "visualizer"}_run{self.built}'
        self.built += 1
        if 'runner_type' not in cfg:
            return Runner.from_cfg(cfg)
        return RUNNERS.build(cfg)

    def build_quiet(self, cfg: Config) -> Runner:
        """:meth:`build` whose console shows only warnings and errors (no config dump, no hook list, no
        per-iteration lines): for tools that show their own progress. The log file in the work dir keeps the
        training and test lines (the config is in the work dir's dumped config file)."""
        cfg.log_level = 'WARNING'
        runner = self.build(cfg)
        for handler in runner.logger.handlers:
            if isinstance(handler, logging.FileHandler):
                handler.setLevel(logging.INFO)
        return runner


RUNNER_BUILDER = RunnerBuilder()
build_runner = RUNNER_BUILDER.build
build_quiet_runner = RUNNER_BUILDER.build_quiet


def enable_amp(cfg: Config) -> None:
    """Automatic mixed precision training (``tools/train.py --amp``, as MMDetection's): ``AmpOptimWrapper`` with a
    dynamic loss scale around the config's optimizer."""
    cfg.optim_wrapper.type = 'AmpOptimWrapper'
    cfg.optim_wrapper.loss_scale = 'dynamic'
