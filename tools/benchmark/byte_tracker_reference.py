#!/usr/bin/env python
"""Benchmark: the optimised :class:`vastmat.models.trackers.BYTETracker` (IoU) against ByteTrack written the way the
official ``yolox/tracker/byte_tracker.py`` is: one object per track, one Kalman update per track (mmdet's
``KalmanFilter``, the same filter), lists re-joined every frame and the removed tracks kept for ever.

    python tools/benchmark/byte_tracker_reference.py --data-root DIR [--det-root DIR] [--videos N] [--repeats R]
        [--out FILE.json]

Both run on the same cached detections, timed as tools/benchmark/association_speed.py times its trackers (only
``update``, the best of ``--repeats`` per video, interleaved; vastmat.benchmarks.association_speed); it reports
the frames/s of both and whether their tracks are identical (ids, and boxes to 1e-6, in every frame). The oracle of
the port is the official code's own output (tests/models/trackers/test_bytetrack_golden.py), not this file. Not
registered, not part of the package: nothing imports it.
"""
from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from mmdet.models.task_modules.tracking import KalmanFilter

from vastmat.benchmarks.association_speed import add_video_arguments
from vastmat.models.association.solvers import LapJV
from vastmat.models.trackers import BaseTracker
from vastmat.registry import MATCHERS
from vastmat.structures.tracking import TrackingFrame, TrackOutput

TRACKED, LOST, REMOVED = 1, 2, 3


class STrack:
    """The official STrack: a detection until activated, then a Kalman-filtered track."""

    def __init__(self, tlwh: np.ndarray, score: float) -> None:
        self._tlwh = np.asarray(tlwh, dtype=np.float64)
        self.kalman_filter = None
        self.mean = self.covariance = None
        self.is_activated = False
        self.score = score
        self.tracklet_len = 0
        self.state = 0
        self.track_id = 0
        self.frame_id = self.start_frame = 0

    @property
    def tlwh(self) -> np.ndarray:
        if self.mean is None:
            return self._tlwh.copy()
        ret = self.mean[:4].copy()
        ret[2] *= ret[3]
        ret[:2] -= ret[2:] / 2
        return ret

    @property
    def tlbr(self) -> np.ndarray:
        ret = self.tlwh.copy()
        ret[2:] += ret[:2]
        return ret

    @staticmethod
    def tlwh_to_xyah(tlwh: np.ndarray) -> np.ndarray:
        ret = np.asarray(tlwh).copy()
        ret[:2] += ret[2:] / 2
        ret[2] /= ret[3]
        return ret

    def predict(self) -> None:
        mean = self.mean.copy()
        if self.state != TRACKED:
            mean[7] = 0
        self.mean, self.covariance = self.kalman_filter.predict(mean, self.covariance)

    def activate(self, kalman_filter: KalmanFilter, frame_id: int, track_id: int) -> None:
        self.kalman_filter = kalman_filter
        self.track_id = track_id
        self.mean, self.covariance = kalman_filter.initiate(self.tlwh_to_xyah(self._tlwh))
        self.tracklet_len = 0
        self.state = TRACKED
        self.is_activated = frame_id == 1
        self.frame_id = self.start_frame = frame_id

    def re_activate(self, new_track: 'STrack', frame_id: int) -> None:
        self.mean, self.covariance = self.kalman_filter.update(self.mean, self.covariance,
                                                               self.tlwh_to_xyah(new_track.tlwh))
        self.tracklet_len = 0
        self.state, self.is_activated, self.frame_id, self.score = TRACKED, True, frame_id, new_track.score

    def update(self, new_track: 'STrack', frame_id: int) -> None:
        self.frame_id = frame_id
        self.tracklet_len += 1
        self.mean, self.covariance = self.kalman_filter.update(self.mean, self.covariance,
                                                               self.tlwh_to_xyah(new_track.tlwh))
        self.state, self.is_activated, self.score = TRACKED, True, new_track.score


def joint_stracks(a: list[STrack], b: list[STrack]) -> list[STrack]:
    exists, res = {}, []
    for t in a:
        exists[t.track_id] = 1
        res.append(t)
    for t in b:
        if not exists.get(t.track_id, 0):
            exists[t.track_id] = 1
            res.append(t)
    return res


def sub_stracks(a: list[STrack], b: list[STrack]) -> list[STrack]:
    stracks = {t.track_id: t for t in a}
    for t in b:
        stracks.pop(t.track_id, None)
    return list(stracks.values())


