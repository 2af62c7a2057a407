"""A video's tracks as tracklets, and the cost of linking one tracklet's end to another's start (the link graph of
:class:`~vastmat.models.post.global_linking.GlobalLinker`).

Written here: the tracklet summaries and the candidate links are a few vectorised numpy passes over a video's rows;
no library builds them from MOT rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Tracklets:
    """One video's tracks, one entry a track id; the rows sorted by id, then frame (``order``, ``offsets``).

    ``start``/``end`` are the first and last frames; ``head``/``tail`` the centres and sizes (``sqrt(w h)``) at them;
    ``head_velocity``/``tail_velocity`` the centre's motion in pixels a frame over the first/last ``window`` rows
    (0 for a single row); ``head_feature``/``tail_feature`` the mean L2-normalised appearance over those rows
    (None without features).
    """

    ids: np.ndarray
    start: np.ndarray
    end: np.ndarray
    length: np.ndarray
    mean_score: np.ndarray
    head_centre: np.ndarray
    tail_centre: np.ndarray
    head_size: np.ndarray
    tail_size: np.ndarray
    head_velocity: np.ndarray
    tail_velocity: np.ndarray
    head_feature: np.ndarray | None
    tail_feature: np.ndarray | None
    order: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def rows_of(self, index: int) -> np.ndarray:
        """The row indices (into the video's rows) of tracklet ``index``, by frame."""
        return self.order[self.offsets[index]:self.offsets[index + 1]]


def _window_mean(values: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Mean of ``values[first[k]:last[k] + 1]`` for every k (cumulative sums)."""
    cumulative = np.concatenate([np.zeros((1,) + values.shape[1:]), np.cumsum(values, axis=0)])
    count = (last - first + 1).reshape((-1,) + (1,) * (values.ndim - 1))
    return (cumulative[last + 1] - cumulative[first]) / count


def _normalised(features: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(features, axis=1, keepdims=True)
    return features / np.maximum(norm, 1e-12)


def build_tracklets(rows: np.ndarray, features: np.ndarray | None = None, window: int = 3,
                    where: str = 'tracks') -> Tracklets:
    """The tracklets of rows ``frame, id, x1, y1, x2, y2, score`` (and optional per-row ``features (N, d)``).

    Raises ``ValueError`` naming ``where`` for an id reported twice in one frame, a box with no area, or a
    non-finite value: a linker must not build identities on such input.
    """
    rows = np.asarray(rows, np.float64).reshape(-1, 7)
    if not np.isfinite(rows).all():
        raise ValueError(f'{where}: a track row holds NaN or infinite values')
    if ((rows[:, 4] <= rows[:, 2]) | (rows[:, 5] <= rows[:, 3])).any():
        bad = int(np.flatnonzero((rows[:, 4] <= rows[:, 2]) | (rows[:, 5] <= rows[:, 3]))[0])
        raise ValueError(f'{where}: frame {int(rows[bad, 0])} id {int(rows[bad, 1])}: a box with no width or height')
    order = np.lexsort((rows[:, 0], rows[:, 1]))
    ids_sorted, frames_sorted = rows[order, 1], rows[order, 0]
    repeated = (ids_sorted[1:] == ids_sorted[:-1]) & (frames_sorted[1:] == frames_sorted[:-1])
    if repeated.any():
        k = int(np.flatnonzero(repeated)[0])
        raise ValueError(f'{where}: id {int(ids_sorted[k])} appears twice in frame {int(frames_sorted[k])}')
    ids, first_index, length = np.unique(ids_sorted, return_index=True, return_counts=True)
    offsets = np.append(first_index, len(order))
    head, tail = offsets[:-1], offsets[1:] - 1
    head_last = np.minimum(head + window - 1, tail)
    tail_first = np.maximum(tail - window + 1, head)
    sorted_rows = rows[order]
    centre = (sorted_rows[:, 2:4] + sorted_rows[:, 4:6]) / 2
    size = np.sqrt((sorted_rows[:, 4] - sorted_rows[:, 2]) * (sorted_rows[:, 5] - sorted_rows[:, 3]))

    def velocity(first: np.ndarray, last: np.ndarray) -> np.ndarray:
        frames = frames_sorted[last] - frames_sorted[first]
        step = centre[last] - centre[first]
        return np.where(frames[:, None] > 0, step / np.maximum(frames, 1)[:, None], 0.0)

    head_feature = tail_feature = None
    if features is not None:
        features = np.asarray(features, np.float64)
        if features.ndim != 2 or len(features) != len(rows):
            raise ValueError(f'{where}: {len(rows)} rows but features of shape {features.shape}')
        unit = _normalised(features[order])
        head_feature = _normalised(_window_mean(unit, head, head_last))
        tail_feature = _normalised(_window_mean(unit, tail_first, tail))
    return Tracklets(
        ids=ids.astype(np.int64), start=frames_sorted[head].astype(np.int64), end=frames_sorted[tail].astype(np.int64),
        length=length, mean_score=_window_mean(sorted_rows[:, 6], head, tail),
        head_centre=centre[head], tail_centre=centre[tail], head_size=size[head], tail_size=size[tail],
        head_velocity=velocity(head, head_last), tail_velocity=velocity(tail_first, tail),
        head_feature=head_feature, tail_feature=tail_feature, order=order, offsets=offsets)


@dataclass(frozen=True)
class LinkCosts:
    """The terms of a link's cost (a link joins tracklet i's last frame to tracklet j's first, ``gap`` frames later).

    - motion: the centre extrapolated across the gap, forward from i's tail and backward from j's head (each
      velocity applied for at most ``extrapolate_frames``), its mean miss divided by
      ``size * (motion_sigma + motion_growth * gap)``, squared and halved: ``motion_weight * d**2 / 2``;
    - size: ``size_weight * log(size_j / size_i)**2``;
    - appearance (where the tracker gives features): ``appearance_weight * (1 - cos(tail_i, head_j))``;
    - gap: ``gap_weight * (gap - 1)``.

    A pair whose normalised miss ``d`` exceeds ``motion_gate`` or whose gap exceeds ``max_gap`` is no candidate.
    """

    # defaults: rounded from the linkers tuned on the ByteTrack and TrackTrack presets (tools/tune.py --space
    # linking, the tuning half of AnimalTrack-10fps-sim, docs/linking.md), max_gap kept at 3 s of 10 FPS video
    max_gap: int = 30
    motion_sigma: float = 0.45
    motion_growth: float = 0.05
    motion_weight: float = 1.0
    motion_gate: float = 3.5
    extrapolate_frames: int = 8
    size_weight: float = 4.0
    appearance_weight: float = 2.0
    gap_weight: float = 0.05


def candidate_pairs(tracklets: Tracklets, max_gap: int, next_starts: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, j)`` with ``0 < start_j - end_i <= max_gap``, plus each i's ``next_starts`` first tracklets to
    start after ``end_i`` however late (a known number of animals: a hidden animal may come back at any time)."""
    by_start = np.argsort(tracklets.start, kind='stable')
    starts = tracklets.start[by_start]
    first = np.searchsorted(starts, tracklets.end, side='right')
    last = np.searchsorted(starts, tracklets.end + max_gap, side='right')
    last = np.maximum(last, np.minimum(first + next_starts, len(starts)))
    counts = last - first
    i = np.repeat(np.arange(len(tracklets)), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    j = by_start[np.repeat(first, counts) + offsets]
    return i, j


def link_costs(tracklets: Tracklets, i: np.ndarray, j: np.ndarray, costs: LinkCosts) -> tuple[np.ndarray, np.ndarray]:
    """The cost of each candidate link ``i -> j`` and whether it passes the motion gate."""
    t = tracklets
    gap = (t.start[j] - t.end[i]).astype(np.float64)
    horizon = np.minimum(gap, costs.extrapolate_frames)[:, None]
    forward = t.tail_centre[i] + t.tail_velocity[i] * horizon
    backward = t.head_centre[j] - t.head_velocity[j] * horizon
    miss = (np.linalg.norm(forward - t.head_centre[j], axis=1)
            + np.linalg.norm(backward - t.tail_centre[i], axis=1)) / 2
    size = (t.tail_size[i] + t.head_size[j]) / 2
    distance = miss / (size * (costs.motion_sigma + costs.motion_growth * gap))
    cost = (costs.motion_weight * distance ** 2 / 2 + costs.size_weight * np.log(t.head_size[j] / t.tail_size[i]) ** 2
            + costs.gap_weight * (gap - 1))
    if t.tail_feature is not None:
        cosine = np.einsum('kd,kd->k', t.tail_feature[i], t.head_feature[j])
        cost = cost + costs.appearance_weight * (1 - cosine)
    return cost, distance <= costs.motion_gate


def max_concurrent(tracklets: Tracklets, min_length: int = 1) -> int:
    """The most tracklets of at least ``min_length`` rows present in one frame (their frame spans overlapping)."""
    keep = tracklets.length >= min_length
    if not keep.any():
        return 0
    events = np.concatenate([np.stack([tracklets.start[keep], np.ones(keep.sum())], 1),
                             np.stack([tracklets.end[keep] + 1, -np.ones(keep.sum())], 1)])
    events = events[np.lexsort((events[:, 1], events[:, 0]))]  # an end (-1) before a start at the same frame
    return int(np.cumsum(events[:, 1]).max())
