"""TransTrack's association (Sun et al., 2020), a faithful port of the official ``Tracker.init_track`` / ``step``.

Follows PeizeSun/TransTrack ``models/tracker.py`` at ``f74729f`` (the last commit that changed it; HEAD ``91cfaa7``
has the same file), driven as ``engine_track.evaluate`` drives it, and ``models/save_track.py``'s output rule
(reference/trackers.md section 4). The network's part is TransTrack's; per frame this tracker receives

* ``frame.detections``: ALL object queries of the current frame in query order (row ``i`` = query ``i``; boxes
  ``x1 y1 x2 y2`` in original-frame pixels, scores in [0, 1]);
* ``frame.extra_dets['tracking']``: the track decoder's outputs, row ``i`` = the PREVIOUS frame's query ``i``
  relocated into the current frame (the same number of rows: query identity is what links the two frames).

On a video's first frame (after :meth:`reset`, or whenever ``frame_id == 1``, where ``engine_track`` calls
``reset_all``) every query with ``score >= track_thresh`` starts a track (``init_track``). Then per frame (``step``):

1. the tracks started or continued by the previous frame's queries, keyed by their query index, take the track
   decoder's box of that index (``tracking`` row ``i``);
2. detections: the queries with ``score >= track_thresh``, in query order;
3. candidates: those tracks (query order), then the older unmatched tracks (their stale boxes, not moved);
4. cost ``1 - S`` (S the matcher's similarity of detection and candidate, detections as rows), Hungarian
   (``scipy.optimize.linear_sum_assignment``); a Hungarian pair with ``S < min_similarity`` is rejected;
5. a matched detection inherits the candidate's id, the others get new ids (first the detections Hungarian left
   out, in query order, then the rejected ones, in the order of their pairs); every detection becomes a track of age
   1 keyed by its query index; an unmatched candidate with ``age < max_age`` ages by one and is kept inactive, the
   others are forgotten.

Output (``save_track``): the active tracks, i.e. this frame's detections (their boxes and scores), in the official
order: matched ones (query order), then the new ones (in id order). Ids are the official ``tracking_id``
exactly: ``save_track`` renumbers ids by rank over the video, which is the identity because every id is reported
(active) in the frame that creates it and ids are created consecutively from 1 per video.

The memory (``max_age`` 32): a track detected in frame ``f`` and then unmatched is a candidate in frames ``f+1 ...
f+32`` (it survives 31 unmatched steps, ``age`` 2..32) and is gone after its 32nd unmatched step; so it can be
revived after up to 31 frames without a match, not 32.

Similarity (``matcher``): the default is the normalised GIoU, ``S = (GIoU + 1) / 2`` (``MATCHERS`` ``GIoU``: no +1
pixel convention, as the official ``box_ops.generalized_box_iou``). The official cost ``1 - GIoU = 2 (1 - S)`` is a
positive multiple of ``1 - S`` (the same Hungarian solution), and its rejection ``1 - GIoU > 1.2`` is ``S < 0.4``:
``min_similarity=0.4`` reproduces the official decisions with the default matcher and gives the same rule to any
matcher with S in [0, 1] (a pair a matcher's gate rejects costs 1 and is never kept). The official code computes
GIoU in float32, this port in float64: decisions can differ only for pairs within float32 rounding of the
threshold or for near-equal assignments.

Checked against the official code's own output in tests/models/trackers/test_transtrack_tracker.py (tests/fixtures/
transtrack_official).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from vastmat.registry import MATCHERS, MODELS
from vastmat.structures.tracking import FrameDetections, TrackingFrame, TrackOutput

from ..association.solvers import Hungarian  # (importing ..association registers GIoU, the default matcher)
from .base_tracker import BaseTracker
from .motion_context import matcher_context


class TransTrackTrack:
    """One official track dict: ``tracking_id``, ``bbox`` (x1 y1 x2 y2), ``score``, ``age``, ``active``; and, for
    a matcher's frame context (not in the official code), ``displacement``: how far the track decoder moved the box's
    centre into this frame, in pixels (NaN when unknown: not relocated, or a stale inactive box)."""

    __slots__ = ('track_id', 'bbox', 'score', 'age', 'active', 'displacement')

    def __init__(self, track_id: int, bbox: np.ndarray, score: float) -> None:
        self.track_id, self.bbox, self.score, self.age, self.active = track_id, bbox, score, 1, 1
        self.displacement = float('nan')

    def __repr__(self) -> str:
        return (f'TransTrackTrack(id={self.track_id}, bbox={self.bbox.tolist()}, score={self.score:.4f}, '
                f'age={self.age}, active={self.active})')


@MODELS.register_module()
class TransTrackTracker(BaseTracker):
    """The official TransTrack ``Tracker`` (its defaults are the official code's).

    Args:
        track_thresh: queries with ``score >= track_thresh`` are the frame's detections (the official
            ``score_thresh``; ``--track_thresh`` 0.4 in ``main_track.py``).
        min_similarity: a Hungarian pair whose similarity is below this is rejected. 0.4 with the default matcher is
            the official ``1 - GIoU > 1.2`` (``1 - min_similarity = 1.2 / 2``); in general an official cost limit
            ``c`` on ``1 - GIoU`` is ``min_similarity = 1 - c / 2``.
        max_age: an unmatched track is kept while its age (1 when last detected, +1 per unmatched frame) is below
            this (official 32): it can be revived after up to ``max_age - 1`` unmatched frames.
        matcher: the similarity S in [0, 1] (a ``MATCHERS`` config or object); default ``dict(type='GIoU')``,
            ``(GIoU + 1) / 2``.
        tracking_key: the ``frame.extra_dets`` entry holding the track decoder's boxes.
    """

    zoo_name = 'TransTrack'
    zoo_demo_config = 'transtrack/transtrack_tiny_zoo_vastmat-demo.py'

    def __init__(self, track_thresh: float = 0.4, min_similarity: float = 0.4, max_age: int = 32,
                 matcher: dict | Any | None = None, tracking_key: str = 'tracking',
                 init_cfg: dict | None = None) -> None:
        super().__init__(init_cfg)
        if not 0.0 <= min_similarity <= 1.0:
            raise ValueError(f'TransTrackTracker: min_similarity must be in [0, 1], got {min_similarity} (the '
                             'official 1 - GIoU > 1.2 is min_similarity 0.4)')
        if max_age < 1:
            raise ValueError(f'TransTrackTracker: max_age must be >= 1, got {max_age}')
        self.track_thresh, self.min_similarity, self.max_age = track_thresh, min_similarity, int(max_age)
        matcher = matcher if matcher is not None else dict(type='GIoU')
        self.matcher = MATCHERS.build(matcher) if isinstance(matcher, dict) else matcher
        self.solver = Hungarian()  # plain minimum-cost assignment; the rejection follows, in the official order
        self.tracking_key = tracking_key
        self.required_inputs = (f'extra_dets.{tracking_key}', )
        self.reset()

    def reset(self) -> None:
        """The official ``reset_all``: no tracks, ids restart at 1."""
        self.id_count = 0
        self.by_query: dict[int, TransTrackTrack] = {}  # the previous frame's detections, by query index
        self.unmatched: list[TransTrackTrack] = []  # older tracks, inactive, boxes stale
        self.initialised = False

    def _new_id(self) -> int:
        self.id_count += 1
        return self.id_count

    # ----------------------------------------------------------------------------------------------------- inputs
    def _queries(self, frame: TrackingFrame) -> tuple[FrameDetections, FrameDetections]:
        frame.require(*self.required_inputs)
        where = f'video {frame.video_name!r} frame {frame.frame_id}'
        dets, relocated = frame.detections, frame.extra_dets[self.tracking_key]
        if dets.num_dropped or relocated.num_dropped:
            raise ValueError(f'{where}: {dets.num_dropped} object queries and {relocated.num_dropped} '
                             f'{self.tracking_key!r} queries had zero-size boxes and were dropped, which breaks the '
                             'query index identity TransTrackTracker relies on; the network must give every query a '
                             'box of positive size')
        if len(dets) != len(relocated):
            raise ValueError(f'{where}: {len(dets)} object queries (frame.detections) but {len(relocated)} rows in '
                             f"frame.extra_dets[{self.tracking_key!r}]: TransTrackTracker needs every query of the "
                             'frame (unfiltered, in query order) in both sets, row i of the second being the previous '
                             "frame's query i relocated by the track decoder")
        return dets, relocated

    # ---------------------------------------------------------------------------------------------------- update
    def update(self, frame: TrackingFrame) -> TrackOutput:
        dets, relocated = self._queries(frame)
        if frame.frame_id == 1 and self.initialised:  # engine_track: reset_all at every video's frame 1
            self.reset()
        keep = np.flatnonzero(dets.scores >= self.track_thresh)
        if not self.initialised:
            reported = self.init_track(dets, keep)
        else:
            reported = self.step(dets, relocated, keep)
        if not reported:
            return TrackOutput.empty()
        return TrackOutput(np.array([t.track_id for t in reported], np.int64),
                           np.array([t.bbox for t in reported], np.float64).reshape(-1, 4),
                           np.array([t.score for t in reported], np.float64))

    def init_track(self, dets: FrameDetections, keep: np.ndarray) -> list[TransTrackTrack]:
        """The official ``init_track``: a track per detection, ids in query order."""
        self.by_query = {int(i): TransTrackTrack(self._new_id(), dets.bboxes[i].copy(), float(dets.scores[i]))
                         for i in keep}
        self.unmatched = []
        self.initialised = True
        return list(self.by_query.values())

    def step(self, dets: FrameDetections, relocated: FrameDetections, keep: np.ndarray) -> list[TransTrackTrack]:
        """The official ``step``; returns the active tracks in the official order."""
        for index, track in self.by_query.items():  # the track decoder's box for the same query slot
            if index < len(relocated):  # (the official loop runs over this frame's queries only)
                moved = relocated.bboxes[index] - track.bbox
                track.displacement = float(np.hypot(moved[0] + moved[2], moved[1] + moved[3])) / 2.0
                track.bbox = relocated.bboxes[index].copy()
        detections = [TransTrackTrack(0, dets.bboxes[i].copy(), float(dets.scores[i])) for i in keep]
        candidates = list(self.by_query.values()) + self.unmatched
        n, m = len(detections), len(candidates)

        matched: list[TransTrackTrack] = []
        unmatched_dets, unmatched_candidates = list(range(n)), list(range(m))
        if n and m:
            similarity = self.matcher(np.array([t.bbox for t in candidates]), dets.bboxes[keep],
                                      **matcher_context(self.matcher, candidates, n))
            scores = np.asarray(similarity.scores, np.float64).T  # (detections, candidates), the official layout
            allowed = scores >= self.min_similarity
            if similarity.gate is not None:
                gate = np.asarray(similarity.gate, bool).T
                allowed &= gate
                scores = scores * gate
            assignment = self.solver(1.0 - scores)  # rows sorted, as linear_sum_assignment returns them
            pairs = assignment.matches
            paired_dets, paired_candidates = set(pairs[:, 0].tolist()), set(pairs[:, 1].tolist())
            unmatched_dets = [d for d in range(n) if d not in paired_dets]
            unmatched_candidates = [c for c in range(m) if c not in paired_candidates]
            for d, c in pairs.tolist():
                if allowed[d, c]:
                    detections[d].track_id = candidates[c].track_id
                    matched.append(detections[d])
                else:  # rejected: both sides unmatched, appended after the ones Hungarian left out
                    unmatched_dets.append(d)
                    unmatched_candidates.append(c)
        for d in unmatched_dets:
            detections[d].track_id = self._new_id()
        survivors = []
        for c in unmatched_candidates:
            track = candidates[c]
            if track.age < self.max_age:
                track.age += 1
                track.active = 0
                track.displacement = float('nan')  # its box stays where it was last seen
                survivors.append(track)
        self.by_query = {int(i): det for i, det in zip(keep, detections)}
        self.unmatched = survivors
        return matched + [detections[d] for d in unmatched_dets]
