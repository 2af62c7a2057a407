"""Every shipped config run as ``tools/train.py`` and ``tools/test.py`` run it, on a small generated dataset in the
VastMAT layout at the config's own image size.

:func:`check_config` builds what the tools build (the runner, its loops and their dataloaders, the model, the
optimizer wrapper and schedulers, the hooks, the evaluators), trains a few iterations of a training config and
tracks a few frames with a tracking config. What the config names but the check cannot have (the VastMAT data, a
starting checkpoint, pretrained weights behind a URL, a trained ReID / AFLink / D2MP file) is replaced by generated
data or left out, and each replacement is reported in the result's ``notes``. Used by ``tests/test_shipped_configs.py``
and ``tools/benchmark/config_check.py`` (times, memory and the projected schedule, on CPU or CUDA).
"""
from __future__ import annotations

import argparse
import copy
import math
import os
import os.path as osp
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from mmengine.config import Config
from mmengine.hooks import Hook

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
CONFIG_ROOT = osp.join(REPO, 'configs')
# folders of configs/ that hold fragments merged into other configs, not configs to run
FRAGMENT_FOLDERS = ('_base_', 'matchers')
# the paper's training frames of one protocol: its 1,002,562 annotated frames less the 93,111 test frames it tracks
# in its inference-cost measurement (section 5.4); both protocols hold 2,632 training videos
PAPER_TRAIN_FRAMES = 1_002_562 - 93_111
DEMO_IMAGE_SIZE = (192, 144)  # width, height of the demo data (vastmat.datasets.demo_data)
# transforms whose ``scale`` / ``img_scale`` / ``width, height`` give the network's input size
_SIZE_KEYS = ('img_scale', 'scale')
MAX_ASPECT = 1.8  # width / height of the generated frames at most (VastMAT's videos are mostly 16:9)


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


