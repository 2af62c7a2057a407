"""Camera motion compensation (CMC): per frame, the affine warp ``(2, 3)`` that maps the previous frame's pixel
coordinates to this frame's, in original-frame pixels (the space of the boxes). Trackers apply it to their tracks'
states before predicting (TrackTrack, BoT-SORT).

Every component (``TASK_UTILS``) has one interface: ``reset()`` at the start of a video, then ``warp(frame)`` for
each :class:`~vastmat.structures.TrackingFrame` in order (identity for the first frame), and ``required_inputs``
(the frame inputs it reads).

* :class:`ECCCameraMotion`: mmdet's ``CameraMotionCompensation`` (OpenCV's ECC) on the frame images.
* :class:`CachedCameraMotion`: the warps of a GMC file per video, in the official BoT-SORT / TrackTrack format
  (``trackers/cmc/GMC-<seq>.txt``: one line per frame, tab separated ``index a11 a12 a13 a21 a22 a23``, the first
  line for the first frame), written by :func:`dump_warps` (``tools/test.py CONFIG --dump-warps DIR``).
"""
from __future__ import annotations

import logging
import os.path as osp
from typing import Any, Iterator

import cv2
import numpy as np
from mmdet.models.task_modules.tracking import CameraMotionCompensation
from mmengine.logging import print_log

from vastmat.datasets.formats import FormatError
from vastmat.registry import TASK_UTILS
from vastmat.structures.tracking import FrameDetections, TrackingFrame
from vastmat.utils.io import atomic_write

AFFINE_MODES = (cv2.MOTION_TRANSLATION, cv2.MOTION_EUCLIDEAN, cv2.MOTION_AFFINE)


def identity_warp() -> np.ndarray:
    return np.eye(2, 3, dtype=np.float64)


def rescale_warp(warp: np.ndarray, scale: tuple[float, float]) -> np.ndarray:
    """A warp found on an image scaled by ``scale = (sx, sy)`` from the original frame, in original-frame pixels:
    ``S^-1 [A | t] S`` with ``S = diag(sx, sy)``. With sx = sy only the translation changes (divided by the scale,
    as mmdet's ``CameraMotionCompensation.track`` does); otherwise the off-diagonal terms change too."""
    sx, sy = float(scale[0]), float(scale[1])
    out = np.asarray(warp, np.float64).reshape(2, 3).copy()
    out[0, 1] *= sy / sx
    out[1, 0] *= sx / sy
    out[0, 2] /= sx
    out[1, 2] /= sy
    return out


def _frame_image(frame: TrackingFrame) -> tuple[np.ndarray, tuple[float, float]]:
    """The frame image as ``(H, W, 3)`` float32 for OpenCV (padding cut off) and its scale from the original frame.

    ``frame.image`` is the ``(C, H, W)`` tensor the model received (resized by ``scale_factor``, possibly padded at
    the bottom and right and normalised; ECC's correlation coefficient does not change with a channel's gain and
    offset)."""
    image = frame.image
    if hasattr(image, 'detach'):
        image = image.detach().cpu().float().numpy()
    image = np.asarray(image, np.float32)
    if image.ndim != 3:
        raise ValueError(f'video {frame.video_name!r} frame {frame.frame_id}: the frame image has shape '
                         f'{image.shape}, expected (C, H, W)')
    image = image.transpose(1, 2, 0)
    scale = tuple(map(float, frame.scale_factor)) if frame.scale_factor is not None else (1.0, 1.0)
    if frame.image_size is not None:  # cut the padding off
        height = min(image.shape[0], int(round(frame.image_size[0] * scale[1])))
        width = min(image.shape[1], int(round(frame.image_size[1] * scale[0])))
        image = image[:height, :width]
    if image.shape[2] == 1:
        image = np.repeat(image, 3, axis=2)
    elif image.shape[2] != 3:
        raise ValueError(f'video {frame.video_name!r} frame {frame.frame_id}: the frame image has '
                         f'{image.shape[2]} channels, expected 1 or 3')
    return np.ascontiguousarray(image), scale


