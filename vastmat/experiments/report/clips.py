"""Short clips of chosen videos with each run's tracks drawn (one colour per identity, as tools/demo/track_video.py):
JPEG thumbnails embedded in the page, and for a video longer than the thumbnails show, an MP4 of every frame with
the runs side by side, written beside the page."""
from __future__ import annotations

import base64
import os.path as osp
from dataclasses import dataclass

import cv2
import numpy as np

from vastmat.apis.drawing import TrackDrawer, write_video
from vastmat.apis.inference import read_track_rows
from vastmat.datasets.sequences import load_sequence

from .sources import Run

THUMB_WIDTH = 240  # px, at most
JPEG_QUALITY = 60
MAX_FRAMES = 40  # thumbnails per run and clip: evenly spaced frames of the video
MP4_TILE_WIDTH = 320  # px of each run's tile in the side-by-side MP4
MP4_COLUMNS = 4
BLANK = 64  # grey level of the canvas when the frames are absent


@dataclass
class Clip:
    """One chosen video: why it was chosen, its frame numbers and each run's thumbnails (data URIs)."""

    video: str
    reason: str
    frames: list[int]
    images: dict[str, list[str]]
    mp4: str | None = None  # relative to the page


def choose_videos(runs: list[Run], videos: list[str]) -> list[tuple[str, str]]:
    """``(video, reason)``: the worst and the best video by mean HOTA, and the one with the largest gap between two
    runs (each video once)."""
    if not videos:
        return []
    hota = {v: [run.per_video[v]['HOTA'] for run in runs] for v in videos}
    mean = {v: float(np.mean(h)) for v, h in hota.items()}
    chosen = [(min(videos, key=lambda v: (mean[v], v)), 'worst (lowest mean HOTA)'),
              (max(videos, key=lambda v: (mean[v], v)), 'best (highest mean HOTA)')]
    if len(runs) > 1:
        gap = max(videos, key=lambda v: (max(hota[v]) - min(hota[v]), v))
        high, low = runs[int(np.argmax(hota[gap]))], runs[int(np.argmin(hota[gap]))]
        chosen.append((gap, f'largest gap: {high.label} {100 * max(hota[gap]):.1f} vs {low.label} '
                            f'{100 * min(hota[gap]):.1f}'))
    out, seen = [], set()
    for video, reason in chosen:
        if video not in seen:
            seen.add(video)
            out.append((video, reason))
    return out


def _track_rows(results_dir: str | None, video: str, seq_length: int) -> np.ndarray:
    """``frame, id, x1, y1, x2, y2, score`` rows of a run's result file (none when it has no file)."""
    path = osp.join(results_dir, f'{video}.txt') if results_dir else None
    if path is None or not osp.isfile(path):
        return np.zeros((0, 7))
    return read_track_rows(path, seq_length)


def _frame_image(sequence, frame: int, size: tuple[int, int]) -> np.ndarray:
    path = sequence.image_path(frame)
    image = cv2.imread(path, cv2.IMREAD_COLOR) if osp.isfile(path) else None
    return image if image is not None else np.full((*size, 3), BLANK, np.uint8)


def _size(sequence, tracks: list[np.ndarray]) -> tuple[int, int]:
    """``(height, width)`` from seqinfo.ini, else the extent of the ground truth and the tracks."""
    if sequence.image_size is not None:
        return sequence.image_size
    extents = [rows[:, 4:6] for rows in tracks if len(rows)]
    if sequence.gt is not None and len(sequence.gt.boxes):
        extents.append(sequence.gt.boxes[:, :2] + sequence.gt.boxes[:, 2:])
    right, bottom = np.concatenate(extents).max(axis=0) if extents else (640, 480)
    return int(np.ceil(bottom)), int(np.ceil(right))


def _thumbnail(image: np.ndarray) -> str:
    width = min(THUMB_WIDTH, image.shape[1])  # never enlarged
    small = cv2.resize(image, (width, max(1, round(image.shape[0] * width / image.shape[1]))),
                       interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode('.jpg', small, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise RuntimeError('OpenCV could not encode a JPEG thumbnail')
    return 'data:image/jpeg;base64,' + base64.b64encode(data.tobytes()).decode('ascii')


def _tile(images: list[np.ndarray], labels: list[str]) -> np.ndarray:
    """The runs' frames side by side (``MP4_COLUMNS`` a row), each scaled to ``MP4_TILE_WIDTH`` and labelled."""
    tiles = []
    for image, label in zip(images, labels):
        height = round(image.shape[0] * MP4_TILE_WIDTH / image.shape[1]) // 2 * 2
        tile = cv2.resize(image, (MP4_TILE_WIDTH, height), interpolation=cv2.INTER_AREA)
        cv2.putText(tile, label, (4, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1, cv2.LINE_AA)
        tiles.append(tile)
    while len(tiles) % MP4_COLUMNS and len(tiles) > MP4_COLUMNS:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i:i + MP4_COLUMNS]) for i in range(0, len(tiles), MP4_COLUMNS)]
    return np.vstack(rows)


def make_clip(runs: list[Run], video: str, reason: str, mp4_dir: str | None, page_dir: str) -> Clip:
    """The thumbnails of ``video`` for every run (every frame drawn, so that trails are right; ``MAX_FRAMES``
    kept) and, when the video is longer, the side-by-side MP4 of all frames in ``mp4_dir``. Each box carries its
    id and each frame its number (``tools/analysis/edit_identities.py`` takes both), drawn at the size they have
    in a full-size frame once the frame is shrunk to a thumbnail."""
    sequence = load_sequence(runs[0].data_root, video)
    tracks = [_track_rows(run.results_dir, video, sequence.length) for run in runs]
    size = _size(sequence, tracks)
    length = sequence.length
    kept = sorted(set(np.linspace(1, length, min(MAX_FRAMES, length)).round().astype(int).tolist()))
    drawers = [TrackDrawer(scale=max(1.0, size[1] / THUMB_WIDTH)) for _ in runs]
    images: dict[str, list[str]] = {run.label: [] for run in runs}
    long_video = length > len(kept) and mp4_dir is not None
    tiled = []
    for frame in range(1, length + 1):
        image = _frame_image(sequence, sequence.source_frame(frame), size)
        drawn = [drawer.draw(image, frame, rows[rows[:, 0] == frame]) for drawer, rows in zip(drawers, tracks)]
        if frame in kept:
            for run, picture in zip(runs, drawn):
                images[run.label].append(_thumbnail(picture))
        if long_video:
            tiled.append(_tile(drawn, [run.label for run in runs]))
    mp4 = None
    if long_video and tiled:
        path = osp.join(mp4_dir, f'{video}.mp4')
        write_video(tiled, path, sequence.frame_rate)
        mp4 = osp.relpath(path, page_dir)
    return Clip(video, reason, kept, images, mp4)
