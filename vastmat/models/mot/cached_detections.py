"""Cached detections: the det.txt files a detector wrote once (``tools/test.py DET_CONFIG --dump-dets DIR``), read back
so that association experiments never rerun the detector."""
from __future__ import annotations

import os.path as osp

import numpy as np

from vastmat.datasets.formats import ltwh_to_xyxy, read_detections


class CachedDetections:
    """Per-frame detections of ``<root>/<video>.txt`` or, in a MOTChallenge split folder,
    ``<root>/<video>/det/det.txt``.

    One video is held in memory at a time (the one last asked for).
    """

    def __init__(self, root: str) -> None:
        if not osp.isdir(root):
            raise FileNotFoundError(f'{root}: no such detection folder')
        self.root = root
        self._video: str | None = None
        self._frames: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def path(self, video: str) -> str:
        candidates = [osp.join(self.root, f'{video}.txt'), osp.join(self.root, video, 'det', 'det.txt')]
        for path in candidates:
            if osp.isfile(path):
                return path
        raise FileNotFoundError(f'no detections for video {video!r}: neither {candidates[0]} nor {candidates[1]}')

    def _load(self, video: str) -> None:
        dets = read_detections(self.path(video))
        order = np.argsort(dets.frames, kind='stable')  # file order within a frame, as the detector wrote it
        frames, scores = dets.frames[order], dets.scores[order]
        xyxy = ltwh_to_xyxy(dets.boxes[order])
        starts = np.flatnonzero(np.r_[True, frames[1:] != frames[:-1]]) if len(frames) else np.zeros(0, int)
        ends = np.r_[starts[1:], len(frames)]
        self._frames = {int(frames[s]): (xyxy[s:e], scores[s:e]) for s, e in zip(starts, ends)}
        self._video = video

    def get(self, video: str, frame: int) -> tuple[np.ndarray, np.ndarray]:
        """``(boxes (m, 4) x1 y1 x2 y2, scores (m,))`` of a 1-based frame; empty where the file has none."""
        if video != self._video:
            self._load(video)
        return self._frames.get(frame, (np.zeros((0, 4)), np.zeros(0)))
