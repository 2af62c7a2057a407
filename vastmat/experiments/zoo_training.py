"""The trainings of the model zoo on a VastMAT root (the demo data by default); their tests are in
:mod:`.zoo_testing`.

Every learned part of the zoo (the detector, a ReID model, D2MP, the joint and end-to-end models) is trained once by
:func:`train_once`, in a work dir named by a hash of what it trains (its resolved config less where it runs; the data
and the checkpoints it starts from by their contents), and reused by every later run with the same settings. Checkpoints
are kept at evenly spaced iterations, so that the zoo can score a model against its training time (HOTA at the first
checkpoint beside the last: training did it).
"""
from __future__ import annotations

import copy
import glob
import hashlib
import json
import os
import os.path as osp
import re
import time
from dataclasses import dataclass
from typing import Any

from mmengine.config import Config

from vastmat.engine.config_options import point_datasets
from vastmat.utils.io import once_per_file_version, write_json_atomic

RECORD = 'zoo_training.json'  # written last in a training's work dir: its presence marks a finished training
RUN_HOOKS = ('ProgressBarHook', 'AdaptiveThreadsHook')  # how a run is shown and paced, not what it learns
# the display estimate's paces; test thresholds and their calibration grids
UNTRAINED_KEYS = ('zoo_seconds_per_iter', 'zoo_probe_seconds_per_iter', 'zoo_official_thresholds',
                  'zoo_threshold_scales')
# The settings that pick torch's, oneDNN's and MKL's CPU kernels: float32 sums round differently under each
# (DESIGN.md 7), so a training made under one is not the training of another; part of a training's identity.
KERNEL_VARIABLES = ('ATEN_CPU_CAPABILITY', 'ONEDNN_MAX_CPU_ISA', 'MKL_ENABLE_INSTRUCTIONS')


@dataclass
class Training:
    """A finished training: its work dir, checkpoints ``[(iteration, path), ...]`` in order (the last is the
    trained model), its wall time and length, and whether this run trained it or found it; ``earlier_seconds``: the
    wall time of the earlier stages it starts from (a zoo config's ``zoo_load_from`` chain)."""

    work_dir: str
    checkpoints: list[tuple[int, str]]
    seconds: float
    max_iters: int
    reused: bool
    earlier_seconds: float = 0.0

    @property
    def checkpoint(self) -> str:
        return self.checkpoints[-1][1]

    @property
    def total_seconds(self) -> float:
        """The wall time of this stage and the earlier ones."""
        return self.earlier_seconds + self.seconds

    def minutes(self, iteration: int) -> float:
        """Training minutes up to ``iteration``, the earlier stages included (the pace is even: the wall time
        shared by iterations)."""
        return (self.earlier_seconds + self.seconds * iteration / self.max_iters) / 60


def read_config(path: str) -> Config:
    """``Config.fromfile(path)``, read once per version of the file in this process (a copy each call): a zoo run
    resolves each of its configs tens of times, at 0.03 to 0.15 s a read of a config's chain of bases. A base file
    edited while the process runs is not seen until the config file itself changes."""
    return copy.deepcopy(_read_config_once(path))


@once_per_file_version()
def _read_config_once(path: str) -> Config:
    return Config.fromfile(path)


def zoo_config(config: str | Config, data_root: str, protocol: str, work_dir: str, label: str,
               adaptive_threads: bool = False, seed: int | None = None, held_out: str | None = None) -> Config:
    """A config on ``data_root``'s ``protocol`` splits (every dataset that names a data root, D2MP's trajectory windows
    and the ReID datasets included: :func:`~vastmat.engine.config_options.point_datasets`), with a progress hook
    labelled ``label`` and no launcher; ``seed``: its ``randomness`` seed (None: the config's); ``held_out``: a split
    whose videos every training leaves out (the dev videos the zoo chooses its test thresholds on: :func:`hold_out`).
    ``adaptive_threads``: the AdaptiveThreadsHook, for runs that share the cores with others; off, training keeps one
    thread count and is reproducible (a switch changes the order of floating-point sums: the zoo's MOTIP ended at HOTA
    23.7 without a switch and 18.1 with four, while two runs at a fixed count gave equal weights)."""
    cfg = read_config(config) if isinstance(config, str) else copy.deepcopy(config)
    for key in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        loader = cfg.get(key)
        if not loader:
            continue
        point_datasets(loader, data_root, protocol, every_dataset=True)
    if held_out is not None and cfg.get('train_dataloader'):
        hold_out(cfg.train_dataloader, held_out)
    cfg.work_dir = work_dir
    cfg.launcher = 'none'
    if seed is not None:
        cfg.randomness = dict(cfg.get('randomness') or {}, seed=seed)
    cfg.custom_hooks = [h for h in cfg.get('custom_hooks') or [] if h.get('type') not in RUN_HOOKS] + [
        dict(type='ProgressBarHook', description=f'  {label}')] + (
        [dict(type='AdaptiveThreadsHook')] if adaptive_threads else [])
    return cfg


