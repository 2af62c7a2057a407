"""The data of a config check (vastmat/benchmarks/shipped_configs.py): the input size a config works at, a VastMAT
dataset generated at that size with simulated detections, features and camera warps, and a config pointed at it,
with what it names but a fresh machine lacks replaced (each replacement reported)."""
from __future__ import annotations

import os
import os.path as osp
from dataclasses import dataclass
from typing import Any

from mmengine.config import Config

DEMO_IMAGE_SIZE = (192, 144)  # width, height of the demo data (vastmat.datasets.demo_data)
# transforms whose ``scale`` / ``img_scale`` / ``width, height`` give the network's input size
_SIZE_KEYS = ('img_scale', 'scale')
MAX_ASPECT = 1.8  # width / height of the generated frames at most (VastMAT's videos are mostly 16:9)


def walk(node: Any):
    """Every dict in a config node, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from walk(value)


def _sizes(node: Any) -> list[tuple[int, int]]:
    """The sizes the transforms of a config node resize to: ``scale`` / ``img_scale`` pairs, a
    ``RandomChoiceResize``'s ``scales``, a letterbox's ``width`` and ``height``."""
    sizes = []
    for transform in walk(node):
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
    clips = [n['clip_length'] for n in walk(cfg.get('train_dataloader')) if isinstance(n.get('clip_length'), int)
             ] if cfg is not None else []
    return max([40 if size == DEMO_IMAGE_SIZE else 8] + clips)


def make_check_data(folder: str, size: tuple[int, int], num_frames: int = 4, seed: int = 0) -> CheckData:
    """The demo dataset rendered at ``size`` with ``num_frames`` frames a video under ``folder`` (reused when there),
    with simulated detections and features and identity camera warps for every video. Processes that share
    ``folder`` render it once: the others wait for it (a lock file beside it)."""
    from filelock import FileLock
    width, height = size
    root = osp.join(folder, f'vastmat_{width}x{height}_{num_frames}f')
    data = CheckData(osp.join(root, 'data') + '/', osp.join(root, 'dets') + '/', osp.join(root, 'warps') + '/')
    done = osp.join(root, 'complete')
    if osp.isfile(done):
        return data
    os.makedirs(folder, exist_ok=True)
    with FileLock(f'{root}.lock'):
        if not osp.isfile(done):
            _render_check_data(data, num_frames, height, width, seed)
            open(done, 'w').close()
    return data


def _render_check_data(data: CheckData, num_frames: int, height: int, width: int, seed: int) -> None:
    """:func:`make_check_data`'s rendering."""
    import dataclasses

    import numpy as np

    from vastmat.benchmarks.simulated_inputs import simulated_features
    from vastmat.datasets.demo_data import make_demo_dataset
    from vastmat.datasets.detection_simulator import simulate_video_folder
    from vastmat.datasets.detections import detection_file
    from vastmat.datasets.formats import read_detections, read_gt, write_detections
    from vastmat.models.motion.camera_motion import write_warp_file
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


def _missing_file(path: Any) -> bool:
    """Whether a checkpoint reference cannot be read here: a URL (no network is assumed) or an absent file."""
    if not isinstance(path, str) or not path:
        return False
    return '://' in path or not osp.isfile(path)


def point_at_check_data(cfg: Config, data: CheckData) -> list[str]:
    """Replace in ``cfg`` what names data or weights that are not here; returns a note per replacement."""
    notes = []
    names = sorted(os.listdir(osp.join(data.data_root, 'videos')))
    for node in walk(cfg._cfg_dict if hasattr(cfg, '_cfg_dict') else cfg):
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


def dataset_videos(dataset: dict, data: CheckData) -> list[str]:
    """The generated videos a dataset config reads: its ``videos``, its protocol's split, or all of them."""
    from vastmat.datasets.sequences import list_sequences, read_split
    while 'data_root' not in dataset and isinstance(dataset.get('dataset'), dict):
        dataset = dataset['dataset']
    if dataset.get('videos'):
        return list(dataset['videos'])
    if dataset.get('protocol') and dataset.get('split'):
        return read_split(data.data_root, dataset['protocol'], dataset['split'])
    return list_sequences(data.data_root)