class ReferenceByteTracker(BaseTracker):
    """Same arguments and results as :class:`~vastmat.models.trackers.BYTETracker`, per-track like the official
    code."""

    def __init__(self, track_thresh: float = 0.6, low_thresh: float = 0.1, track_buffer: int = 30,
                 match_thresh: float = 0.9, second_match_thresh: float = 0.5, unconfirmed_match_thresh: float = 0.7,
                 fuse_score: bool = True, duplicate_thresh: float = 0.15, matcher: dict | Any | None = None,
                 min_box_area: float | None = 100, aspect_ratio_thresh: float | None = None,
                 frame_rate: float = 30) -> None:
        super().__init__()
        self.track_thresh, self.low_thresh, self.track_buffer = track_thresh, low_thresh, track_buffer
        self.match_thresh, self.second_match_thresh = match_thresh, second_match_thresh
        self.unconfirmed_match_thresh, self.fuse_score = unconfirmed_match_thresh, fuse_score
        self.duplicate_thresh, self.min_box_area = duplicate_thresh, min_box_area
        self.aspect_ratio_thresh = aspect_ratio_thresh
        matcher = matcher if matcher is not None else dict(type='IoU', plus_one=True)
        self.matcher = MATCHERS.build(matcher) if isinstance(matcher, dict) else matcher
        self.iou = MATCHERS.build(dict(type='IoU', plus_one=True))
        self.reset(frame_rate)

    def reset(self, frame_rate: float | None = None) -> None:
        if frame_rate:
            self.frame_rate = frame_rate
        self.tracked_stracks, self.lost_stracks, self.removed_stracks = [], [], []
        self.frame_id = 0
        self.det_thresh = self.track_thresh + 0.1
        self.max_time_lost = int(self.frame_rate / 30.0 * self.track_buffer)
        self.kalman_filter = KalmanFilter()
        self._count = 0

    def _distance(self, tracks: list[STrack], dets: list[STrack], fuse: bool, num_high: int) -> np.ndarray:
        if not tracks or not dets:
            return np.zeros((len(tracks), len(dets)))
        sim = self.matcher(np.array([t.tlbr for t in tracks]), np.array([d.tlbr for d in dets]),
                           num_high_conf=num_high)
        scores = sim.scores if sim.gate is None else sim.scores * sim.gate
        if fuse:
            scores = scores * np.array([d.score for d in dets])[None, :]
        return 1.0 - scores

    def update(self, frame: TrackingFrame) -> TrackOutput:
        bboxes, scores = frame.bboxes, frame.scores
        self.frame_id = frame.frame_id
        activated, refind, lost, removed = [], [], [], []
        remain = scores > self.track_thresh
        second = np.logical_and(scores > self.low_thresh, scores < self.track_thresh)
        num_high = int(remain.sum())
        detections = [STrack(np.r_[b[:2], b[2:] - b[:2]], s) for b, s in zip(bboxes[remain], scores[remain])]
        unconfirmed = [t for t in self.tracked_stracks if not t.is_activated]
        tracked_stracks = [t for t in self.tracked_stracks if t.is_activated]
        strack_pool = joint_stracks(tracked_stracks, self.lost_stracks)
        for t in strack_pool:
            t.predict()

        dists = self._distance(strack_pool, detections, self.fuse_score, num_high)
        result = LapJV(self.match_thresh)(dists)
        for itracked, idet in result.matches:
            track, det = strack_pool[itracked], detections[idet]
            if track.state == TRACKED:
                track.update(det, self.frame_id)
                activated.append(track)
            else:
                track.re_activate(det, self.frame_id)
                refind.append(track)

        detections_second = [STrack(np.r_[b[:2], b[2:] - b[:2]], s)
                             for b, s in zip(bboxes[second], scores[second])]
        r_tracked = [strack_pool[i] for i in result.unmatched_rows if strack_pool[i].state == TRACKED]
        dists = self._distance(r_tracked, detections_second, False, num_high)
        result2 = LapJV(self.second_match_thresh)(dists)
        for itracked, idet in result2.matches:
            track, det = r_tracked[itracked], detections_second[idet]
            if track.state == TRACKED:
                track.update(det, self.frame_id)
                activated.append(track)
            else:
                track.re_activate(det, self.frame_id)
                refind.append(track)
        for it in result2.unmatched_rows:
            track = r_tracked[it]
            if track.state != LOST:
                track.state = LOST
                lost.append(track)

        detections = [detections[i] for i in result.unmatched_cols]
        dists = self._distance(unconfirmed, detections, self.fuse_score, num_high)
        result3 = LapJV(self.unconfirmed_match_thresh)(dists)
        for itracked, idet in result3.matches:
            unconfirmed[itracked].update(detections[idet], self.frame_id)
            activated.append(unconfirmed[itracked])
        for it in result3.unmatched_rows:
            unconfirmed[it].state = REMOVED
            removed.append(unconfirmed[it])

        for inew in result3.unmatched_cols:
            track = detections[inew]
            if track.score < self.det_thresh:
                continue
            self._count += 1
            track.activate(self.kalman_filter, self.frame_id, self._count)
            activated.append(track)

        for track in self.lost_stracks:
            if self.frame_id - track.frame_id > self.max_time_lost:
                track.state = REMOVED
                removed.append(track)

        self.tracked_stracks = [t for t in self.tracked_stracks if t.state == TRACKED]
        self.tracked_stracks = joint_stracks(self.tracked_stracks, activated)
        self.tracked_stracks = joint_stracks(self.tracked_stracks, refind)
        self.lost_stracks = sub_stracks(self.lost_stracks, self.tracked_stracks)
        self.lost_stracks.extend(lost)
        self.lost_stracks = sub_stracks(self.lost_stracks, self.removed_stracks)
        self.removed_stracks.extend(removed)
        self.tracked_stracks, self.lost_stracks = self._remove_duplicates(self.tracked_stracks, self.lost_stracks)
        return self._output([t for t in self.tracked_stracks if t.is_activated])

    def _remove_duplicates(self, a: list[STrack], b: list[STrack]) -> tuple[list[STrack], list[STrack]]:
        if not a or not b:
            return a, b
        pdist = 1.0 - self.iou(np.array([t.tlbr for t in a]), np.array([t.tlbr for t in b])).scores
        dupa, dupb = [], []
        for p, q in zip(*np.where(pdist < self.duplicate_thresh)):
            timep = a[p].frame_id - a[p].start_frame
            timeq = b[q].frame_id - b[q].start_frame
            if timep > timeq:
                dupb.append(q)
            else:
                dupa.append(p)
        return ([t for i, t in enumerate(a) if i not in dupa], [t for i, t in enumerate(b) if i not in dupb])

    def _output(self, tracks: list[STrack]) -> TrackOutput:
        ids, boxes, scores = [], [], []
        for t in tracks:
            tlwh = t.tlwh
            if self.min_box_area is not None and not tlwh[2] * tlwh[3] > self.min_box_area:
                continue
            if self.aspect_ratio_thresh is not None and tlwh[2] / tlwh[3] > self.aspect_ratio_thresh:
                continue
            ids.append(t.track_id)
            boxes.append(t.tlbr)
            scores.append(t.score)
        if not ids:
            return TrackOutput.empty()
        return TrackOutput(np.array(ids, np.int64), np.array(boxes), np.array(scores))


