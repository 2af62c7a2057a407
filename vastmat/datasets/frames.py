"""The frames of a video file or of a folder of images, read one by one (tracking a video, importing a labelled
video): a file through ``mmcv.VideoReader`` (OpenCV), a folder's jpg/png files sorted by name."""
from __future__ import annotations

import glob
import os.path as osp
import re
from dataclasses import dataclass
from typing import Iterator

import cv2
import numpy as np

from vastmat.utils.errors import UserInputError

from .formats import read_seqinfo

DEFAULT_FPS = 10  # VastMAT videos are sampled at 10 FPS (DESIGN.md section 3)
IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png')


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
    fps_known: bool = True  # False: no frame rate in the video or a seqinfo.ini, ``fps`` is DEFAULT_FPS

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


def frame_number(name: str) -> int | None:
    """The number a frame's file name ends with, extension aside (``frame_000012.jpg``, ``img12.png``: 12), or
    None."""
    match = re.search(r'(\d+)\D*$', osp.splitext(osp.basename(name))[0])
    return int(match.group(1)) if match else None


def frame_order(folder: str, files: list[str]) -> list[str]:
    """``files`` in frame order: by the number each name ends with where every name carries one (``frame_2.png``
    before ``frame_10.png``, as ffmpeg's ``%d`` writes them), else by name. Numbered frames must run without a gap
    or a repeat: a missing file would shift every later frame (and its labels or detections) by one."""
    numbers = [frame_number(f) for f in files]
    if len(files) < 2 or None in numbers:
        return sorted(files)
    ordered = sorted(zip(numbers, files))
    values = [number for number, _ in ordered]
    gaps = [(a, b) for a, b in zip(values, values[1:]) if b != a + 1]
    if gaps:
        a, b = gaps[0]
        if a == b:
            raise UserInputError(f'{folder}: two frames carry the number {a}')
        raise UserInputError(f'{folder}: frames are missing: the numbers jump from {a} to {b} '
                             f'({len(gaps)} gap{"s" if len(gaps) > 1 else ""} in {len(files)} frames)')
    return [file for _, file in ordered]


def _folder_source(folder: str) -> FrameSource:
    files = [f for f in glob.glob(osp.join(folder, '*')) if f.lower().endswith(IMAGE_EXTENSIONS)]
    if not files:
        raise UserInputError(f'{folder}: no {"/".join(e[1:] for e in IMAGE_EXTENSIONS)} frames in this folder')
    files = frame_order(folder, files)
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
    return FrameSource(folder, name, len(files), float(fps or DEFAULT_FPS), first.shape[0], first.shape[1], files,
                       fps_known=fps is not None)


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
    return FrameSource(path, name, reader.frame_cnt, float(fps), reader.height, reader.width,
                       fps_known=bool(reader.fps and reader.fps > 0))


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
