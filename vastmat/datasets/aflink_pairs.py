"""Training pairs for AFLink's PostLinker, cut from ground-truth tracks (StrongSORT / TrackTrack ``AFLink/dataset.py``,
``LinkData``), and the window + normalisation transform AFLink applies to a pair of tracks at inference.

A track is an ``(n, 5)`` array of rows ``frame, left, top, width, height`` in frame order. A pair ``(former, latter)``
becomes two ``(1, L, 5)`` float32 windows (``L = input_len = 30``): the last ``L`` rows of the former track
(zero rows prepended when it is shorter) and the first ``L`` rows of the latter (zero rows appended), then min-max
normalised per column over both windows together, zero rows included: ``(x - (max + min) / 2) / ((max - min) / 2 +
1e-5)``. The PostLinker only looks at the first three columns (frame, left, top).
"""
from __future__ import annotations

import random
from typing import Sequence as SequenceType

import numpy as np
import torch
from torch.utils.data import Dataset

from vastmat.registry import DATASETS

from .sequences import load_sequence, select_videos

MODES = ('train', 'val')


def fill_or_cut(track: np.ndarray, length: int, former: bool) -> np.ndarray:
    """The ``length``-row window of a track: its last rows when it is the ``former`` of a pair, its first rows
    otherwise; a shorter track is padded with zero rows in front (former) or behind (latter)."""
    track = np.asarray(track, np.float64)
    n, width = track.shape
    if n >= length:
        return track[-length:] if former else track[:length]
    zeros = np.zeros((length - n, width))
    return np.concatenate((zeros, track) if former else (track, zeros), axis=0)