@TASK_UTILS.register_module()
class ECCCameraMotion:
    """Camera motion by ECC between consecutive frame images: mmdet's ``CameraMotionCompensation.get_warp_matrix``
    (``cv2.findTransformECC`` with the previous frame as the template), its warp rescaled from image pixels to
    original-frame pixels by the frame's ``scale_factor`` (:func:`rescale_warp`).

    Args:
        warp_mode, num_iters, stop_eps: mmdet's ``CameraMotionCompensation`` arguments (``'cv2.MOTION_EUCLIDEAN'``,
            50, 0.001); the mode must give an affine warp (translation, Euclidean or affine).
        downscale: as BoT-SORT's GMC: blur and shrink the images by this factor before ECC (1: as given).

    When ECC does not converge, the warp is the identity (as BoT-SORT's GMC; mmdet would raise) and a warning is
    logged.
    """

    required_inputs = ('image', )

    def __init__(self, warp_mode: str = 'cv2.MOTION_EUCLIDEAN', num_iters: int = 50, stop_eps: float = 0.001,
                 downscale: float = 1.0) -> None:
        if not (isinstance(warp_mode, str) and warp_mode.startswith('cv2.MOTION_')
                and hasattr(cv2, warp_mode[4:])):
            raise ValueError(f"ECCCameraMotion: warp_mode {warp_mode!r} is not an OpenCV motion type "
                             "('cv2.MOTION_TRANSLATION', 'cv2.MOTION_EUCLIDEAN' or 'cv2.MOTION_AFFINE')")
        self.ecc = CameraMotionCompensation(warp_mode=warp_mode, num_iters=num_iters, stop_eps=stop_eps)
        if self.ecc.warp_mode not in AFFINE_MODES:
            raise ValueError(f'ECCCameraMotion: warp_mode {warp_mode!r} does not give a (2, 3) affine warp; use '
                             'cv2.MOTION_TRANSLATION, cv2.MOTION_EUCLIDEAN or cv2.MOTION_AFFINE')
        if downscale < 1:
            raise ValueError(f'ECCCameraMotion: downscale must be >= 1, got {downscale}')
        self.downscale = float(downscale)
        self.reset()

    def reset(self) -> None:
        self._previous: np.ndarray | None = None
        self._previous_frame = 0
        self.failures = 0

    def _prepare(self, frame: TrackingFrame) -> tuple[np.ndarray, tuple[float, float]]:
        image, scale = _frame_image(frame)
        if self.downscale > 1:
            height, width = image.shape[:2]
            small = (max(1, int(width / self.downscale)), max(1, int(height / self.downscale)))
            image = cv2.resize(cv2.GaussianBlur(image, (3, 3), 1.5), small)
            scale = (scale[0] * small[0] / width, scale[1] * small[1] / height)
        return image, scale

    def warp(self, frame: TrackingFrame) -> np.ndarray:
        frame.require(*self.required_inputs)
        image, scale = self._prepare(frame)
        previous, self._previous = self._previous, image
        if previous is None or frame.frame_id == 1:
            self._previous_frame = frame.frame_id
            return identity_warp()
        if frame.frame_id != self._previous_frame + 1:
            raise ValueError(f'ECCCameraMotion: video {frame.video_name!r} frame {frame.frame_id} follows frame '
                             f'{self._previous_frame}; frames must come one by one, in order (reset() at a new '
                             'video)')
        self._previous_frame = frame.frame_id
        if previous.shape != image.shape:
            raise ValueError(f'ECCCameraMotion: video {frame.video_name!r} frame {frame.frame_id} has image size '
                             f'{image.shape[:2]}, the previous frame {previous.shape[:2]}')
        try:
            warp = self.ecc.get_warp_matrix(previous, image).numpy()
        except cv2.error as exc:
            self.failures += 1
            print_log(f'ECCCameraMotion: video {frame.video_name!r} frame {frame.frame_id}: ECC did not converge '
                      f'({str(exc).strip().splitlines()[-1]}); identity warp', 'current', level=logging.WARNING)
            return identity_warp()
        return rescale_warp(warp, scale)