FAST, REFERENCE = 'BYTETracker (iou)', 'BYTETracker reference (per-track, official structure)'


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_video_arguments(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    from rich.console import Console
    from rich.table import Table

    from vastmat.benchmarks.association_speed import (check_trackers, identical_tracks, load_videos, time_runners,
                                                       tracker_config, vastmat_runner, video_counts)
    from vastmat.utils.io import write_json_atomic
    args = parse_args(argv)
    type_name, cls = check_trackers(['bytetrack'], None)['bytetrack']
    runners = {FAST: vastmat_runner(tracker_config(type_name, cls, 'iou')),
               REFERENCE: vastmat_runner(ReferenceByteTracker())}
    videos = load_videos(args.data_root, args.det_root, args.videos)
    best, outputs = time_runners(runners, videos, args.repeats)
    results = video_counts(videos)
    results.update(identical=identical_tracks(outputs[FAST], outputs[REFERENCE]),
                   speedup=best[REFERENCE] / best[FAST],
                   trackers={name: dict(seconds=t, fps=results['frames'] / t) for name, t in best.items()})
    table = Table(title=f'BYTETracker against the per-track reference: {results["videos"]} videos, '
                        f'{results["frames"]} frames, {results["detections"]} detections')
    for column in ('tracker', 'seconds', 'frames/s'):
        table.add_column(column, justify='left' if column == 'tracker' else 'right')
    for name, row in results['trackers'].items():
        table.add_row(name, f'{row["seconds"]:.3f}', f'{row["fps"]:.0f}')
    console = Console()
    console.print(table)
    console.print(f'{FAST} {results["speedup"]:.2f}x the reference; tracks identical: {results["identical"]}')
    if args.out:
        write_json_atomic(results, args.out)
    return results


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
