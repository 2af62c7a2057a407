"""The ByteTrack-family lifecycle on track objects: the official ``joint_stracks`` / ``sub_stracks`` /
``remove_duplicate_stracks`` and the end of ``update`` transcribed list by list (reference/trackers.md section 1,
steps 7-9). No tracker uses it: it is tests/models/trackers/test_track_store.py's reference for :class:`.TrackStore`,
which does the same on rows of arrays (the trackers' oracle is the official code's output, in the golden tests).

Faithful quirk of the official code: removed tracks are subtracted from the lost list *before* this frame's removals
are added, so a lost track removed in frame t is still lost (and matchable) in frame t + 1.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from vastmat.models.trackers.track_lifecycle import LOST, REMOVED, TRACKED
from vastmat.structures.pair_geometry import PairGeometry


class Track:
    """What the lifecycle reads of a track (the official ``BaseTrack`` / ``STrack`` bookkeeping fields).

    ``frame_id`` is the last frame the track was matched in (the official ``end_frame``); a track started in the
    video's first frame is confirmed at once, later ones by their second detection (official ``activate``).
    """

    __slots__ = ('track_id', 'state', 'is_activated', 'frame_id', 'start_frame', 'score')

    def __init__(self, track_id: int, score: float, frame_id: int) -> None:
        self.track_id, self.score = track_id, score
        self.state, self.is_activated = TRACKED, frame_id == 1
        self.frame_id = self.start_frame = frame_id

    def mark_matched(self, score: float, frame_id: int) -> None:
        """Official ``update`` / ``re_activate`` bookkeeping (the tracker updates its own state)."""
        self.score, self.frame_id = score, frame_id
        self.state, self.is_activated = TRACKED, True


def joint_tracks(a: list[Track], b: list[Track]) -> list[Track]:
    """``a`` then the tracks of ``b`` whose id is not in ``a`` (official ``joint_stracks``)."""
    seen = {t.track_id for t in a}
    return a + [t for t in b if t.track_id not in seen]


def sub_tracks(a: list[Track], b: list[Track]) -> list[Track]:
    """The tracks of ``a`` whose id is not in ``b`` (official ``sub_stracks``)."""
    drop = {t.track_id for t in b}
    return [t for t in a if t.track_id not in drop]


def remove_duplicates(a: list[Track], b: list[Track], boxes: Callable[[list[Track]], np.ndarray],
                      thresh: float) -> tuple[list[Track], list[Track]]:
    """Of a tracked and a lost track with ``1 - IoU < thresh`` (+1 pixel IoU, as ``cython_bbox``), drop the one
    tracked for fewer frames (official ``remove_duplicate_stracks``)."""
    if not a or not b:
        return a, b
    distance = 1.0 - PairGeometry(boxes(a), boxes(b), plus_one=True).iou
    drop_a, drop_b = set(), set()
    for p, q in zip(*np.nonzero(distance < thresh)):
        if a[p].frame_id - a[p].start_frame > b[q].frame_id - b[q].start_frame:
            drop_b.add(q)
        else:
            drop_a.add(p)
    return [t for i, t in enumerate(a) if i not in drop_a], [t for i, t in enumerate(b) if i not in drop_b]


class TrackLifecycle:
    """The tracked and lost lists, the ids of removed tracks and the id counter of one video.

    Args:
        boxes: ``x1 y1 x2 y2`` of a list of tracks (their current state), for duplicate removal.
        duplicate_thresh: IoU distance below which a tracked and a lost track are duplicates (official 0.15).
    """

    def __init__(self, boxes: Callable[[list[Track]], np.ndarray], duplicate_thresh: float = 0.15) -> None:
        self.boxes, self.duplicate_thresh = boxes, duplicate_thresh
        self.reset()

    def reset(self) -> None:
        self.tracked: list[Track] = []
        self.lost: list[Track] = []
        # the official code keeps an ever-growing list of removed tracks and subtracts it every frame; their ids
        # are all it reads
        self.removed_ids: set[int] = set()
        self.next_id = 1

    def new_id(self) -> int:
        track_id, self.next_id = self.next_id, self.next_id + 1
        return track_id

    def confirmed_and_unconfirmed(self) -> tuple[list[Track], list[Track]]:
        """The tracked tracks split into confirmed (activated) and unconfirmed ones."""
        return ([t for t in self.tracked if t.is_activated], [t for t in self.tracked if not t.is_activated])

    def pool(self, confirmed: list[Track]) -> list[Track]:
        """The first association's tracks: confirmed tracked ones, then the lost ones."""
        return joint_tracks(confirmed, self.lost)

    def stale_lost(self, frame_id: int, max_time_lost: int) -> list[Track]:
        """Lost tracks not matched for more than ``max_time_lost`` frames (to be removed by :meth:`finish_frame`)."""
        return [t for t in self.lost if frame_id - t.frame_id > max_time_lost]

    def finish_frame(self, activated: list[Track], refound: list[Track], new_lost: list[Track],
                     removed: list[Track]) -> list[Track]:
        """The official end of ``update``: merge the frame's outcome into the lists, drop duplicates, and return
        the tracks reported in this frame (tracked and activated).

        Args:
            activated: tracks matched while tracked, and new tracks.
            refound: lost tracks matched again.
            new_lost: tracked tracks not matched in this frame (already marked lost).
            removed: tracks removed in this frame (unconfirmed without a match, stale lost ones).
        """
        for track in new_lost:
            track.state = LOST
        for track in removed:
            track.state = REMOVED
        tracked = [t for t in self.tracked if t.state == TRACKED]
        self.tracked = joint_tracks(joint_tracks(tracked, activated), refound)
        lost = sub_tracks(self.lost, self.tracked) + new_lost
        self.lost = [t for t in lost if t.track_id not in self.removed_ids]
        self.removed_ids.update(t.track_id for t in removed)
        self.tracked, self.lost = remove_duplicates(self.tracked, self.lost, self.boxes, self.duplicate_thresh)
        return [t for t in self.tracked if t.is_activated]