def hold_out(node: Any, split: str) -> int:
    """Every dataset of a config node that reads the ``train`` split reads it less ``split``'s videos
    (:func:`~vastmat.datasets.sequences.held_out`); returns how many."""
    from vastmat.datasets.sequences import held_out
    changed = 0
    if isinstance(node, dict):
        if node.get('split') == 'train':
            node['split'] = held_out('train', split)
            changed += 1
        changed += sum(hold_out(value, split) for value in node.values())
    elif isinstance(node, (list, tuple)):
        changed += sum(hold_out(value, split) for value in node)
    return changed


def set_schedule(cfg: Config, iters: int | None, num_checkpoints: int) -> int:
    """Train for ``iters`` iterations (None: the config's; the schedulers are cut to fit) and keep
    ``num_checkpoints`` evenly spaced checkpoints, the last at the end; no validation. Returns the length.

    Raises:
        ValueError: the config trains by epochs.
    """
    if 'max_iters' not in cfg.train_cfg:
        raise ValueError(f'{cfg.filename}: the zoo trains by iterations, but train_cfg has no max_iters')
    if iters is not None:
        cfg.train_cfg.max_iters = iters
        for scheduler in cfg.get('param_scheduler') or []:
            scheduler['end'] = min(scheduler.get('end', iters), iters)
            scheduler['begin'] = min(scheduler.get('begin', 0), iters - 1)
    length = cfg.train_cfg.max_iters
    cfg.train_cfg.val_interval = length + 1
    interval = -(-length // max(1, min(num_checkpoints, length)))  # ceil: the last one at the end (save_last)
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=interval, by_epoch=False, save_last=True,
                                        max_keep_ckpts=-1)
    return length


def _training_settings(node: Any) -> Any:
    """``node`` less what only testing reads: ``test_cfg`` entries and a tracker's own scalar settings (its
    thresholds; its learned modules, dicts, stay whole)."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == 'test_cfg':
                continue
            if key == 'tracker' and isinstance(value, dict):
                value = {k: v for k, v in value.items() if k == 'type' or isinstance(v, (dict, list, tuple))}
            out[key] = _training_settings(value)
        return out
    if isinstance(node, (list, tuple)):
        return [_training_settings(value) for value in node]
    return node


def cpu_kernels() -> dict[str, str]:
    """The kernel settings (:data:`KERNEL_VARIABLES`) of this process's environment; empty: each library's choice."""
    return {name: os.environ[name] for name in KERNEL_VARIABLES if os.environ.get(name)}


def _what_lies_there(node: Any) -> Any:
    """``node`` with each place replaced by what it holds: a ``data_root`` by its data's fingerprint
    (:func:`~vastmat.datasets.fingerprint.data_fingerprint`), a checkpoint (``load_from``, an ``init_cfg``'s
    ``checkpoint``) by its content's hash; a path that does not exist stays as written."""
    from vastmat.datasets.fingerprint import data_fingerprint
    from vastmat.utils.io import file_digest
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == 'data_root' and isinstance(value, str) and osp.isdir(value):
                value = f'data {data_fingerprint(value)}'
            elif key in ('load_from', 'checkpoint') and isinstance(value, str) and osp.isfile(value):
                value = f'file {file_digest(value)}'
            out[key] = _what_lies_there(value)
        return out
    if isinstance(node, (list, tuple)):
        return [_what_lies_there(value) for value in node]
    return node