def normalize_windows(former: np.ndarray, latter: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Joint per-column min-max normalisation of windows ``(..., L, C)`` (any leading batch shape), computed in
    float64 with the official operations and order, returned as float32 (what ``torch.tensor(.., dtype=float)`` of
    the official gives)."""
    low = np.minimum(former.min(axis=-2), latter.min(axis=-2))[..., None, :]
    high = np.maximum(former.max(axis=-2), latter.max(axis=-2))[..., None, :]
    subtractor = (high + low) / 2
    divisor = (high - low) / 2 + 1e-5
    return ((former - subtractor) / divisor).astype(np.float32), ((latter - subtractor) / divisor).astype(np.float32)


def transform_pair(former: np.ndarray, latter: np.ndarray, length: int = 30) -> tuple[torch.Tensor, torch.Tensor]:
    """The official ``LinkData.transform``: two ``(1, length, C)`` float32 tensors."""
    x1, x2 = normalize_windows(fill_or_cut(former, length, True), fill_or_cut(latter, length, False))
    return torch.from_numpy(x1)[None], torch.from_numpy(x2)[None]


@DATASETS.register_module()
class AFLinkPairs(Dataset):
    """Ground-truth tracks as PostLinker training samples, as the official ``LinkData``.

    One item per ground-truth track of at least ``min_len`` rows (valid rows only: the official keeps MOT17's
    'considered' pedestrians; every VastMAT animal is the one class). An item holds four pairs of windows and their
    labels ``(1, 0, 0, 0)``:

    1. ``(A, B)``: the track cut in two at a gap: positive;
    2. ``(B, A)``: the same halves in the wrong temporal order: negative;
    3. ``(A, B_t)``: B shifted in time by +-30..100 frames: negative;
    4. ``(A, B_s)``: B shifted in space by +-100..500 px in x and in y (signs drawn separately): negative.

    ``mode='train'`` draws, as the official with Python's ``random``, the cut ``c`` uniformly in ``[min_len // 3,
    n - min_len // 3]``, then ``A = rows[:c + int(N(-5, 3))]`` and ``B = rows[c + int(N(5, 3)):]`` (Python slicing,
    so a gap of a few frames, sometimes an overlap). ``mode='val'`` is the official deterministic variant: ``c = n //
    2``, no gap, shifts ``(-1) ** c * 50`` frames and ``(-1) ** c * 300`` px. The official draws no negatives from
    other identities; neither does this.

    Args:
        data_root: a VastMAT root or a MOTChallenge split folder (e.g. AnimalTrack's ``train``).
        protocol, split: a VastMAT protocol split (``protocol1``, ``train``); ``None``: every video of the root.
        videos: an explicit list of video names instead of a split.
        stride: keep every ``stride``-th frame of the ground truth (3 turns 30 FPS into 10 FPS), renumbered.
        mode: ``'train'`` (random cuts and shifts) or ``'val'`` (fixed ones).
        min_len: tracks shorter than this are not used (official 30).
        input_len: window length ``L`` (official 30; the PostLinker's convolutions need at least 25).

    Items: ``dict(track1=(4, 1, L, 5) float32, track2=(4, 1, L, 5) float32, labels=(4,) int64)``; the columns are
    frame, left, top, width, height (ground-truth pixels and frame numbers before the normalisation).
    """

    metainfo = dict(classes=('different', 'same'))

    def __init__(self, data_root: str, protocol: str | int | None = None, split: str | None = None,
                 videos: SequenceType[str] | None = None, stride: int = 1, mode: str = 'train', min_len: int = 30,
                 input_len: int = 30) -> None:
        if mode not in MODES:
            raise ValueError(f'AFLinkPairs: mode must be one of {MODES}, got {mode!r}')
        if videos is not None and split is not None:
            raise ValueError('AFLinkPairs: give either videos or split, not both')
        if min_len < 1 or input_len < 25:
            raise ValueError(f'AFLinkPairs: min_len must be >= 1 and input_len >= 25 (the PostLinker shrinks a '
                             f'window by 24 rows), got min_len={min_len}, input_len={input_len}')
        self.data_root, self.mode, self.min_len, self.input_len = data_root, mode, min_len, input_len
        names = list(videos) if videos is not None else select_videos(data_root, protocol, split)
        self.tracks: list[np.ndarray] = []
        self.track_keys: list[tuple[str, int]] = []
        for name in names:
            gt = load_sequence(data_root, name, stride=stride).gt
            if gt is None:
                raise FileNotFoundError(f'AFLinkPairs: video {name} of {data_root} has no gt/gt.txt')
            gt = gt.select(gt.valid == 1)
            order = np.lexsort((gt.frames, gt.ids))  # by id, then frame
            ids, rows = gt.ids[order], np.column_stack([gt.frames[order], gt.boxes[order]]).astype(np.float64)
            starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
            for start, end in zip(starts, np.r_[starts[1:], len(ids)]):
                if end - start >= min_len:
                    self.tracks.append(rows[start:end])
                    self.track_keys.append((name, int(ids[start])))
        if not self.tracks:
            raise ValueError(f'AFLinkPairs: no valid ground-truth track of at least {min_len} rows in {data_root} '
                             f'(videos: {names[:5]}{" ..." if len(names) > 5 else ""})')

    def __len__(self) -> int:
        return len(self.tracks)

    def _cut(self, info: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The halves A, B and the shifted copies B_t, B_s (the official ``__getitem__``)."""
        n = len(info)
        if self.mode == 'train':
            cut = random.randint(self.min_len // 3, n - self.min_len // 3)
            first = info[:cut + int(random.normalvariate(-5, 3))]
            second = info[cut + int(random.normalvariate(5, 3)):]
            shifted_t = second.copy()
            shifted_t[:, 0] += (-1) ** random.randint(1, 2) * random.randint(30, 100)
            shifted_s = second.copy()
            shifted_s[:, 1] += (-1) ** random.randint(1, 2) * random.randint(100, 500)
            shifted_s[:, 2] += (-1) ** random.randint(1, 2) * random.randint(100, 500)
        else:
            cut = n // 2
            first, second = info[:cut], info[cut:]
            shifted_t = second.copy()
            shifted_t[:, 0] += (-1) ** cut * 50
            shifted_s = second.copy()
            shifted_s[:, 1] += (-1) ** cut * 300
            shifted_s[:, 2] += (-1) ** cut * 300
        return first, second, shifted_t, shifted_s

    def __getitem__(self, index: int) -> dict:
        first, second, shifted_t, shifted_s = self._cut(self.tracks[index])
        pairs = [transform_pair(a, b, self.input_len)
                 for a, b in ((first, second), (second, first), (first, shifted_t), (first, shifted_s))]
        return dict(track1=torch.stack([p[0] for p in pairs]), track2=torch.stack([p[1] for p in pairs]),
                    labels=torch.tensor([1, 0, 0, 0], dtype=torch.int64))
