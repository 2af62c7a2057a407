"""Every shipped config run as ``tools/train.py`` and ``tools/test.py`` run it, on a small generated dataset in the
VastMAT layout at the config's own image size.

:func:`check_config` builds what the tools build (the runner, its loops and their dataloaders, the model, the
optimizer wrapper and schedulers, the hooks, the evaluators), trains a few iterations of a training config and
tracks a few frames with a tracking config. What the config names but the check cannot have (the VastMAT data, a
starting checkpoint, pretrained weights behind a URL, a trained ReID / AFLink / D2MP file) is replaced by generated
data or left out, and each replacement is reported in the result's ``notes``. Used by
``tests/benchmarks/test_shipped_configs.py``
and ``tools/benchmark/config_check.py`` (times, memory and the projected schedule, on CPU or CUDA).
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import math
import os
import os.path as osp
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

from mmengine.config import Config
from mmengine.hooks import Hook

from vastmat.utils.package_configs import config_dir

from .config_data import (DEMO_IMAGE_SIZE, CheckData, dataset_videos, frames_per_video, image_size, make_check_data,
                          point_at_check_data, walk)

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
CONFIG_ROOT = config_dir()
# folders of configs/ that hold fragments merged into other configs, not configs to run
FRAGMENT_FOLDERS = ('_base_', 'matchers')
# the paper's training frames of one protocol: its 1,002,562 annotated frames less the 93,111 test frames it tracks
# in its inference-cost measurement (section 5.4); both protocols hold 2,632 training videos
PAPER_TRAIN_FRAMES = 1_002_562 - 93_111


@dataclass
class CheckResult:
    """What one config did: ``kind`` 'train', 'test' or 'train+test'; the times, the peak memory (MB, the
    process's resident set on CPU, allocated GPU memory on CUDA), the last training loss, and ``notes`` on what the
    check replaced. ``error`` is the first line of the exception that stopped it (empty when it ran)."""

    config: str
    kind: str
    device: str = 'cpu'
    image_size: tuple[int, int] = DEMO_IMAGE_SIZE
    batch_size: int | None = None
    build_s: float = 0.0
    train_s: float | None = None
    iterations: int = 0
    seconds_per_iter: float | None = None
    images_per_s: float | None = None
    loss: float | None = None
    loss_finite: bool | None = None
    test_s: float | None = None
    test_frames: int = 0
    peak_memory_mb: float | None = None
    projected_hours: float | None = None
    gpus: int | None = None
    notes: list[str] = field(default_factory=list)
    error: str = ''

    def to_dict(self) -> dict:
        return asdict(self)


def shipped_configs(root: str = CONFIG_ROOT) -> list[str]:
    """Every runnable config under ``root`` (relative paths, sorted): not the ``_base_`` and ``matchers``
    fragments."""
    found = []
    for folder in sorted(os.listdir(root)):
        if folder in FRAGMENT_FOLDERS or not osp.isdir(osp.join(root, folder)):
            continue
        found += [f'{folder}/{name}' for name in sorted(os.listdir(osp.join(root, folder))) if name.endswith('.py')]
    return found


def config_kind(cfg: Config) -> str:
    """'train' (a training config without a tracking test), 'test' (a test-only config: a tracker on cached
    detections or with a detector in the loop) or 'train+test'."""
    trains = bool(cfg.get('train_dataloader')) and bool(cfg.get('train_cfg'))
    tests = bool(cfg.get('test_dataloader')) and bool(cfg.get('test_cfg', True))
    return 'train+test' if trains and tests else 'train' if trains else 'test'


def gpu_layout(config: str) -> tuple[int, int] | None:
    """The ``(GPUs, images per GPU)`` of an MMDetection config name (``..._8xb4-80e_...``), or None."""
    match = re.search(r'_(\d+)xb(\d+)', osp.basename(config))
    return (int(match.group(1)), int(match.group(2))) if match else None


class _StopAfter(Exception):
    """Raised by :class:`IterationProbe` once it has seen its iterations."""


class IterationProbe(Hook):
    """Times each training iteration, keeps the losses and stops the run after ``iterations`` by raising
    :class:`_StopAfter` (with 0, once the first batch has come through the pipeline, before its forward pass); the
    first ``warmup`` iterations are not counted in :attr:`seconds_per_iter`."""

    priority = 'LOWEST'

    def __init__(self, iterations: int, warmup: int = 0) -> None:
        self.iterations, self.warmup = iterations, warmup
        self.batches = 0
        self.times: list[float] = []
        self.losses: list[float] = []
        self._start = 0.0

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        self.batches += 1
        if self.iterations == 0:
            raise _StopAfter
        _synchronize()
        self._start = time.perf_counter()

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None) -> None:
        _synchronize()
        self.times.append(time.perf_counter() - self._start)
        loss = (outputs or {}).get('loss')
        self.losses.append(float(loss.detach()) if loss is not None else math.nan)
        if len(self.times) >= self.iterations:
            raise _StopAfter

    @property
    def seconds_per_iter(self) -> float:
        timed = self.times[self.warmup:] or self.times
        return sum(timed) / len(timed)


def _synchronize() -> None:
    import torch
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def _reset_peak_memory(device: str) -> None:
    import torch
    if device == 'cuda':
        torch.cuda.reset_peak_memory_stats()
    else:  # Linux: writing 5 to clear_refs resets the process's peak resident set (VmHWM)
        try:
            with open('/proc/self/clear_refs', 'w') as f:
                f.write('5')
        except OSError:
            pass


def _peak_memory_mb(device: str) -> float | None:
    import torch
    if device == 'cuda':
        return torch.cuda.max_memory_allocated() / 2 ** 20
    from vastmat.benchmarks.testing_path import peak_rss_mb
    try:
        return peak_rss_mb()
    except (OSError, StopIteration):  # no /proc (not Linux)
        return None


def _set_batch(cfg: Config, batch_size: int | None) -> int | None:
    loader = cfg.get('train_dataloader')
    if not loader:
        return None
    if batch_size is not None:
        loader.batch_size = batch_size
    return loader.get('batch_size')


def _single_process_loaders(cfg: Config) -> None:
    for key in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        loader = cfg.get(key)
        if loader:
            loader.num_workers, loader.persistent_workers = 0, False
            loader.pop('prefetch_factor', None)


def _schedule_iterations(cfg: Config, runner: Any, gpus: int, data: CheckData, frames_per_video: int) -> int | None:
    """The iterations of the config's whole schedule on ``gpus`` GPUs for the paper's training set: an
    iteration-based loop's ``max_iters``; for epochs, the generated training set's items per frame scaled to
    :data:`PAPER_TRAIN_FRAMES`."""
    train_cfg = cfg.get('train_cfg') or {}
    if train_cfg.get('max_iters'):
        return int(train_cfg['max_iters'])
    if not train_cfg.get('max_epochs'):
        return None
    frames = frames_per_video * len(dataset_videos(cfg.train_dataloader.dataset, data))
    items = len(runner.train_dataloader.dataset) * PAPER_TRAIN_FRAMES / frames
    return int(train_cfg['max_epochs'] * math.ceil(items / (cfg.train_dataloader.batch_size * gpus)))


def _prepared(path: str, data_folder: str, frame_size: tuple[int, int] | None = None,
              workers: bool = False) -> tuple[Config, CheckData, int, list[str]]:
    """The config at ``path`` pointed at the generated data of its input size (``frame_size`` instead, when given),
    without a launcher and (unless ``workers``) without dataloader workers; with that data, the frames a video
    holds and the notes of what was replaced."""
    cfg = Config.fromfile(path)
    size = frame_size or image_size(cfg)
    frames = frames_per_video(size, cfg)
    data = make_check_data(data_folder, size, num_frames=frames)
    notes = point_at_check_data(cfg, data)
    cfg.launcher = 'none'
    if not workers:
        _single_process_loaders(cfg)
    return cfg, data, frames, notes


def check_config(config: str, work_dir: str, data_folder: str, device: str = 'cpu', iterations: int = 1,
                 warmup: int = 0, batch_size: int | None = None, amp: bool = False, workers: bool = False,
                 track: bool = True, frame_size: tuple[int, int] | None = None) -> CheckResult:
    """Run ``config`` (a path under ``configs/`` or absolute) as the tools would.

    A training config builds its runner and trains ``iterations`` iterations of its own loop (the first ``warmup``
    not timed) at ``batch_size`` images a GPU (None: the config's); with ``iterations=0`` it stops once the first
    batch has come through the pipeline, before the forward pass. A config with a test builds its test loop
    (dataloader, evaluator, model) and, with ``track``, tests on :data:`TEST_FRAMES` frames of one generated test
    video. ``amp``: ``AmpOptimWrapper`` as ``tools/train.py --amp``; ``workers``: the config's dataloader workers
    (else everything runs in this process); ``frame_size``: the generated frames' size (default: the config's input
    size; the pipeline resizes them either way). The exception that stops it is recorded in ``error``, not raised."""
    from vastmat.engine.runner_builder import enable_amp
    path = config if osp.isabs(config) else osp.join(CONFIG_ROOT, config)
    result = CheckResult(osp.relpath(path, CONFIG_ROOT), 'test', device)
    start = time.perf_counter()
    # no iteration and no tracking: nothing runs the model, so its weights need no random draw
    weights = weights_left_as_allocated() if iterations == 0 and not track else contextlib.nullcontext()
    try:
        cfg, data, frames, result.notes = _prepared(path, data_folder, frame_size, workers)
        result.kind = config_kind(cfg)
        layout = gpu_layout(path)
        result.gpus = layout[0] if layout else 1
        result.image_size = image_size(cfg)
        cfg.work_dir = work_dir
        with weights:
            if 'train' in result.kind:
                result.batch_size = _set_batch(cfg, batch_size)
                if amp:
                    enable_amp(cfg)
                _train(cfg, result, IterationProbe(iterations, warmup), device, data, frames,
                       projected=batch_size is None)
            if 'test' in result.kind:
                _test(cfg, result, device, data, frames, track)
    except Exception as exc:  # noqa: BLE001 (reported per config; the table shows every failure)
        result.error = f'{type(exc).__name__}: {(str(exc).splitlines() or [""])[0]}'[:300]
    result.build_s = time.perf_counter() - start - sum(t for t in (result.test_s, result.train_s) if t)
    return result


# torch.nn.init's initialisers, which the layers' reset_parameters and mmengine's init_cfg call by module attribute
INITIALISERS = ('uniform_', 'normal_', 'trunc_normal_', 'constant_', 'ones_', 'zeros_', 'eye_', 'dirac_',
                'xavier_uniform_', 'xavier_normal_', 'kaiming_uniform_', 'kaiming_normal_', 'orthogonal_', 'sparse_')


@contextlib.contextmanager
def weights_left_as_allocated() -> Iterator[None]:
    """Models built meanwhile keep their parameters as allocated: torch.nn.init's initialisers return their tensor
    untouched. For a check that builds a model and never runs it (``iterations=0`` without tracking): drawing the
    random weights of a full-size model costs about a CPU-second (YOLOX-X's 99M), half the time of its check."""
    import torch.nn.init
    saved = {name: getattr(torch.nn.init, name) for name in INITIALISERS}

    def untouched(tensor: Any, *args: Any, **kwargs: Any) -> Any:
        return tensor

    for name in INITIALISERS:
        setattr(torch.nn.init, name, untouched)
    try:
        yield
    finally:
        for name, initialiser in saved.items():
            setattr(torch.nn.init, name, initialiser)


def _train(cfg: Config, result: CheckResult, probe: IterationProbe, device: str, data: CheckData, frames: int,
           projected: bool) -> None:
    from vastmat.engine.runner_builder import build_quiet_runner
    train_cfg = copy.deepcopy(cfg)
    train_cfg.train_cfg.pop('val_begin', None)
    _reset_peak_memory(device)
    runner = build_quiet_runner(train_cfg)
    if len(runner.train_loop.dataloader.dataset) == 0:  # built here; an infinite sampler would wait forever
        raise RuntimeError(f'the training set is empty on the generated data ({data.data_root})')
    runner.register_hook(probe)
    try:
        runner.train()
    except _StopAfter:
        pass
    if not probe.batches:
        raise RuntimeError('the training loop ended before its first batch')
    result.iterations = len(probe.times)
    result.train_s = sum(probe.times)
    result.peak_memory_mb = _peak_memory_mb(device)
    if not probe.times:
        return
    result.seconds_per_iter = probe.seconds_per_iter
    result.images_per_s = (result.batch_size or 1) / result.seconds_per_iter
    result.loss = probe.losses[-1]
    result.loss_finite = all(math.isfinite(v) for v in probe.losses)
    total = _schedule_iterations(train_cfg, runner, result.gpus or 1, data, frames) if projected else None
    if total is not None:
        result.projected_hours = total * result.seconds_per_iter / 3600


TEST_FRAMES = 4  # frames of the one video a config's test tracks


def _first_test_video(loader: dict, data: CheckData, frames: int) -> None:
    """Test on one video, :data:`TEST_FRAMES` of its ``frames`` (a stride): the first of the test datasets' own
    selection of the generated videos."""
    for node in walk(loader):
        if node.get('type') == 'VastMATDataset':
            videos = dataset_videos(node, data)  # the same selection rule: videos, protocol / split, or all
            node['videos'], node['split'] = videos[:1], None
            node['stride'] = max(1, frames // TEST_FRAMES)


def _extra_det_roots(cfg: Config, data: CheckData) -> list[str]:
    """``tools/test.py --extra-det-root NAME=DIR`` for the named detection sets a tracker on cached detections reads
    (TrackTrack's ``deleted_dets``): the generated detections."""
    from vastmat.engine.tracking_options import DETECTION_LOADERS
    loaders = [n for n in walk(cfg.test_dataloader) if n.get('type') in DETECTION_LOADERS]
    names = {n['deleted_dets'] for n in walk(cfg.model) if isinstance(n.get('deleted_dets'), str)}
    return [f'{name}={data.det_root}' for name in sorted(names)] if loaders else []


def _test_runner(cfg: Config, data: CheckData, frames: int) -> Any:
    """The runner of ``cfg``'s test on one generated video, its test loop built (dataloader, evaluator)."""
    from vastmat.engine.runner_builder import build_quiet_runner
    from vastmat.engine.tracking_options import apply_tracking_options
    test_cfg = copy.deepcopy(cfg)
    test_cfg.load_from = None  # the trained weights are not the check's subject; random ones run the same path
    _first_test_video(test_cfg.test_dataloader, data, frames)
    apply_tracking_options(test_cfg, argparse.Namespace(workers=0, extra_det_root=_extra_det_roots(test_cfg, data)))
    runner = build_quiet_runner(test_cfg)
    runner.test_loop  # noqa: B018 (the property builds the loop: its dataloader and evaluator)
    return runner


def _initialise(runner: Any, weights: dict | None = None) -> dict:
    """Give the runner's model ``weights``, or the initialisation a training starts from (a test alone keeps
    torch's); returns its weights on the CPU."""
    model = getattr(runner.model, 'module', runner.model)
    if weights is not None:
        model.load_state_dict(weights)
    elif hasattr(model, 'init_weights'):
        model.init_weights()
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def _test(cfg: Config, result: CheckResult, device: str, data: CheckData, frames: int, track: bool) -> None:
    _reset_peak_memory(device)
    runner = _test_runner(cfg, data, frames)
    loop = runner.test_loop
    if not track:
        return
    _initialise(runner)
    began = time.perf_counter()
    runner.test()
    result.test_s = time.perf_counter() - began
    result.test_frames = getattr(loop.dataloader.dataset, 'num_all_imgs', None) or len(loop.dataloader.dataset)
    memory = _peak_memory_mb(device)
    if memory is not None:
        result.peak_memory_mb = max(result.peak_memory_mb or 0.0, memory)


@contextlib.contextmanager
def runner_device(device: str) -> Iterator[None]:
    """Runners built meanwhile put their model on ``device``: mmengine's ``Runner`` takes the GPU wherever there is
    one (``mmengine.device.get_device``, read through its own module), so a CPU run beside a GPU run points that
    reference at ``device``."""
    import mmengine.runner.runner as runner_module
    original = runner_module.get_device
    runner_module.get_device = lambda: device
    try:
        yield
    finally:
        runner_module.get_device = original


def compare_devices(config: str, work_dir: str, data_folder: str, devices: tuple[str, str] = ('cpu', 'cuda'),
                    checkpoint: str | None = None, seed: int = 0) -> dict:
    """Test ``config`` on one generated video on each of ``devices`` with the same weights (``checkpoint``'s, else
    the training's initialisation drawn once on the first device: an untrained detector may find nothing) and compare
    the tracks written: rows (frame, id) on each, rows in common, the largest box difference (pixels) over the common
    rows. Returns a dict of those; ``error`` names what stopped it."""
    import torch

    from vastmat.datasets.formats import read_results
    path = config if osp.isabs(config) else osp.join(CONFIG_ROOT, config)
    out: dict[str, Any] = dict(config=osp.relpath(path, CONFIG_ROOT), devices=list(devices), error='')
    try:
        cfg, data, frames, _ = _prepared(path, data_folder)
        weights, tracks = None, []
        for device in devices:
            cfg.work_dir = osp.join(work_dir, device)
            with runner_device(device):
                runner = _test_runner(cfg, data, frames)
                torch.manual_seed(seed)
                if weights is None and checkpoint is not None:
                    from vastmat.engine.checkpoint import safe_load
                    weights = safe_load(checkpoint, map_location='cpu').get('state_dict')
                weights = _initialise(runner, weights)
                runner.test()
            results = osp.join(cfg.work_dir, 'results')
            rows = {}
            for name in sorted(os.listdir(results)):
                table = read_results(osp.join(results, name))
                rows.update({(name, int(f), int(i)): b for f, i, b in zip(table.frames, table.ids, table.boxes)})
            tracks.append(rows)
        common = tracks[0].keys() & tracks[1].keys()
        out.update(rows=[len(t) for t in tracks], common=len(common),
                   max_box_difference=max((float(abs(tracks[0][k] - tracks[1][k]).max()) for k in common),
                                          default=0.0))
    except Exception as exc:  # noqa: BLE001 (reported per config)
        out['error'] = f'{type(exc).__name__}: {(str(exc).splitlines() or [""])[0]}'[:300]
    return out
