"""Training windows of DiffMOT's D2MP, built from ground truth (Kroery/DiffMOT ``dancetrack_data_process.py`` and
``dataset/dataset.py``, reference/trackers.md section 2).

Each track's rows, in frame order (rows with valid flag 0 dropped, as the official code drops ``mark == 0``), become
``[cx, cy, w, h]`` normalised by the image width and height. A window is ``interval + 2`` consecutive *rows* of one
track (frame gaps are ignored, as in the official dataset): the condition is rows ``1 .. interval`` of it as ``[box,
box - previous box]`` (``(interval, 8)``), the target the next row's change ``row[interval + 1] - row[interval]``
(4 values). A track of ``L`` rows gives ``L - interval - 1`` windows.

Differences from the official code: a track shorter than ``interval + 2`` rows gives no window (the official count
``L - 6`` goes negative and shifts the indices of the following tracks); boxes keep their full precision (the
official intermediate files keep 6 decimals); there is no class filter (every VastMAT animal is one class).
"""
from __future__ import annotations

import os.path as osp
from typing import Any, Sequence as SequenceType

import numpy as np
import torch
from torch.utils.data import Dataset

from vastmat.registry import DATASETS

from .sequences import list_sequences, load_sequence, select_videos


def track_rows(frames: np.ndarray, ids: np.ndarray, ltwh: np.ndarray, width: float,
               height: float) -> list[np.ndarray]:
    """The rows of every track (sorted by id, then frame) as normalised ``(L, 4)`` ``cx, cy, w, h`` arrays."""
    order = np.lexsort((frames, ids))
    ids, ltwh = ids[order], ltwh[order]
    boxes = np.column_stack([(ltwh[:, 0] + ltwh[:, 2] / 2) / width, (ltwh[:, 1] + ltwh[:, 3] / 2) / height,
                             ltwh[:, 2] / width, ltwh[:, 3] / height])
    splits = np.flatnonzero(np.diff(ids)) + 1
    return np.split(boxes, splits) if len(boxes) else []


@DATASETS.register_module()
class TrajectoryWindowDataset(Dataset):
    """D2MP's training samples from the ground truth of a VastMAT root or a MOTChallenge split folder.

    Args:
        data_root: a VastMAT root or a MOTChallenge split folder (e.g. AnimalTrack's ``train``).
        protocol, split: the videos of a VastMAT protocol split (``protocol1``, ``train``); both None: every video.
        videos: an explicit list of video names instead of a split.
        exclude_videos: videos left out (e.g. held out for evaluation).
        stride: keep every ``stride``-th frame first (3 turns 30 FPS into 10 FPS).
        interval: history length (official ``interval`` 5).

    Items are ``dict(inputs=(interval, 8) float32 tensor, data_samples=(4,) float32 tensor)``; mmengine's
    ``default_collate`` stacks them into the ``(B, interval, 8)`` / ``(B, 4)`` tensors :class:`D2MP` takes.
    """

    METAINFO = dict(classes=('animal', ))

    def __init__(self, data_root: str, protocol: str | int | None = None, split: str | None = None,
                 videos: SequenceType[str] | None = None, exclude_videos: SequenceType[str] = (), stride: int = 1,
                 interval: int = 5, **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f'TrajectoryWindowDataset: unknown argument(s) {sorted(kwargs)}')
        if videos is not None and split is not None:
            raise ValueError('TrajectoryWindowDataset: give either videos or split, not both')
        if interval < 1:
            raise ValueError(f'TrajectoryWindowDataset: interval must be >= 1, got {interval}')
        self.data_root, self.stride, self.interval = data_root, stride, interval
        if videos is not None:
            known = set(list_sequences(data_root))
            unknown = [v for v in videos if v not in known]
            if unknown:
                raise KeyError(f'TrajectoryWindowDataset: video(s) {unknown[:5]} not under {data_root}')
            names = list(videos)
        else:
            names = select_videos(data_root, protocol, split)
        excluded = set(exclude_videos)
        self.videos = [v for v in names if v not in excluded]
        if not self.videos:
            raise ValueError(f'TrajectoryWindowDataset: no videos left under {data_root} (split {protocol}/{split}, '
                             f'{len(excluded)} excluded)')
        rows, starts = [], []
        offset = 0
        span = interval + 2
        for name in self.videos:
            sequence = load_sequence(data_root, name, stride=stride)
            if sequence.gt is None:
                raise FileNotFoundError(f'{osp.join(sequence.directory, "gt", "gt.txt")}: missing (training '
                                        'windows come from the ground truth)')
            width, height = sequence.info.get('imWidth'), sequence.info.get('imHeight')
            if not width or not height:
                raise KeyError(f'{osp.join(sequence.directory, "seqinfo.ini")}: imWidth and imHeight are needed to '
                               'normalise the boxes')
            gt = sequence.gt.select(sequence.gt.valid != 0)
            for track in track_rows(gt.frames, gt.ids, gt.boxes, width, height):
                if len(track) < span:
                    continue
                rows.append(track)
                starts.append(offset + np.arange(len(track) - span + 1))
                offset += len(track)
        self.rows = np.concatenate(rows) if rows else np.zeros((0, 4))
        self.starts = np.concatenate(starts) if starts else np.zeros(0, np.int64)

    @property
    def metainfo(self) -> dict:
        return dict(self.METAINFO)

    def __len__(self) -> int:
        return len(self.starts)

    def windows(self, index: Any) -> tuple[np.ndarray, np.ndarray]:
        """Conditions ``(k, interval, 8)`` and targets ``(k, 4)`` (float64) of the windows ``index`` (an int,
        slice or index array), vectorised."""
        starts = np.atleast_1d(self.starts[index])
        boxes = self.rows[starts[:, None] + np.arange(self.interval + 2)]  # (k, interval + 2, 4)
        history = boxes[:, :self.interval + 1]
        conds = np.concatenate([history[:, 1:], history[:, 1:] - history[:, :-1]], axis=2)
        return conds, boxes[:, -1] - boxes[:, -2]

    def __getitem__(self, index: int) -> dict:
        conds, target = self.windows(index)
        return dict(inputs=torch.from_numpy(conds[0].astype(np.float32)),
                    data_samples=torch.from_numpy(target[0].astype(np.float32)))
