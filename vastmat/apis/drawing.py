"""Drawing tracks on frames (a box and the id in a colour of its own, a trail of recent box centres, the frame
number in the top right corner: what a person reads off to give ``tools/analysis/edit_identities.py``) and writing
the frames as an MP4 or a folder of images.

Drawn with OpenCV rather than mmdet's ``TrackLocalVisualizer``: that one renders each frame through matplotlib
(tens of milliseconds a frame) with alpha-blended boxes, so a box's pixels are not its id's colour, and its
``random_color`` picks one of seaborn's ten colours by reseeding NumPy's global generator, so neighbouring ids
often share a colour. Here an id's colour is a fixed function of the id and is drawn exactly.
"""
from __future__ import annotations

import colorsys
import os
import os.path as osp
from collections import deque
from typing import Iterable, Iterator

import cv2
import numpy as np

from vastmat.utils.errors import UserInputError

TRAIL_LENGTH = 10  # box centres of the last 10 frames (1 s at VastMAT's 10 FPS)
# Successive ids step the hue by the golden ratio's conjugate: any few neighbouring ids get well-separated hues.
GOLDEN_RATIO_CONJUGATE = 0.6180339887498949
SATURATION, VALUE = 0.9, 1.0  # bright, saturated colours that stand out on natural images
LINE_WIDTH = 2  # px, boxes
TRAIL_WIDTH = 2  # px
FONT, FONT_SCALE, FONT_THICKNESS = cv2.FONT_HERSHEY_SIMPLEX, 0.4, 1  # an id label about 9 px high
LABEL_PAD = 2  # px around the label text
LIGHT_BACKGROUND = 140  # labels on a background of this luma or more get black text, else white
FRAME_LABEL_COLOUR = (0, 0, 0)  # the frame number: white on black
VIDEO_EXTENSIONS = ('.mp4', )


def id_colour(track_id: int) -> tuple[int, int, int]:
    """The ``(b, g, r)`` colour of a track id (deterministic; neighbouring ids get distant hues)."""
    hue = (int(track_id) * GOLDEN_RATIO_CONJUGATE) % 1.0
    red, green, blue = colorsys.hsv_to_rgb(hue, SATURATION, VALUE)
    return round(blue * 255), round(green * 255), round(red * 255)


def frame_label(frame: int) -> str:
    """The text that names a drawn frame (the results' 1-based frame number)."""
    return f'frame {int(frame)}'


def _thickness(width: int, scale: float) -> int:
    return max(1, round(width * scale))


def _draw_label(image: np.ndarray, text: str, x: int, y: int, colour: tuple[int, int, int],
                scale: float = 1.0, right: bool = False) -> None:
    """The text on a box of ``colour`` just above ``(x, y)`` (below it when there is no room above), starting at
    ``x`` (ending there with ``right``); text and padding at ``scale`` times their size."""
    thickness = _thickness(FONT_THICKNESS, scale)
    (width, height), baseline = cv2.getTextSize(text, FONT, FONT_SCALE * scale, thickness)
    pad = round(LABEL_PAD * scale)
    box_width, box_height = width + 2 * pad, height + baseline + 2 * pad
    left = max(x - box_width, 0) if right else x
    top = y - box_height if y - box_height >= 0 else y
    cv2.rectangle(image, (left, top), (left + box_width, top + box_height), colour, cv2.FILLED)
    luma = 0.114 * colour[0] + 0.587 * colour[1] + 0.299 * colour[2]  # ITU-R BT.601 weights (b, g, r)
    text_colour = (0, 0, 0) if luma >= LIGHT_BACKGROUND else (255, 255, 255)
    cv2.putText(image, text, (left + pad, top + pad + height), FONT, FONT_SCALE * scale, text_colour, thickness,
                cv2.LINE_AA)


