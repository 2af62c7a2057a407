"""What flows between a MOT model and its online tracker: one :class:`TrackingFrame` in, one :class:`TrackOutput`
out, per frame.

The frame is built in one place (:class:`vastmat.models.mot.TrackingByDetection`) from whatever produced the
detections (a detector in the loop, cached det.txt files read by the pipeline) and holds everything any tracker of
the zoo reads: boxes, scores, labels, per-detection appearance features, the image and its size, the frame number,
the video's name and rate, and named extra detection sets (TrackTrack's NMS-0.95 set). A tracker that needs an
input the frame lacks fails with :class:`MissingTrackerInput`, which names the input and how to produce it.

Detections are checked once here, for every tracker (DESIGN.md: nothing silently dropped):
NaN or infinite values, negative sizes and scores outside [0, 1] raise ``ValueError`` naming the video and frame;
zero-width or zero-height boxes (common after clipping to the image) cannot be tracked (the Kalman filter's aspect
ratio is undefined) and are dropped, counted in ``num_dropped`` (the MOT model logs the count per video).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

# how to produce each optional input, for the message of MissingTrackerInput
INPUT_HINTS = {
    'features': 'per-detection appearance features: cached detections with feature columns after the ten det.txt '
                'columns, or an appearance model in the MOT model (model.reid=dict(type=...))',
    'image': 'the frame image: a test pipeline that loads frames (LoadImageFromFile), not the cached-detection '
             'pipeline without images',
    'image_size': 'the frame size: imWidth and imHeight in seqinfo.ini, or a pipeline that loads frames',
    'frame_rate': 'the video frame rate: frameRate in seqinfo.ini',
    'extra_dets': 'a named extra detection set: tools/test.py --extra-det-root NAME=DIR (or '
                  'LoadTrackingDetections(extra_det_roots=dict(NAME=DIR))) for cached detections, or model.extra_detections=dict(NAME=dict(<test_cfg overrides>)) with the detector '
                  'in the loop',
}


class MissingTrackerInput(ValueError):
    """A tracker needs a frame input that was not produced."""


@dataclass
class FrameDetections:
    """One set of detections of a frame: ``bboxes (m, 4)`` x1 y1 x2 y2 float64 pixels of the original frame,
    ``scores (m,)`` in [0, 1], ``labels (m,)`` int64, ``features (m, d)`` float64 or None."""

    bboxes: np.ndarray
    scores: np.ndarray
    labels: np.ndarray | None = None
    features: np.ndarray | None = None
    num_dropped: int = 0

    def __len__(self) -> int:
        return len(self.scores)

    def select(self, keep: np.ndarray) -> 'FrameDetections':
        """The detections where ``keep`` is true (a bool mask or indices)."""
        return FrameDetections(self.bboxes[keep], self.scores[keep],
                               None if self.labels is None else self.labels[keep],
                               None if self.features is None else self.features[keep], self.num_dropped)

    def checked(self, where: str) -> 'FrameDetections':
        """Validated arrays (errors name ``where``); zero-size boxes dropped and counted."""
        bboxes = np.asarray(self.bboxes, dtype=np.float64).reshape(-1, 4)
        scores = np.asarray(self.scores, dtype=np.float64).reshape(-1)
        labels = (np.zeros(len(scores), np.int64) if self.labels is None
                  else np.asarray(self.labels, dtype=np.int64).reshape(-1))
        features = None if self.features is None else np.asarray(self.features, dtype=np.float64)
        if features is not None and features.ndim == 2 and features.shape[1] == 0:
            features = None
        for name, array in (('scores', scores), ('labels', labels), ('features', features)):
            if array is not None and len(array) != len(bboxes):
                raise ValueError(f'{where}: {len(bboxes)} boxes but {len(array)} {name}')
        if not (np.isfinite(bboxes).all() and np.isfinite(scores).all()):
            raise ValueError(f'{where}: detections hold NaN or infinite values')
        if features is not None and not np.isfinite(features).all():
            raise ValueError(f'{where}: detection features hold NaN or infinite values')
        width, height = bboxes[:, 2] - bboxes[:, 0], bboxes[:, 3] - bboxes[:, 1]
        # a negative side within float32 noise of zero (1e-5 of the coordinates: a few roundings through decoding
        # and rescaling) is zero: a detector computing x1 = c - s and x2 = c + s in float32 with s ~ 0 (an untrained
        # regression head) gives x2 - x1 of either sign; a tiny positive side stays (DETR keeps degenerate queries so)
        rounding = 1e-5 * np.maximum(np.abs(bboxes).max(axis=1, initial=0.0), 1.0)
        width = np.where((width < 0) & (width >= -rounding), 0.0, width)
        height = np.where((height < 0) & (height >= -rounding), 0.0, height)
        negative = np.flatnonzero((width < 0) | (height < 0))
        if len(negative):
            raise ValueError(f'{where}: detection {negative[0]} has x2 < x1 or y2 < y1 (negative size): '
                             f'{bboxes[negative[0]].tolist()}')
        outside = np.flatnonzero((scores < 0) | (scores > 1))
        if len(outside):
            raise ValueError(f'{where}: detection score {scores[outside[0]]} is outside [0, 1] (trackers threshold '
                             'and fuse scores as probabilities; rescale the detector output)')
        keep = (width > 0) & (height > 0)
        checked = FrameDetections(bboxes, scores, labels, features, self.num_dropped + int((~keep).sum()))
        return checked if keep.all() else checked.select(keep)


@dataclass
class TrackingFrame:
    """The per-frame input of every online tracker.

    Attributes:
        detections: the frame's detections (:class:`FrameDetections`); ``bboxes``, ``scores``, ``labels`` and
            ``features`` read through to it.
        frame_id: 1-based number of the frame in the tracked sequence (consecutive, also for a strided dataset):
            the one frame number every tracker uses.
        video_name, frame_rate: the video's name and rate (frames per second of the tracked sequence; None when
            seqinfo.ini has none).
        source_frame: the frame's number in the video folder's own files (gt.txt, det.txt) before any striding.
        image: the frame as the model received it (a ``(C, H, W)`` tensor after the data preprocessor), or None
            when the pipeline loaded no image (cached detections).
        image_size: ``(height, width)`` of the original frame, the space of the boxes, or None.
        scale_factor: ``(w_scale, h_scale)`` from original-frame pixels to ``image`` pixels, or None.
        extra_dets: named extra detection sets (e.g. ``nms95``).
    """

    detections: FrameDetections
    frame_id: int
    video_name: str = ''
    frame_rate: float | None = None
    source_frame: int | None = None
    image: Any = None
    image_size: tuple[int, int] | None = None
    scale_factor: tuple[float, float] | None = None
    extra_dets: dict[str, FrameDetections] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.frame_id < 1:
            raise ValueError(f'{self.video_name}: frame_id {self.frame_id} < 1 (frames are numbered from 1)')
        where = f'video {self.video_name!r} frame {self.frame_id}'
        self.detections = self.detections.checked(where)
        self.extra_dets = {name: dets.checked(f'{where} (extra detections {name!r})')
                           for name, dets in self.extra_dets.items()}

    @classmethod
    def from_arrays(cls, bboxes: Any, scores: Any, frame_id: int, **kwargs: Any) -> 'TrackingFrame':
        """A frame from ``(m, 4)`` x1 y1 x2 y2 boxes and ``(m,)`` scores (plus ``labels=``/``features=``)."""
        detections = FrameDetections(bboxes, scores, kwargs.pop('labels', None), kwargs.pop('features', None))
        return cls(detections, frame_id, **kwargs)

    @property
    def bboxes(self) -> np.ndarray:
        return self.detections.bboxes

    @property
    def scores(self) -> np.ndarray:
        return self.detections.scores

    @property
    def labels(self) -> np.ndarray:
        return self.detections.labels

    @property
    def features(self) -> np.ndarray | None:
        return self.detections.features

    @property
    def num_dropped(self) -> int:
        """Zero-size boxes removed from the detections (main set and extra sets)."""
        return self.detections.num_dropped + sum(d.num_dropped for d in self.extra_dets.values())

    def require(self, *inputs: str) -> None:
        """Raise :class:`MissingTrackerInput` unless every named input is present (``'features'``, ``'image'``,
        ``'image_size'``, ``'frame_rate'`` or ``'extra_dets.NAME'``)."""
        for name in inputs:
            if name.startswith('extra_dets.'):
                present, hint = name.split('.', 1)[1] in self.extra_dets, INPUT_HINTS['extra_dets']
            elif name in INPUT_HINTS:
                present, hint = getattr(self, name) is not None, INPUT_HINTS[name]
            else:
                raise KeyError(f'unknown tracker input {name!r}; inputs are {", ".join(INPUT_HINTS)}, extra_dets.NAME')
            if not present:
                raise MissingTrackerInput(f'video {self.video_name!r} frame {self.frame_id}: the tracker needs '
                                          f'{name!r}, which this frame does not have. Produce it with {hint}.')


@dataclass
class TrackOutput:
    """The tracks a tracker reports for one frame: ``ids (k,)``, ``bboxes (k, 4)`` x1 y1 x2 y2, ``scores (k,)``,
    and optionally ``features (k, d)`` (a track's appearance embedding)."""

    ids: np.ndarray
    bboxes: np.ndarray
    scores: np.ndarray
    features: np.ndarray | None = None

    @classmethod
    def empty(cls) -> 'TrackOutput':
        return cls(np.zeros(0, np.int64), np.zeros((0, 4)), np.zeros(0))

    def __len__(self) -> int:
        return len(self.ids)
