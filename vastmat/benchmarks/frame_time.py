"""Time per frame of a tracker's ``update`` against the number of tracks it carries into the frame (tracked and lost
ones: those a motion model predicts), on cached detections: where a tracker's time grows with its tracks (DiffMOT's
D2MP predicts every track of a frame in one batched call, so its time should grow slowly with them).

Each video runs ``repeats`` times; per frame the best time counts. Frames are grouped by their track count (bins of
``bin_width``); per group: frames, mean and median milliseconds, frames/s.
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
from rich.table import Table
from tqdm import tqdm

from vastmat.models.trackers.track_store import TrackList
from vastmat.utils.errors import UserInputError


def tracks_alive(tracker: Any) -> int:
    """Tracks the tracker carries into its next frame: its tracked and lost rows (a :class:`.TrackStore`) or its
    live rows (a :class:`.TrackList`, TrackTrack)."""
    tracks = tracker.tracks
    if isinstance(tracks, TrackList):
        return len(tracks.live)
    return len(tracks.tracked) + len(tracks.lost)


def frame_times(tracker: Any, videos: list[list], repeats: int = 3) -> list[tuple[int, float]]:
    """``(tracks alive before the frame, best seconds of its update)`` for every frame of ``videos`` (each a list of
    prepared :class:`~vastmat.structures.tracking.TrackingFrame`)."""
    if repeats < 1:
        raise UserInputError(f'--repeats {repeats}: at least 1')
    records = []
    for frames in tqdm(videos, desc='videos'):
        best, counts = np.full(len(frames), np.inf), np.zeros(len(frames), np.int64)
        for _ in range(repeats):
            tracker.reset()
            for i, frame in enumerate(frames):
                counts[i] = tracks_alive(tracker)  # the same every repeat: the tracker is deterministic per video
                start = time.perf_counter()
                tracker.update(frame)
                best[i] = min(best[i], time.perf_counter() - start)
        records += zip(counts.tolist(), best.tolist())
    return records


def by_track_count(records: Sequence[tuple[int, float]], bin_width: int = 10) -> list[dict]:
    """The frames grouped by track count (``[k * bin_width, (k + 1) * bin_width)``): frames, mean and median ms,
    frames/s (from the mean)."""
    if bin_width < 1:
        raise UserInputError(f'--bin-width {bin_width}: at least 1')
    counts = np.array([c for c, _ in records], np.int64)
    seconds = np.array([s for _, s in records])
    groups = []
    for low in range(0, int(counts.max(initial=0)) + 1, bin_width):
        inside = (counts >= low) & (counts < low + bin_width)
        if inside.any():
            mean = float(seconds[inside].mean())
            groups.append(dict(tracks=f'{low}-{low + bin_width - 1}', frames=int(inside.sum()), mean_ms=mean * 1e3,
                               median_ms=float(np.median(seconds[inside])) * 1e3, fps=1.0 / mean))
    return groups


def frame_time_results(records: Sequence[tuple[int, float]], bin_width: int = 10) -> dict:
    """All frames (count, mean ms, frames/s, the track counts' mean and maximum) and :func:`by_track_count`."""
    if not records:
        raise UserInputError('no frames were timed')
    counts = np.array([c for c, _ in records])
    total = float(sum(s for _, s in records))
    return dict(frames=len(records), seconds=total, fps=len(records) / total, mean_ms=total / len(records) * 1e3,
                mean_tracks=float(counts.mean()), max_tracks=int(counts.max()),
                by_tracks=by_track_count(records, bin_width))


def frame_time_table(results: dict, title: str) -> Table:
    table = Table(title=f'{title}: {results["frames"]} frames, {results["fps"]:.0f} frames/s, '
                        f'{results["mean_tracks"]:.1f} tracks per frame on average (max {results["max_tracks"]})')
    for column in ('tracks', 'frames', 'mean ms', 'median ms', 'frames/s'):
        table.add_column(column, justify='right')
    for group in results['by_tracks']:
        table.add_row(group['tracks'], str(group['frames']), f'{group["mean_ms"]:.2f}', f'{group["median_ms"]:.2f}',
                      f'{group["fps"]:.0f}')
    return table
