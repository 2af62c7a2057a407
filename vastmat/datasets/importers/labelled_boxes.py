"""What every importer of a labelled video returns: one box per labelled animal and frame, with its identity."""
from __future__ import annotations

import os.path as osp
from dataclasses import dataclass, field

import numpy as np

from vastmat.utils.errors import UserInputError


@dataclass
class LabelledBoxes:
    """The labels of one video, one row per box.

    ``frames`` are 0-based indices into the video (the labelling tools' numbering; messages name frames 1-based, as
    ``video frame N``, the numbering of the import's options and of a video player), ``ids`` run 1..K with
    ``id_names[k - 1]`` the identity's name in the label file (a SLEAP track, a DLC individual, a CVAT track id),
    ``boxes`` are ``(n, 4)`` left, top, width, height in pixels as labelled, ``visibility`` in [0, 1] (the share of
    visible keypoints for poses) or -1 unknown. ``video`` is the video the labels name (a path, or '' when the file
    names none); ``skipped`` counts what the reader left out, by reason, so that a summary can say so.
    """

    source: str
    video: str
    frames: np.ndarray
    ids: np.ndarray
    boxes: np.ndarray
    visibility: np.ndarray
    id_names: list[str]
    skipped: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.frames = np.asarray(self.frames, dtype=np.int64).reshape(-1)
        self.ids = np.asarray(self.ids, dtype=np.int64).reshape(-1)
        self.boxes = np.asarray(self.boxes, dtype=np.float64).reshape(-1, 4)
        self.visibility = np.asarray(self.visibility, dtype=np.float64).reshape(-1)
        n = len(self.frames)
        if not len(self.ids) == len(self.boxes) == len(self.visibility) == n:
            raise ValueError(f'{self.source}: frames, ids, boxes and visibility differ in length')
        if n == 0:
            raise UserInputError(f'{self.source}: the selection holds no labelled boxes'
                                 + (f' (left out: {describe_skipped(self.skipped)})' if self.skipped else ''))
        bad = ~np.isfinite(self.boxes).all(axis=1) | (self.boxes[:, 2] <= 0) | (self.boxes[:, 3] <= 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise UserInputError(f'{self.source}: video frame {self.frames[i] + 1} ({self.id_names[self.ids[i] - 1]}): box '
                                 f'{self.boxes[i].tolist()} has no area or is not finite')
        if self.frames.min() < 0:
            raise UserInputError(f'{self.source}: a negative frame index ({self.frames.min()})')
        if self.ids.min() < 1 or self.ids.max() > len(self.id_names):
            raise ValueError(f'{self.source}: ids must run 1..{len(self.id_names)}')
        pairs = self.frames * (int(self.ids.max()) + 1) + self.ids
        if len(np.unique(pairs)) != n:
            i = int(np.flatnonzero(np.bincount(np.unique(pairs, return_inverse=True)[1]) > 1)[0])
            twice = np.unique(pairs)[i]
            frame, ident = divmod(int(twice), int(self.ids.max()) + 1)
            raise UserInputError(f'{self.source}: video frame {frame + 1} labels identity {self.id_names[ident - 1]!r} twice')

    def __len__(self) -> int:
        return len(self.frames)

    @property
    def num_identities(self) -> int:
        return len(np.unique(self.ids))


def describe_skipped(skipped: dict[str, int]) -> str:
    return ', '.join(f'{count} {reason}' for reason, count in skipped.items() if count)


def boxes_from_points(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tight boxes around the visible (finite) keypoints of ``points`` ``(n, k, 2)``: ``(boxes ltwh, visibility
    (share of the k points visible), usable)`` where ``usable`` marks instances with at least two visible points
    spanning some width and height (a box needs an extent; the others are the caller's to count as skipped)."""
    points = np.asarray(points, dtype=np.float64).reshape(len(points), -1, 2)
    visible = np.isfinite(points).all(axis=2)
    count = visible.sum(axis=1)
    with np.errstate(invalid='ignore'):
        low = np.where(visible[..., None], points, np.inf).min(axis=1)
        high = np.where(visible[..., None], points, -np.inf).max(axis=1)
    boxes = np.concatenate([low, high - low], axis=1)
    usable = (count >= 2) & np.isfinite(boxes).all(axis=1)
    usable &= np.where(usable, (boxes[:, 2] > 0) & (boxes[:, 3] > 0), False)
    return boxes, count / max(points.shape[1], 1), usable


def same_video(name: str, video: str) -> bool:
    """Whether the file names ``name`` (from a label file) and ``video`` (a path given) name the same video: equal
    file names, or equal stems (``clip.mp4`` and its frame folder ``clip``)."""
    a, b = osp.basename(osp.normpath(name)), osp.basename(osp.normpath(video))
    return a == b or osp.splitext(a)[0] == osp.splitext(b)[0]


def check_video(path: str, named: str, video: str | None) -> str:
    """The video to return: ``video`` if given (refused when the labels name another), else the one named."""
    if video and named and not same_video(named, video):
        raise UserInputError(f'{path}: labels the video {osp.basename(named)}, not {osp.basename(osp.normpath(video))}'
                             ' (are these the video\'s labels?)')
    return video or named


def identities(path: str, frames: list[int], track_ids: list, tracks: bool) -> tuple[np.ndarray, list[str]]:
    """Ids 1..K and names: the tracks in order of their ids (``tracks``), else one identity per box."""
    if not tracks:
        ids = np.arange(1, len(frames) + 1)
        return ids, [f'instance {k}' for k in ids]
    untracked = [i for i, t in enumerate(track_ids) if t is None]
    if untracked:
        raise UserInputError(f'{path}: {len(untracked)} of {len(frames)} boxes have no track (the first in video '
                             f'frame {frames[untracked[0]] + 1}); pass --no-tracks to import boxes only')
    ordered = sorted(set(track_ids), key=lambda t: (isinstance(t, str), t))  # numbers, then names
    number = {t: k + 1 for k, t in enumerate(ordered)}
    return np.asarray([number[t] for t in track_ids], dtype=np.int64), [str(t) for t in ordered]