def warp_file(warp_root: str, video: str) -> str:
    """``<warp_root>/GMC-<video>.txt`` or ``<warp_root>/<video>.txt``, also under the official code's names
    (``MOT17-02-FRCNN`` -> ``GMC-MOT17-02.txt``, ``dancetrack0001`` -> ``GMC-dancetrack-0001.txt``)."""
    names = [video]
    if 'MOT17' in video and '-' in video[len('MOT17-'):]:
        names.append(video.rsplit('-', 1)[0])
    if video.startswith('dancetrack') and not video.startswith('dancetrack-'):
        names.append('dancetrack-' + video[len('dancetrack'):])
    candidates = [osp.join(warp_root, f'{prefix}{name}.txt') for name in names for prefix in ('GMC-', '')]
    for path in candidates:
        if osp.isfile(path):
            return path
    if not osp.isdir(warp_root):
        raise FileNotFoundError(f'{warp_root}: no such camera-motion folder')
    raise FileNotFoundError(f'no camera-motion file for video {video!r}: none of {", ".join(candidates)}')


def read_warp_file(path: str) -> np.ndarray:
    """The warps ``(n, 2, 3)`` float64 of a GMC file (line k: frame k). Every line needs the index and six
    numbers (tab or space separated; a trailing tab is fine); errors name the file and line."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    warps = np.empty((len(lines), 6), np.float64)
    for i, line in enumerate(lines):
        tokens = line.split()
        if len(tokens) != 7:
            raise FormatError(f'{path}:{i + 1}: {len(tokens)} fields, expected 7 (index a11 a12 a13 a21 a22 a23, '
                              'tab separated)')
        try:
            values = [float(t) for t in tokens]
        except ValueError:
            bad = next(t for t in tokens if not _is_number(t))
            raise FormatError(f'{path}:{i + 1}: {bad!r} is not a number') from None
        if not np.isfinite(values).all():
            raise FormatError(f'{path}:{i + 1}: NaN or infinite value')
        warps[i] = values[1:]
    return warps.reshape(-1, 2, 3)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def write_warp_file(path: str, warps: np.ndarray) -> None:
    """Write warps ``(n, 2, 3)`` as a GMC file (the official layout: ``index`` from 0, six values with six decimals,
    each field followed by a tab), atomically."""
    warps = np.asarray(warps, np.float64).reshape(-1, 6)
    with atomic_write(path) as f:
        for i, row in enumerate(warps):
            f.write(f'{i}\t' + ''.join(f'{v:.6f}\t' for v in row) + '\n')


@TASK_UTILS.register_module()
class CachedCameraMotion:
    """Camera motion read from one GMC file per video (:func:`warp_file`, :func:`read_warp_file`): frame
    ``frame_id`` (1-based position in the tracked sequence) takes line ``frame_id`` of the file, as the official
    code reads one line per frame. A missing file, or a file with fewer lines than the frame needs, is an error
    naming the file and frame.

    Args:
        warp_root: the folder of the files.
    """

    required_inputs = ()

    def __init__(self, warp_root: str) -> None:
        self.warp_root = warp_root
        self.reset()

    def reset(self) -> None:
        self._video: str | None = None
        self._path = ''
        self._warps = np.zeros((0, 2, 3))

    def warp(self, frame: TrackingFrame) -> np.ndarray:
        if self._video != frame.video_name:
            self._path = warp_file(self.warp_root, frame.video_name)
            self._warps = read_warp_file(self._path)
            self._video = frame.video_name
        if frame.frame_id > len(self._warps):
            raise FormatError(f'{self._path}: {len(self._warps)} lines, but video {frame.video_name!r} frame '
                              f'{frame.frame_id} needs line {frame.frame_id} (one line per tracked frame; was the '
                              'file written at another stride?)')
        return self._warps[frame.frame_id - 1].copy()


# ------------------------------------------------------------------------------------------- dumping the warps
def _find_ecc_config(node: Any) -> dict | None:
    """The first ``dict(type='ECCCameraMotion', ...)`` in a (model) config."""
    if isinstance(node, dict):
        if node.get('type') == 'ECCCameraMotion':
            return dict(node)
        children = node.values()
    elif isinstance(node, (list, tuple)):
        children = node
    else:
        return None
    for child in children:
        found = _find_ecc_config(child)
        if found is not None:
            return found
    return None


def _frames(cfg: Any) -> Iterator[tuple[str, int, Any, Any]]:
    """``(video, 0-based frame index, image tensor or None, frame metainfo)`` for every frame of the config's test
    dataset, videos one after another, through its pipeline and the model's data preprocessor."""
    from mmengine.dataset import pseudo_collate

    from vastmat.registry import DATASETS, MODELS
    dataset = DATASETS.build(cfg.test_dataloader.dataset)
    preprocessor = MODELS.build(cfg.model.data_preprocessor) if cfg.model.get('data_preprocessor') else None

    def run(packed: dict) -> tuple[Any, Any]:
        batch = pseudo_collate([packed])
        if preprocessor is not None and batch.get('inputs') is not None and len(batch['inputs']):
            batch = preprocessor(batch, False)
        inputs, sample = batch.get('inputs'), batch['data_samples'][0]
        if hasattr(sample, 'video_data_samples'):  # a track sample: its (only) frame
            sample = sample[0]
        image = None
        if inputs is not None and len(inputs):
            image = inputs[0]
            while image.dim() > 3:  # (T, C, H, W) of a track sample
                image = image[0]
        return image, sample.metainfo

    if hasattr(dataset, 'get_len_per_video') and getattr(dataset, 'load_as', 'video') == 'video':
        for v in range(len(dataset)):
            info = dataset.get_data_info(v)
            for f in range(dataset.get_len_per_video(v)):
                image, meta = run(dataset.prepare_data((v, f)))
                yield info.get('video_name') or _video_of(info['images'][f]), f, image, meta
    else:  # one frame per item, videos in order (a detector's test set)
        for i in range(len(dataset)):
            info = dataset.get_data_info(i)
            if 'frame_id' not in info:
                raise ValueError(f'the test dataset ({type(dataset).__name__}) does not give frames of videos (its '
                                 'items have no frame_id): use a detection or tracking config (VastMATDataset)')
            image, meta = run(dataset.prepare_data(i))
            yield info.get('video_name') or _video_of(info), int(info['frame_id']), image, meta


