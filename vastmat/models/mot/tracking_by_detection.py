"""``TrackingByDetection``: a detector (or cached detections) feeding an online tracker frame by frame."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
from mmdet.models.mot.base import BaseMOTModel
from mmengine.structures import InstanceData

from vastmat.registry import MODELS

from .cached_detections import CachedDetections

# the test pipeline of a tracking config when detections are cached: no frame is loaded
CACHED_DETS_PIPELINE = [
    dict(type='TransformBroadcaster', transforms=[dict(type='LoadTrackAnnotations')]),
    dict(type='PackTrackInputs', meta_keys=('video_name', 'frame_rate')),
]


@MODELS.register_module()
class TrackingByDetection(BaseMOTModel):
    """Runs ``detector`` on each frame, or reads ``det_root``, and feeds ``tracker`` (any :class:`BaseTracker`).

    Test-only, like mmdet's ByteTrack model: the detector is trained with its own config and its checkpoint given to
    ``tools/test.py --checkpoint`` (a plain detector checkpoint loads into ``detector``).

    Args:
        tracker: tracker config, e.g. ``dict(type='ByteTracker', matcher=dict(type='CDA'))``.
        detector: detector config (e.g. YOLOX), or None with ``det_root``.
        det_root: folder of cached detections (``<video>.txt`` or ``<video>/det/det.txt``); the detector is skipped.
        det_score_thr: detections scoring below this are not given to the tracker (None: all).
        data_preprocessor: default :class:`TrackingDataPreprocessor`.
    """

    def __init__(self, tracker: dict, detector: dict | None = None, det_root: str | None = None,
                 det_score_thr: float | None = None, data_preprocessor: dict | None = None,
                 init_cfg: dict | None = None) -> None:
        data_preprocessor = data_preprocessor or dict(type='TrackingDataPreprocessor')
        super().__init__(data_preprocessor, init_cfg)
        if detector is None and det_root is None:
            raise ValueError('TrackingByDetection needs a detector or cached detections: set model.detector, or '
                             'model.det_root (tools/test.py --det-root DIR)')
        self.detector = MODELS.build(detector) if detector is not None and det_root is None else None
        self.detections = CachedDetections(det_root) if det_root is not None else None
        self.det_score_thr = det_score_thr
        self.tracker = MODELS.build(tracker)
        self._register_load_state_dict_pre_hook(self._load_detector_checkpoint)

    @staticmethod
    def _load_detector_checkpoint(state_dict: dict, prefix: str, *args: Any) -> None:
        """A detector's own checkpoint (``backbone.*``, ``neck.*`` ...) loads into ``detector``."""
        keys = [k for k in state_dict if k.startswith(prefix)]
        if keys and not any(k[len(prefix):].startswith('detector.') for k in keys):
            for key in keys:
                state_dict[prefix + 'detector.' + key[len(prefix):]] = state_dict.pop(key)

    def loss(self, inputs: Any, data_samples: Any, **kwargs: Any) -> dict:
        raise NotImplementedError('TrackingByDetection is test-only: train the detector with its own config '
                                  '(configs/yolox/), then test the tracking config with --checkpoint')

    def _detect(self, inputs: torch.Tensor | None, frame_index: int,
                frame_sample: Any) -> tuple[np.ndarray, np.ndarray]:
        if self.detections is not None:
            return self.detections.get(frame_sample.video_name, frame_sample.frame_id + 1)
        if self.detector is None or inputs is None:
            raise RuntimeError('no detector and no cached detections for this frame')
        image = inputs[0][frame_index][None]  # (1, C, H, W)
        result = self.detector.predict(image, [frame_sample], rescale=True)[0].pred_instances
        return (result.bboxes.detach().cpu().double().numpy().reshape(-1, 4),
                result.scores.detach().cpu().double().numpy())

    def predict(self, inputs: torch.Tensor | None, data_samples: list, rescale: bool = True, **kwargs: Any) -> list:
        """Track the frames of one video clip (test: one frame per call; the tracker restarts at frame 0)."""
        if len(data_samples) != 1:
            raise ValueError('TrackingByDetection tracks one video at a time (test batch_size=1)')
        track_sample = data_samples[0]
        for frame_index in range(len(track_sample)):
            frame = track_sample[frame_index]
            if frame.frame_id == 0:
                self.tracker.reset(frame.metainfo.get('frame_rate'))
            boxes, scores = self._detect(inputs, frame_index, frame)
            if self.det_score_thr is not None:
                keep = scores >= self.det_score_thr
                boxes, scores = boxes[keep], scores[keep]
            out = self.tracker.update(boxes, scores, frame.frame_id + 1)
            frame.pred_track_instances = InstanceData(
                bboxes=torch.from_numpy(out.bboxes.reshape(-1, 4)), scores=torch.from_numpy(out.scores),
                instances_id=torch.from_numpy(out.ids), labels=torch.zeros(len(out.ids), dtype=torch.long))
        return [track_sample]