def _walk(node: Any):
    """Every dict in a config node, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from _walk(value)


def _sizes(node: Any) -> list[tuple[int, int]]:
    """The sizes the transforms of a config node resize to: ``scale`` / ``img_scale`` pairs, a
    ``RandomChoiceResize``'s ``scales``, a letterbox's ``width`` and ``height``."""
    sizes = []
    for transform in _walk(node):
        if 'type' not in transform:
            continue
        for key in _SIZE_KEYS:
            value = transform.get(key)
            if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) for v in value):
                sizes.append(tuple(value))
        if isinstance(transform.get('scales'), (list, tuple)):
            sizes += [tuple(s) for s in transform['scales'] if isinstance(s, (list, tuple)) and len(s) == 2]
        if isinstance(transform.get('width'), int) and isinstance(transform.get('height'), int):
            sizes.append((transform['width'], transform['height']))
    return sizes


def image_size(cfg: Config) -> tuple[int, int]:
    """The frame size ``(width, height)`` that fills the network input the config tests at (its test pipeline's
    resize; the largest of the training pipeline's where the test resizes nothing): the largest frame of aspect
    :data:`MAX_ASPECT` within the (long side, short side) limits of mmdet's keep-ratio scales; the demo data's
    size where that is smaller or no transform resizes."""
    sizes = _sizes([cfg.get('test_dataloader'), cfg.get('test_pipeline')]) or _sizes(
        [cfg.get('train_dataloader'), cfg.get('train_pipeline')])
    height = int(round(max((min(min(w, h), max(w, h) / MAX_ASPECT) for w, h in sizes), default=0)))
    width = int(round(height * MAX_ASPECT))
    # no smaller than the demo data (its animals are drawn for that size; crops and tiny inputs are resized anyway)
    return (width, height) if width * height > DEMO_IMAGE_SIZE[0] * DEMO_IMAGE_SIZE[1] else DEMO_IMAGE_SIZE


@dataclass
class CheckData:
    """A generated VastMAT root at one image size, simulated detections (with simulated appearance features that
    follow the identities, for the trackers that need them) and identity camera warps of its videos."""

    data_root: str
    det_root: str
    warp_root: str


def frames_per_video(size: tuple[int, int], cfg: Config | None = None) -> int:
    """Frames a generated video holds: at the demo's size 40 (the trajectory datasets of D2MP and AFLink, which
    read only gt.txt, need tracks of 30 frames and more), at full size 8 (enough for a pair or a mosaic; rendering
    40 frames of 11 videos at 1440x800 takes minutes), and at least the longest ``clip_length`` the config samples
    (MOTIP's clips of 30 frames)."""
    clips = [n['clip_length'] for n in _walk(cfg.get('train_dataloader')) if isinstance(n.get('clip_length'), int)
             ] if cfg is not None else []
    return max([40 if size == DEMO_IMAGE_SIZE else 8] + clips)


def make_check_data(folder: str, size: tuple[int, int], num_frames: int = 4, seed: int = 0) -> CheckData:
    """The demo dataset rendered at ``size`` with ``num_frames`` frames a video under ``folder`` (reused when there),
    with simulated detections and features and identity camera warps for every video."""
    import dataclasses

    import numpy as np

    from vastmat.datasets.demo_data import make_demo_dataset
    from vastmat.datasets.detection_simulator import simulate_video_folder
    from vastmat.datasets.detections import detection_file
    from vastmat.datasets.formats import read_detections, read_gt, write_detections
    from vastmat.experiments.simulated_inputs import simulated_features
    from vastmat.models.motion.camera_motion import write_warp_file
    width, height = size
    root = osp.join(folder, f'vastmat_{width}x{height}_{num_frames}f')
    data = CheckData(osp.join(root, 'data') + '/', osp.join(root, 'dets') + '/', osp.join(root, 'warps') + '/')
    done = osp.join(root, 'complete')
    if osp.isfile(done):
        return data
    make_demo_dataset(data.data_root, num_frames=num_frames, height=height, width=width, seed=seed)
    videos = sorted(os.listdir(osp.join(data.data_root, 'videos')))
    identity = np.tile(np.eye(2, 3), (num_frames, 1, 1))
    for name in videos:
        simulate_video_folder(data.data_root, name, data.det_root, seed=seed)
        path = detection_file(data.det_root, name)
        dets = read_detections(path, num_frames)
        gt = read_gt(osp.join(data.data_root, 'videos', name, 'gt', 'gt.txt'), num_frames)
        features = simulated_features(name, dets.frames, dets.boxes, gt.frames, gt.ids, gt.boxes)
        write_detections(path, dataclasses.replace(dets, features=features))
        write_warp_file(osp.join(data.warp_root, f'GMC-{name}.txt'), identity)
    open(done, 'w').close()
    return data


def _missing_file(path: Any) -> bool:
    """Whether a checkpoint reference cannot be read here: a URL (no network is assumed) or an absent file."""
    if not isinstance(path, str) or not path:
        return False
    return '://' in path or not osp.isfile(path)


def point_at_check_data(cfg: Config, data: CheckData) -> list[str]:
    """Replace in ``cfg`` what names data or weights that are not here; returns a note per replacement."""
    notes = []
    names = sorted(os.listdir(osp.join(data.data_root, 'videos')))
    for node in _walk(cfg._cfg_dict if hasattr(cfg, '_cfg_dict') else cfg):
        for key, replacement in (('data_root', data.data_root), ('det_root', data.det_root),
                                 ('warp_root', data.warp_root)):
            if isinstance(node.get(key), str) and node[key] != replacement:
                notes.append(f'{key} {node[key]} -> generated')
                node[key] = replacement
                if key == 'data_root' and node.get('stride', 1) != 1:  # the generated videos are at 10 FPS
                    notes.append(f'stride {node["stride"]} -> 1')
                    node['stride'] = 1
        if isinstance(node.get('extra_det_roots'), dict):
            node['extra_det_roots'] = {name: data.det_root for name in node['extra_det_roots']}
        if isinstance(node.get('videos'), (list, tuple)) and not set(node['videos']) <= set(names):
            node['videos'] = None
        init = node.get('init_cfg')
        if isinstance(init, dict) and init.get('type') == 'Pretrained' and _missing_file(init.get('checkpoint')):
            notes.append(f'pretrained {init["checkpoint"]} not loaded')
            node['init_cfg'] = None
        if node.get('type') in ('AFLink', 'D2MP') and _missing_file(node.get('checkpoint')):
            notes.append(f'{node["type"]} checkpoint {node["checkpoint"]} not loaded')
            node['checkpoint'] = None
        if node.get('type') == 'DiffMOTTracker' and not node.get('allow_untrained_motion'):
            notes.append('D2MP untrained (allow_untrained_motion)')  # its checkpoint is the user's to give
            node['allow_untrained_motion'] = True
    if _missing_file(cfg.get('load_from')):
        notes.append(f'load_from {cfg.load_from} not loaded')
        cfg.load_from = None
    return sorted(set(notes))


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
    try:
        with open('/proc/self/status') as f:
            return next(int(line.split()[1]) for line in f if line.startswith('VmHWM:')) / 1024
    except (OSError, StopIteration):
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
    frames = frames_per_video * len(_training_videos(cfg.train_dataloader.dataset, data))
    items = len(runner.train_dataloader.dataset) * PAPER_TRAIN_FRAMES / frames
    return int(train_cfg['max_epochs'] * math.ceil(items / (cfg.train_dataloader.batch_size * gpus)))


def _training_videos(dataset: dict, data: CheckData) -> list[str]:
    """The generated videos a dataset config reads: its ``videos``, its protocol's split, or all of them."""
    from vastmat.datasets.sequences import list_sequences, read_split
    while 'data_root' not in dataset and isinstance(dataset.get('dataset'), dict):
        dataset = dataset['dataset']
    if dataset.get('videos'):
        return list(dataset['videos'])
    if dataset.get('protocol') and dataset.get('split'):
        return read_split(data.data_root, dataset['protocol'], dataset['split'])
    return list_sequences(data.data_root)


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
    from vastmat.engine.cli import enable_amp
    path = config if osp.isabs(config) else osp.join(CONFIG_ROOT, config)
    result = CheckResult(osp.relpath(path, CONFIG_ROOT), 'test', device)
    start = time.perf_counter()
    try:
        cfg = Config.fromfile(path)
        result.kind = config_kind(cfg)
        layout = gpu_layout(path)
        result.gpus = layout[0] if layout else 1
        result.image_size = image_size(cfg)
        frames = frames_per_video(frame_size or result.image_size, cfg)
        data = make_check_data(data_folder, frame_size or result.image_size, num_frames=frames)
        result.notes = point_at_check_data(cfg, data)
        cfg.work_dir = work_dir
        cfg.launcher = 'none'
        if not workers:
            _single_process_loaders(cfg)
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


def _train(cfg: Config, result: CheckResult, probe: IterationProbe, device: str, data: CheckData, frames: int,
           projected: bool) -> None:
    from vastmat.engine.cli import build_quiet_runner
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
    for node in _walk(loader):
        if node.get('type') == 'VastMATDataset':
            videos = _training_videos(node, data)  # the same selection rule: videos, protocol / split, or all
            node['videos'], node['split'] = videos[:1], None
            node['stride'] = max(1, frames // TEST_FRAMES)


def _extra_det_roots(cfg: Config, data: CheckData) -> list[str]:
    """``tools/test.py --extra-det-root NAME=DIR`` for the named detection sets a tracker on cached detections reads
    (TrackTrack's ``deleted_dets``): the generated detections."""
    from vastmat.engine.cli import DETECTION_LOADERS
    loaders = [n for n in _walk(cfg.test_dataloader) if n.get('type') in DETECTION_LOADERS]
    names = {n['deleted_dets'] for n in _walk(cfg.model) if isinstance(n.get('deleted_dets'), str)}
    return [f'{name}={data.det_root}' for name in sorted(names)] if loaders else []


def _test(cfg: Config, result: CheckResult, device: str, data: CheckData, frames: int, track: bool) -> None:
    from vastmat.engine.cli import apply_tracking_options, build_quiet_runner
    test_cfg = copy.deepcopy(cfg)
    test_cfg.load_from = None  # the trained weights are not the check's subject; random ones run the same path
    _first_test_video(test_cfg.test_dataloader, data, frames)
    apply_tracking_options(test_cfg, argparse.Namespace(workers=0, extra_det_root=_extra_det_roots(test_cfg, data)))
    _reset_peak_memory(device)
    runner = build_quiet_runner(test_cfg)
    loop = runner.test_loop  # builds the dataloader and the evaluator
    if not track:
        return
    model = getattr(runner.model, 'module', runner.model)
    if hasattr(model, 'init_weights'):  # the initialisation a training starts from (a test alone keeps torch's)
        model.init_weights()
    began = time.perf_counter()
    runner.test()
    result.test_s = time.perf_counter() - began
    result.test_frames = getattr(loop.dataloader.dataset, 'num_all_imgs', None) or len(loop.dataloader.dataset)
    memory = _peak_memory_mb(device)
    if memory is not None:
        result.peak_memory_mb = max(result.peak_memory_mb or 0.0, memory)
