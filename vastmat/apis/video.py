"""Tracking a video file or a folder of frames: the frames are read here, the detections come from a det.txt or from
the config's detector run on each frame (the steps of ``tools/test.py``, without a dataset or runner)."""
from __future__ import annotations

import logging
import os.path as osp
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np
import torch
from mmengine.config import Config
from mmengine.logging import MMLogger, print_log

from vastmat.datasets.detections import VideoDetections, cached_frames
from vastmat.datasets.frames import FrameSource, read_frames
from vastmat.utils.errors import UserInputError
from vastmat.structures.tracking import TrackingFrame

from .inference import init_model

# transforms of a test pipeline that read files the in-memory path does not have
_FILE_LOADERS = ('LoadTrackAnnotations', 'LoadVastMATAnnotations', 'LoadTrackingDetections')


@dataclass
class TrackResult:
    """A tracked video: ``rows`` ``(n, 7)`` ``frame, id, x1, y1, x2, y2, score`` with frames 1-based."""

    name: str
    rows: np.ndarray
    frame_count: int
    fps: float


def _progress(total: int, desc: str, enabled: bool) -> Any:
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit='frame', disable=not enabled)


def _cached_inputs(frames: FrameSource, detections: VideoDetections, bar: Any) -> Iterator[TrackingFrame]:
    for frame in cached_frames(detections, frames.name, range(1, frames.frame_count + 1), frames.fps,
                               frames.image_size):
        yield frame
        bar.update()


def in_memory_pipeline(cfg: Config) -> Any:
    """The config's test pipeline for frames given as arrays (as mmdet's ``inference_mot``): in each
    ``TransformBroadcaster``, ``LoadImageFromFile`` becomes ``LoadImageFromNDArray`` and the annotation and
    detection loaders are dropped; everything else (resize, pad, ``PackVastMATInputs``) is kept."""
    from mmcv.transforms import Compose
    pipeline = []
    config_pipeline = cfg.test_dataloader.dataset.pipeline
    if any(t.get('type') == 'LoadVideoDetections' for t in config_pipeline):
        # a cached-detections config packs whole videos; one frame given with its image packs as a frame config
        config_pipeline = [dict(type='PackVastMATInputs')]
    for transform in config_pipeline:
        transform = transform.copy()
        if transform.get('type') == 'TransformBroadcaster':
            inner = [dict(t, type='LoadImageFromNDArray') if t.get('type') == 'LoadImageFromFile' else t
                     for t in transform['transforms'] if t.get('type') not in _FILE_LOADERS]
            transform['transforms'] = inner
        pipeline.append(transform)
    return Compose(pipeline)


def _track_frames(model: Any, frames: FrameSource, detections: VideoDetections | None, bar: Any) -> np.ndarray:
    """Each frame through the in-memory test pipeline and ``model.test_step`` (``TrackingByDetection.predict``):
    the detector's boxes, or ``detections`` packed as the frame's ``pred_instances``."""
    from mmengine.dataset import pseudo_collate
    pipeline = in_memory_pipeline(model.cfg)
    n = frames.frame_count
    rows = np.zeros((0, 7))
    for index, image in enumerate(frames):
        info = dict(img=image, frame_id=index, ori_shape=image.shape[:2], img_id=index + 1, video_id=0,
                    video_name=frames.name, video_length=1, ori_video_length=n, frame_rate=frames.fps,
                    source_frame=index + 1, source_length=n, frame_stride=1, height=frames.height,
                    width=frames.width)
        data = {key: [value] for key, value in info.items()}  # TrackImgSampler's layout: one frame per item
        if detections is not None:
            data.update(detections=[detections.get(index + 1)], extra_dets=[{}])
        with torch.no_grad():
            sample = model.test_step(pseudo_collate([pipeline(data)]))[0][0]
        if index == n - 1:  # the video's final (post-processed) tracks come with its last frame
            rows = np.asarray(sample.pred_video_tracks, np.float64).reshape(-1, 7)
        bar.update()
    return rows


def _initial_weights(model: Any, where: str) -> None:
    """The config's initial weights (as training starts): a model built without ``init_weights()`` holds
    uninitialised layers whose boxes may overflow to inf; fine for trying the mechanics, not for tracking."""
    print_log(f'{where}: no checkpoint, the model has its initial (untrained) weights', 'current',
              level=logging.WARNING)
    logger = MMLogger.get_current_instance()
    level = logger.level
    logger.setLevel(logging.WARNING)  # init_weights logs each parameter's initialisation
    try:
        model.init_weights()
    finally:
        logger.setLevel(level)


def _needs_image(model: Any) -> bool:
    return 'image' in model.tracker.required_inputs or model.reid is not None


def track(source: str | FrameSource, config: str | Config, checkpoint: str | None = None,
          det_file: str | None = None, device: str = 'cpu', cfg_options: dict | None = None,
          progress: bool = True) -> TrackResult:
    """Track one video file or frame folder with a ``TrackingByDetection`` config.

    Args:
        det_file: cached detections (MOT det.txt, frames 1..N in the video's numbering); the config's detector, if
            any, is then not built. None: the config's detector runs on each frame.
        progress: show a progress bar over the frames.
    """
    frames = source if isinstance(source, FrameSource) else read_frames(source)
    model = init_model(config, checkpoint, device, cfg_options, detector=det_file is None)
    where = getattr(config, 'filename', config)
    if not hasattr(model, 'track_video'):
        raise UserInputError(f"{where}: tracking a video needs a model.type='TrackingByDetection' config, "
                             f'not {type(model).__name__}')
    if checkpoint is None and any(True for _ in model.parameters()):
        _initial_weights(model, where)
    if det_file is None and model.detector is None:
        raise UserInputError(f'{where}: the model has no detector; give cached detections (a det.txt)')
    detections = None
    if det_file is not None:
        detections = VideoDetections(det_file, frames.frame_count)
        detections.check(np.arange(1, frames.frame_count + 1))
    with _progress(frames.frame_count, f'tracking {frames.name}', progress) as bar:
        if detections is not None and not _needs_image(model):
            rows = model.track_video(_cached_inputs(frames, detections, bar))
        else:  # the detector's boxes, or cached ones with the image as the config's pipeline prepares it
            rows = _track_frames(model, frames, detections, bar)
    return TrackResult(frames.name, np.asarray(rows, np.float64).reshape(-1, 7), frames.frame_count, frames.fps)