def _identity(cfg: Config) -> str:
    """A hash of what decides a training's result: the resolved config (its seed included) and the CPU kernel
    setting (:func:`cpu_kernels`, where one is set), less the progress display's label and expected time
    (``zoo_seconds_per_iter``) and what only testing reads (test / val settings, the tracker's thresholds and the
    official ones the zoo scales), so that test settings can change without training again. What is trained, never
    where: the work dir is left out, and the data and the checkpoints it starts from count by their content
    (:func:`_what_lies_there`), so that a copied or renamed work dir or data root finds its trainings."""
    settings = {key: value for key, value in cfg.to_dict().items()
                if not key.startswith(('test_', 'val_')) and key not in UNTRAINED_KEYS and key != 'work_dir'}
    if any(h.get('type') == 'AdaptiveThreadsHook' for h in settings.get('custom_hooks') or []):
        settings['adaptive_threads'] = True  # its thread switches change the sums: not the same training
    settings['custom_hooks'] = [h for h in settings.get('custom_hooks') or [] if h.get('type') not in RUN_HOOKS]
    settings['model'] = _training_settings(settings.get('model', {}))
    return content_hash(settings)


def content_hash(settings: dict) -> str:
    """A short hash of ``settings`` (a run's resolved settings, where it runs left out) with its data and
    checkpoints counted by their contents (:func:`_what_lies_there`) and this process's CPU kernel setting
    (:func:`cpu_kernels`, where one is set): the same hash on another machine or in a moved work dir, for the same
    run."""
    settings = _what_lies_there(settings)
    kernels = cpu_kernels()
    if kernels:
        settings['cpu_kernels'] = kernels
    text = json.dumps(settings, sort_keys=True, default=repr)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _checkpoints(work_dir: str) -> list[tuple[int, str]]:
    found = []
    for path in glob.glob(osp.join(work_dir, 'iter_*.pth')):
        match = re.fullmatch(r'iter_(\d+)\.pth', osp.basename(path))
        if match:
            found.append((int(match.group(1)), path))
    return sorted(found)


def find_training(cfg: Config) -> Training | None:
    """The finished training of this config (as :func:`train_once` would name it), or None."""
    work_dir = osp.join(cfg.work_dir, _identity(cfg))
    record = osp.join(work_dir, RECORD)
    if not osp.isfile(record):
        return None
    saved = json.load(open(record, encoding='utf-8'))
    checkpoints = [(it, osp.join(work_dir, name)) for it, name in saved['checkpoints']]
    if not all(osp.isfile(path) for _, path in checkpoints):
        return None
    return Training(work_dir, checkpoints, saved['seconds'], saved['max_iters'], reused=True)


def train_once(cfg: Config, iters: int | None = None, num_checkpoints: int = 1) -> Training:
    """Train ``cfg`` (a :func:`zoo_config`) unless the same config on the same data was trained before in
    ``cfg.work_dir``: each training lives in ``cfg.work_dir/<hash of the resolved config>``."""
    from vastmat.engine.runner_builder import build_quiet_runner
    cfg = copy.deepcopy(cfg)
    length = set_schedule(cfg, iters, num_checkpoints)
    found = find_training(cfg)
    if found is not None:
        return found
    cfg.work_dir = osp.join(cfg.work_dir, _identity(cfg))
    runner = build_quiet_runner(cfg)
    start = time.perf_counter()
    runner.train()
    seconds = time.perf_counter() - start
    checkpoints = _checkpoints(cfg.work_dir)
    write_json_atomic(dict(seconds=seconds, max_iters=length,
                           checkpoints=[(it, osp.basename(path)) for it, path in checkpoints]),
                      osp.join(cfg.work_dir, RECORD))
    return Training(cfg.work_dir, checkpoints, seconds, length, reused=False)


def expected_seconds(cfg: Config, iters: int | None = None) -> float:
    """How long training ``cfg`` takes on 2 cores, from its ``zoo_seconds_per_iter`` (measured, in the config);
    0 when the config does not say."""
    per_iter = cfg.get('zoo_seconds_per_iter') or 0.0
    return per_iter * (iters if iters is not None else cfg.train_cfg.get('max_iters', 0))