class TrackDrawer:
    """Draws one frame's tracks at a time and remembers each id's box centres for its trail.

    Args:
        trail: the trail joins an id's box centres of the last ``trail`` frames (0: no trails).
        show_frame: label each frame with its number (:func:`frame_label`) in the top right corner.
        scale: lines and labels at ``scale`` times their size, for frames that are shown shrunk by that factor
            (the report's thumbnails), so that the ids and the frame number stay readable.
    """

    def __init__(self, trail: int = TRAIL_LENGTH, show_frame: bool = True, scale: float = 1.0) -> None:
        self.trail = trail
        self.show_frame = show_frame
        self.scale = scale
        self._centres: dict[int, deque] = {}

    def draw(self, image: np.ndarray, frame: int, rows: np.ndarray) -> np.ndarray:
        """A copy of ``image`` with the tracks ``rows`` (``frame, id, x1, y1, x2, y2, score``) of frame ``frame``:
        the frame number first, then trails, boxes and id labels, so that neither it nor a trail hides a box."""
        out = image.copy()
        if self.show_frame:
            _draw_label(out, frame_label(frame), out.shape[1] - 1, 0, FRAME_LABEL_COLOUR, self.scale, right=True)
        rows = np.asarray(rows, np.float64).reshape(-1, 7)
        ids = rows[:, 1].astype(np.int64)
        boxes = np.rint(rows[:, 2:6]).astype(np.int64)
        for track_id, box in zip(ids.tolist(), rows[:, 2:6]):
            history = self._centres.setdefault(track_id, deque(maxlen=max(self.trail, 1)))
            history.append((frame, (box[0] + box[2]) / 2, (box[1] + box[3]) / 2))
        if self.trail > 1:
            for track_id in ids.tolist():
                points = [(x, y) for f, x, y in self._centres[track_id] if f > frame - self.trail]
                if len(points) > 1:
                    cv2.polylines(out, [np.rint(points).astype(np.int32)], False, id_colour(track_id),
                                  _thickness(TRAIL_WIDTH, self.scale), cv2.LINE_AA)
        for track_id, (x1, y1, x2, y2) in zip(ids.tolist(), boxes.tolist()):
            cv2.rectangle(out, (x1, y1), (x2, y2), id_colour(track_id), _thickness(LINE_WIDTH, self.scale))
        for track_id, (x1, y1, _, _) in zip(ids.tolist(), boxes.tolist()):
            _draw_label(out, str(track_id), x1, y1, id_colour(track_id), self.scale)
        return out


def draw_tracks(frames: Iterable[np.ndarray], rows: np.ndarray, trail: int = TRAIL_LENGTH) -> Iterator[np.ndarray]:
    """The frames (numbered 1, 2, ...) with the tracks ``rows`` (``frame, id, x1, y1, x2, y2, score``) drawn."""
    rows = np.asarray(rows, np.float64).reshape(-1, 7)
    order = np.argsort(rows[:, 0], kind='stable')
    rows = rows[order]
    starts = np.searchsorted(rows[:, 0], np.arange(1, rows[:, 0].max(initial=0) + 2))
    drawer = TrackDrawer(trail)
    for frame, image in enumerate(frames, start=1):
        frame_rows = rows[starts[frame - 1]:starts[frame]] if frame < len(starts) else rows[:0]
        yield drawer.draw(image, frame, frame_rows)


def is_frame_folder(path: str) -> bool:
    """Whether ``path`` names a folder of frames (an existing folder or a name without an extension) rather than an
    MP4 file; any other extension is an error."""
    if osp.isdir(path) or not osp.splitext(osp.normpath(path))[1]:
        return True
    if osp.splitext(path)[1].lower() in VIDEO_EXTENSIONS:
        return False
    raise UserInputError(f'{path}: write the video as .mp4 or give a folder (no extension) for numbered frames')


def _write_frames(frames: Iterable[np.ndarray], folder: str, extension: str) -> int:
    os.makedirs(folder, exist_ok=True)
    count = 0
    for count, image in enumerate(frames, start=1):
        path = osp.join(folder, f'{count:06d}{extension}')  # 000001.jpg, as MOTChallenge frame folders
        if not cv2.imwrite(path, image):
            raise OSError(f'{path}: OpenCV could not write this image')
    return count


def _write_mp4(frames: Iterable[np.ndarray], path: str, fps: float) -> int:
    directory = osp.dirname(osp.abspath(path))
    os.makedirs(directory, exist_ok=True)
    # OpenCV picks the container by the extension, so the temporary file ends with .mp4 too; OpenCV creates it
    # (not mkstemp, whose 0600 mode the renamed video would keep)
    tmp = osp.join(directory, f'.{osp.basename(path)}.{os.getpid()}.tmp.mp4')
    writer, count = None, 0
    try:
        for image in frames:
            if writer is None:
                height, width = image.shape[:2]
                writer = cv2.VideoWriter(tmp, cv2.VideoWriter_fourcc(*'mp4v'), float(fps), (width, height))
                if not writer.isOpened():
                    raise OSError(f'{path}: OpenCV could not open an mp4v video writer')
            writer.write(image)
            count += 1
        if writer is None:
            raise UserInputError(f'{path}: no frames to write')
        writer.release()
        os.replace(tmp, path)
    finally:
        if writer is not None:
            writer.release()
        if osp.exists(tmp):
            os.unlink(tmp)
    return count


def write_video(frames: Iterable[np.ndarray], path: str, fps: float, frame_extension: str = '.jpg') -> int:
    """Write BGR frames as an MP4 (``path`` ending in .mp4; fourcc mp4v; written to a temporary file beside it and
    renamed, so no half-written video is left) or, when ``path`` is a folder, as numbered images ``000001.jpg``
    (``frame_extension`` .jpg or .png). Returns the number of frames written."""
    if is_frame_folder(path):
        return _write_frames(frames, path, frame_extension)
    return _write_mp4(frames, path, fps)
