"""Cached detections: the det.txt files a detector wrote once (``tools/test.py DET_CONFIG --dump-dets DIR``), read
back per video and keyed by frame number, so that association experiments never rerun the detector.

Frames are numbered as in the video folder's own files (gt.txt, det.txt, seqinfo.ini), before any striding by the
dataset: a file dumped at one stride and tracked at another still pairs each row with its own frame. A file whose
frames cannot belong to the tracked frames is rejected, naming the file and line (:meth:`VideoDetections.check`).
"""
from __future__ import annotations

import math
import os.path as osp
from typing import Iterator, Sequence

import numpy as np

from vastmat.structures.bbox import ltwh_to_xyxy
from vastmat.structures.tracking import FrameDetections, TrackingFrame

from .formats import FormatError, read_detections

# the stride check needs this many frames with detections before it trusts their common step
MIN_FRAMES_FOR_STRIDE_CHECK = 10


def detection_file(root: str, video: str) -> str:
    """``<root>/<video>.txt`` or, in a MOTChallenge split folder, ``<root>/<video>/det/det.txt``."""
    candidates = [osp.join(root, f'{video}.txt'), osp.join(root, video, 'det', 'det.txt')]
    for path in candidates:
        if osp.isfile(path):
            return path
    if not osp.isdir(root):
        raise FileNotFoundError(f'{root}: no such detection folder')
    raise FileNotFoundError(f'no detections for video {video!r}: neither {candidates[0]} nor {candidates[1]}')


class VideoDetections:
    """The rows of one det.txt grouped by frame (file order kept within a frame, as the detector wrote it).

    Args:
        path: the det.txt.
        source_length: the video's seqLength in its own numbering; a row past it is an error.
    """

    def __init__(self, path: str, source_length: int | None = None) -> None:
        self.path = path
        dets = read_detections(path, seq_length=source_length)
        order = np.argsort(dets.frames, kind='stable')
        frames = dets.frames[order]
        xyxy, scores = ltwh_to_xyxy(dets.boxes[order]), dets.scores[order]
        features = dets.features[order] if dets.features.shape[1] else None
        starts = np.flatnonzero(np.r_[True, frames[1:] != frames[:-1]]) if len(frames) else np.zeros(0, np.int64)
        ends = np.r_[starts[1:], len(frames)].astype(np.int64)
        self.frames = frames[starts]
        lines = dets.line_numbers[order]
        self._first_line = lines[starts]
        self._lines = {int(frames[s]): lines[s:e] for s, e in zip(starts, ends)}
        self._rows = {int(frames[s]): (xyxy[s:e], scores[s:e], None if features is None else features[s:e])
                      for s, e in zip(starts, ends)}
        self.num_features = 0 if features is None else features.shape[1]

    @classmethod
    def for_video(cls, root: str, video: str, source_length: int, tracked_frames: Sequence[int]) -> 'VideoDetections':
        """The detections of ``video`` in ``root`` (:func:`detection_file`), checked against the source frame
        numbers the dataset tracks (:meth:`check`)."""
        detections = cls(detection_file(root, video), source_length)
        detections.check(np.asarray(tracked_frames, np.int64))
        return detections

    def line_numbers(self, frame: int) -> np.ndarray:
        """The file's line numbers of a frame's rows, in the order of :meth:`get` (empty where it has none)."""
        return self._lines.get(frame, np.zeros(0, np.int64))

    def get(self, frame: int) -> FrameDetections:
        """The detections of a frame (x1 y1 x2 y2, scores, the det.txt columns after the tenth as features or None;
        empty where the file has none)."""
        rows = self._rows.get(frame)
        if rows is None:
            features = np.zeros((0, self.num_features)) if self.num_features else None
            return FrameDetections(np.zeros((0, 4)), np.zeros(0), features=features)
        bboxes, scores, features = rows
        return FrameDetections(bboxes, scores, features=features)

    def check(self, tracked_frames: np.ndarray) -> None:
        """Reject a file whose frames do not fit the tracked frames (``tracked_frames``: the source frame numbers
        the dataset tracks, e.g. 1, 4, 7, ... at stride 3).

        * detections only on every g-th frame (g > 1) while the dataset tracks frames between them: the file was
          dumped at another stride (tracking it would leave frames silently empty);
        * rows on frames the dataset does not track, while the file's last frame is within the number of tracked
          frames: the file is numbered 1, 2, 3, ... in a strided sequence, not in the video's own frame numbers.
        Rows of untracked frames are otherwise fine (detections dumped at full rate, tracked at a stride).
        """
        tracked = np.asarray(tracked_frames, np.int64)
        if len(self.frames) >= MIN_FRAMES_FOR_STRIDE_CHECK:
            first, last = int(self.frames[0]), int(self.frames[-1])
            step = math.gcd(*(self.frames - first).tolist())
            inside = tracked[(tracked >= first) & (tracked <= last)]
            off_lattice = inside[(inside - first) % step != 0]
            if len(off_lattice):
                raise FormatError(
                    f'{self.path}: detections only on every {step}th frame ({first}, {first + step}, ...), but '
                    f'frame {off_lattice[0]} is tracked too: the file was written at another stride than the '
                    "dataset's (dump the detections at the stride you track, or at stride 1)")
        untracked = np.flatnonzero(~np.isin(self.frames, tracked))
        if len(untracked) and self.frames[-1] <= len(tracked):
            k = untracked[0]
            raise FormatError(
                f'{self.path}:{int(self._first_line[k])}: frame {int(self.frames[k])} is not a tracked frame (the '
                f'dataset tracks frames {", ".join(map(str, tracked[:3].tolist()))}, ... of the video) and the file '
                f'ends at frame {int(self.frames[-1])} <= {len(tracked)} tracked frames: it looks numbered 1, 2, '
                '3, ... in the strided sequence; cached detections use the video\'s own frame numbers')


def cached_frames(detections: VideoDetections, video_name: str, source_frames: Sequence[int],
                  frame_rate: float | None = None, image_size: tuple[int, int] | None = None,
                  extra: dict[str, VideoDetections] | None = None) -> Iterator[TrackingFrame]:
    """The tracker inputs of a video from its cached detections: frame ids 1, 2, ... for the frames whose numbers
    in the video's own files are ``source_frames`` (``1, 1 + s, 1 + 2s, ...`` at stride ``s``), with the named extra
    detection sets ``extra`` (e.g. TrackTrack's ``nms95``)."""
    for frame_id, source in enumerate(source_frames, start=1):
        source = int(source)
        yield TrackingFrame(detections.get(source), frame_id=frame_id, video_name=video_name, frame_rate=frame_rate,
                            source_frame=source, image_size=image_size,
                            extra_dets={name: d.get(source) for name, d in (extra or {}).items()})