def _video_of(image_info: dict) -> str:
    """``<video>/img1/000001.jpg`` -> ``<video>``."""
    return osp.basename(osp.dirname(osp.dirname(image_info['img_path'])))


def dump_warps(cfg: Any, out_dir: str, camera_motion: dict | None = None) -> dict[str, int]:
    """Compute the ECC warps of every frame of a config's test videos and write ``<out_dir>/<video>.txt`` (GMC
    format, atomically, one file per video as it is finished); returns the number of frames per video.

    The frames go through the config's test pipeline and its model's data preprocessor, so the warps equal those
    an :class:`ECCCameraMotion` in the model computes. Its arguments are the config's first
    ``dict(type='ECCCameraMotion', ...)`` (else the defaults), or ``camera_motion`` when given.
    """
    from mmengine.registry import init_default_scope
    init_default_scope(cfg.get('default_scope', 'vastmat'))
    ecc_cfg = dict(camera_motion or _find_ecc_config(cfg.model.to_dict() if hasattr(cfg.model, 'to_dict')
                                                     else cfg.model) or dict(type='ECCCameraMotion'))
    ecc_cfg.pop('type', None)
    ecc = ECCCameraMotion(**ecc_cfg)
    empty = FrameDetections(np.zeros((0, 4)), np.zeros(0))
    counts: dict[str, int] = {}
    video, warps = None, []

    def finish() -> None:
        if video is not None:
            write_warp_file(osp.join(out_dir, f'{video}.txt'), np.asarray(warps))
            counts[video] = len(warps)
            print_log(f'dump_warps: {video}: {len(warps)} frames ({ecc.failures} without ECC convergence)',
                      'current')

    for name, index, image, meta in _frames(cfg):
        if name != video or index == 0:
            finish()
            video, warps = name, []
            ecc.reset()
        ori_shape = meta.get('ori_shape')
        frame = TrackingFrame(empty, frame_id=index + 1, video_name=name, image=image,
                              image_size=tuple(ori_shape[:2]) if ori_shape else None,
                              scale_factor=tuple(meta['scale_factor']) if meta.get('scale_factor') else None)
        warps.append(ecc.warp(frame))
    finish()
    print_log(f'dump_warps: warps of {len(counts)} videos written to {out_dir}', 'current')
    return counts
