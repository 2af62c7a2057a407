"""``tools/test.py``'s tracking options applied to a config's test part: cached detections instead of the detector
(``--det-root``, ``--extra-det-root``), the data root, the evaluation workers and where tracking results go."""
from __future__ import annotations

import argparse
import inspect
from typing import Any

from mmengine.config import Config


def _evaluators(cfg_evaluator: Any) -> list:
    if cfg_evaluator is None:
        return []
    if isinstance(cfg_evaluator, dict) and 'metrics' in cfg_evaluator:
        cfg_evaluator = cfg_evaluator['metrics']
    return list(cfg_evaluator) if isinstance(cfg_evaluator, (list, tuple)) else [cfg_evaluator]


# the transforms that read cached detections (a whole video at a time, or one frame)
DETECTION_LOADERS = ('LoadVideoDetections', 'LoadTrackingDetections')


def use_cached_detections(cfg: Config, det_root: str) -> None:
    """Make a detector-in-the-loop config test on cached detections as configs/_base_/tracking_cached-dets.py
    does: one whole video per item (``DefaultSampler``), its detections read once, no frame loaded, no ground truth
    packed."""
    loader = cfg.test_dataloader
    loader.dataset.pipeline = [dict(type='LoadVideoDetections', det_root=det_root),
                               dict(type='PackVideoTrackingInputs')]
    loader.dataset.with_gt = False
    loader.sampler = dict(type='DefaultSampler', shuffle=False, round_up=False)
    loader.batch_size = 1


def _detection_loaders(pipeline: list) -> list[dict]:
    """The transforms of a pipeline (nested ones included) that read cached detections."""
    return [t for t in _transforms(pipeline) if t.get('type') in DETECTION_LOADERS]


def _transforms(pipeline: list) -> list[dict]:
    """The transforms of a pipeline, those nested in ``TransformBroadcaster`` included."""
    found = []
    for transform in pipeline:
        found.append(transform)
        found += _transforms(transform.get('transforms', []))
    return found


def apply_tracking_options(cfg: Config, args: argparse.Namespace) -> None:
    """``tools/test.py``'s ``--dump-dets``, ``--det-root``, ``--extra-det-root``, ``--data-root`` and ``--workers``,
    applied to the test part of a config; tracking results go to ``WORK_DIR/results`` unless the config names another
    folder."""
    from vastmat.datasets.sequences import is_vastmat_root
    dataset = cfg.test_dataloader.dataset
    if getattr(args, 'dump_dets', None):
        # the dumper needs each frame's video and index
        from mmdet.datasets.transforms import PackDetInputs
        default_keys = inspect.signature(PackDetInputs.__init__).parameters['meta_keys'].default
        for transform in dataset.get('pipeline', []):
            if transform.get('type') == 'PackDetInputs':
                keys = tuple(transform.get('meta_keys', default_keys))
                transform['meta_keys'] = tuple(dict.fromkeys(keys + ('video_name', 'frame_id', 'source_frame')))
    if getattr(args, 'det_root', None):
        from vastmat.registry import MODELS  # a registry lookup: the model class says whether it can
        model_class = MODELS.get(cfg.model.get('type')) if cfg.model.get('type') else None
        if not getattr(model_class, 'tracks_cached_detections', False):
            raise ValueError(f"--det-root needs a tracking config whose model can track cached detections "
                             f"(model.type='TrackingByDetection', 'MOTIP'), not model.type={cfg.model.get('type')!r}")
        cfg.model.detector = None
        loaders = _detection_loaders(dataset.get('pipeline', []))
        if not loaders:  # a detector-in-the-loop config: its frames are not needed
            use_cached_detections(cfg, args.det_root)
            loaders = _detection_loaders(dataset.pipeline)
        for loader in loaders:
            loader['det_root'] = args.det_root
    extra_roots = getattr(args, 'extra_det_root', None) or []
    if extra_roots:
        loaders = _detection_loaders(dataset.get('pipeline', []))
        if not loaders:
            raise ValueError('--extra-det-root needs cached detections (--det-root or a cached-detections config)')
        for option in extra_roots:
            name, sep, root = option.partition('=')
            if not sep or not name or not root:
                raise ValueError(f'--extra-det-root {option!r}: expected NAME=DIR, e.g. nms95=dets_nms0.95/')
            for loader in loaders:
                loader['extra_det_roots'] = {**(loader.get('extra_det_roots') or {}), name: root}
    if getattr(args, 'data_root', None):
        dataset.data_root = args.data_root
        if not is_vastmat_root(args.data_root):  # a MOTChallenge split folder: all of its videos
            dataset.protocol = dataset.split = None
    for metric in _evaluators(cfg.get('test_evaluator')):
        if metric.get('type') == 'VastMATMetric':
            if not metric.get('outfile_dir'):
                metric['outfile_dir'] = cfg.work_dir
            if getattr(args, 'workers', None) is not None:
                metric['workers'] = args.workers
