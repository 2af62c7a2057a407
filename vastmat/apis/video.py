"""Tracking a video file or a folder of frames: the frames are read here, the detections come from a det.txt or from
the config's detector run on each frame (the steps of ``tools/test.py``, without a dataset or runner)."""
from __future__ import annotations

import glob
import logging
import os.path as osp
from dataclasses import dataclass
from typing import Any, Iterator

import cv2
import numpy as np
import torch
from mmengine.config import Config
from mmengine.logging import MMLogger, print_log

from vastmat.datasets.detections import VideoDetections, cached_frames
from vastmat.datasets.formats import read_seqinfo
from vastmat.utils.errors import UserInputError
from vastmat.structures.tracking import TrackingFrame

from .inference import init_model

DEFAULT_FPS = 10  # VastMAT videos are sampled at 10 FPS (DESIGN.md section 3)
IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png')
# transforms of a test pipeline that read files the in-memory path does not have
_FILE_LOADERS = ('LoadTrackAnnotations', 'LoadVastMATAnnotations', 'LoadTrackingDetections')


@dataclass
class FrameSource:
    """The frames of a video file (``files`` None) or of an image folder, iterated as BGR uint8 arrays; each
    iteration reads them again from the start."""

    path: str
    name: str
    frame_count: int
    fps: float
    height: int
    width: int
    files: list[str] | None = None

    @property
    def image_size(self) -> tuple[int, int]:
        """``(height, width)``."""
        return self.height, self.width

    def __len__(self) -> int:
        return self.frame_count

    def __iter__(self) -> Iterator[np.ndarray]:
        count = 0
        for frame in self._decode():
            if frame.shape[:2] != self.image_size:
                where = self.files[count] if self.files else f'{self.path} frame {count + 1}'
                raise UserInputError(f'{where}: frame size {frame.shape[1]}x{frame.shape[0]} differs from the '
                                     f"first frame's {self.width}x{self.height}")
            count += 1
            yield frame
        if count < self.frame_count:
            raise UserInputError(f'{self.path}: decoded only {count} of the {self.frame_count} frames it declares')

    def _decode(self) -> Iterator[np.ndarray]:
        if self.files is None:
            import mmcv
            yield from mmcv.VideoReader(self.path)
            return
        for file in self.files:
            image = cv2.imread(file, cv2.IMREAD_COLOR)
            if image is None:
                raise UserInputError(f'{file}: not a readable image')
            yield image


def _folder_source(folder: str) -> FrameSource:
    files = sorted(f for f in glob.glob(osp.join(folder, '*')) if f.lower().endswith(IMAGE_EXTENSIONS))
    if not files:
        raise UserInputError(f'{folder}: no {"/".join(e[1:] for e in IMAGE_EXTENSIONS)} frames in this folder')
    first = cv2.imread(files[0], cv2.IMREAD_COLOR)
    if first is None:
        raise UserInputError(f'{files[0]}: not a readable image')
    folder = osp.normpath(osp.abspath(folder))
    parent = osp.dirname(folder)
    # seqinfo.ini beside the frames, or above them (a video folder <video>/img1 with <video>/seqinfo.ini)
    seqinfo = next((p for p in (osp.join(folder, 'seqinfo.ini'), osp.join(parent, 'seqinfo.ini')) if osp.isfile(p)),
                   None)
    fps = read_seqinfo(seqinfo).get('frameRate') if seqinfo else None
    in_video_folder = osp.basename(folder) == 'img1' or seqinfo == osp.join(parent, 'seqinfo.ini')
    name = osp.basename(parent if in_video_folder else folder)
    return FrameSource(folder, name, len(files), float(fps or DEFAULT_FPS), first.shape[0], first.shape[1], files)


def _video_source(path: str) -> FrameSource:
    import mmcv
    try:
        reader = mmcv.VideoReader(path)
    except AssertionError:  # mmcv asserts that OpenCV opened the file
        raise UserInputError(f'{path}: OpenCV cannot open this as a video') from None
    if reader.frame_cnt <= 0 or reader.width <= 0 or reader.height <= 0:
        raise UserInputError(f'{path}: the video has no frames')
    fps = reader.fps if reader.fps and reader.fps > 0 else DEFAULT_FPS
    name = osp.splitext(osp.basename(path))[0]
    return FrameSource(path, name, reader.frame_cnt, float(fps), reader.height, reader.width)


def read_frames(source: str) -> FrameSource:
    """The frames of a video file (read with ``mmcv.VideoReader``) or of a folder of jpg/png images (sorted by
    name), with ``frame_count``, ``fps`` (a folder's from a seqinfo.ini beside or above it, else 10) and ``name``
    (the file's stem; for a folder ``<video>/img1`` the ``<video>`` folder's name).

    Raises:
        FileNotFoundError: ``source`` does not exist.
        UserInputError: no frames, or not a readable video.
    """
    if osp.isdir(source):
        return _folder_source(source)
    if not osp.isfile(source):
        raise FileNotFoundError(f'{source}: no such video file or frame folder')
    return _video_source(source)


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
