"""``TrackingByDetection``: a detector (or cached detections) feeding an online tracker frame by frame, then the
per-video post-processing."""
from __future__ import annotations

import copy
import logging
import os.path as osp
from typing import Any, Iterable

import numpy as np
import torch
from mmdet.models.mot.base import BaseMOTModel
from mmengine.logging import print_log
from mmengine.structures import InstanceData
from torch import nn

from vastmat.datasets.transforms import detections_to_instances
from vastmat.registry import MODELS, TASK_UTILS
from vastmat.structures.tracking import FrameDetections, TrackingFrame, TrackOutput


def instances_to_detections(instances: InstanceData) -> FrameDetections:
    """mmdet's ``pred_instances`` (bboxes, scores[, labels, features]) as numpy detections."""
    features = instances.get('features')
    return FrameDetections(
        instances.bboxes.detach().cpu().double().numpy().reshape(-1, 4),
        instances.scores.detach().cpu().double().numpy().reshape(-1),
        instances.labels.detach().cpu().numpy() if 'labels' in instances else None,
        None if features is None else features.detach().cpu().double().numpy())


CACHED_AND_DETECTOR = ('TrackingByDetection: the pipeline loaded cached detections and the model has a detector; '
                       'drop one of them (tools/test.py --det-root drops the detector)')


@MODELS.register_module()
class TrackingByDetection(BaseMOTModel):
    """Runs ``detector`` on each frame (or takes the detections the pipeline loaded), builds one
    :class:`~vastmat.structures.TrackingFrame` per frame and feeds ``tracker`` (any :class:`BaseTracker`); after a
    video's last frame, ``post_processors`` run on its tracks before they are written and scored.

    Training trains the detector on the clips' frames (:meth:`loss`): a joint detection-and-embedding network
    (FairMOT) trains and tracks from one config. A detector trained with its own config (YOLOX) and an appearance
    model load from their checkpoints given to ``tools/test.py --checkpoint`` (a plain detector checkpoint loads
    into ``detector``). Every learned part (detector, ``reid``, the tracker's own modules, learned post-processors) is a
    submodule, so one checkpoint of this model carries them all.

    Args:
        tracker: tracker config, e.g. ``dict(type='BYTETracker', matcher=dict(type='CDA'))``.
        detector: detector config (e.g. YOLOX); None when the test pipeline loads cached detections
            (``LoadTrackingDetections``, ``tools/test.py --det-root``).
        reid: appearance model (mmdet ``BaseReID`` or any module mapping ``(k, C, H, W)`` crops to ``(k, d)``),
            run on crops of the frame image when the detections carry no features.
        reid_input_size: ``(height, width)`` of those crops.
        extra_detections: named extra detection sets of a single-stage detector in the loop, each a dict of
            ``test_cfg`` overrides of its head, e.g. ``dict(nms95=dict(nms=dict(type='nms', iou_threshold=0.95)))``
            (cached detections give them with ``LoadTrackingDetections(extra_det_roots=...)``).
        det_score_thr: detections scoring below this are not given to the tracker (None: all).
        post_processors: per-video post-processors (``TASK_UTILS`` configs, e.g. ``InterpolateTracks``), in order.
        data_preprocessor: default :class:`TrackingDataPreprocessor`.
    """

    # tools/test.py --det-root: the model tracks cached detections when its detector is dropped
    tracks_cached_detections = True

    def __init__(self, tracker: dict, detector: dict | None = None, reid: dict | None = None,
                 reid_input_size: tuple[int, int] = (256, 128), extra_detections: dict | None = None,
                 det_score_thr: float | None = None, post_processors: list | None = None,
                 data_preprocessor: dict | None = None, init_cfg: dict | None = None) -> None:
        # built here from VastMAT's registry, so that the model also builds outside the 'vastmat' default scope
        data_preprocessor = data_preprocessor or dict(type='TrackingDataPreprocessor')
        super().__init__(MODELS.build(data_preprocessor) if isinstance(data_preprocessor, dict) else data_preprocessor,
                         init_cfg)
        self.detector = MODELS.build(detector) if detector is not None else None
        self.reid = MODELS.build(reid) if reid is not None else None
        init = getattr(self.reid, 'init_cfg', None)
        if isinstance(init, dict) and init.get('type') == 'Pretrained':
            # the runner initialises weights only when training: a test-time appearance model loads its
            # checkpoint here (a whole-model --checkpoint loaded afterwards still overrides it)
            if not osp.isfile(str(init.get('checkpoint'))) and '://' not in str(init.get('checkpoint')):
                raise FileNotFoundError(f"model.reid.init_cfg.checkpoint: {init.get('checkpoint')} does not exist "
                                        '(train the appearance model, e.g. tools/train.py configs/reid/...)')
            self.reid.init_weights()
        self.reid_input_size = tuple(reid_input_size)
        self.extra_detections = dict(extra_detections or {})
        if self.extra_detections and not hasattr(getattr(self.detector, 'bbox_head', None), 'predict_by_feat'):
            raise ValueError('TrackingByDetection: extra_detections need a single-stage detector in the loop '
                             '(bbox_head.predict_by_feat); with cached detections use '
                             'LoadTrackingDetections(extra_det_roots=...)')
        self.det_score_thr = det_score_thr
        self.tracker = MODELS.build(tracker)
        self.post_processors = [TASK_UTILS.build(cfg) if isinstance(cfg, dict) else cfg
                                for cfg in post_processors or []]
        for i, processor in enumerate(self.post_processors):
            if isinstance(processor, nn.Module):  # learned (AFLink): its weights belong to the checkpoint
                self.add_module(f'post_processor{i}', processor)
        self._video_rows: list[np.ndarray] = []
        self._video_features: list[np.ndarray] | None = []
        self._video_dropped = 0
        self._register_load_state_dict_pre_hook(self._load_detector_checkpoint)

    def _load_detector_checkpoint(self, state_dict: dict, prefix: str, *args: Any) -> None:
        """A detector's own checkpoint (``backbone.*``, ``neck.*`` ...) loads into ``detector``: keys that name a
        detector parameter once prefixed with ``detector.`` and none of this model's own are renamed; the keys of
        the tracker, the appearance model and the post-processors stay where they are."""
        if self.detector is None:
            return
        own = set(self.state_dict().keys())
        for key in [k for k in state_dict if k.startswith(prefix)]:
            name = key[len(prefix):]
            if name not in own and f'detector.{name}' in own:
                state_dict[f'{prefix}detector.{name}'] = state_dict.pop(key)

    def loss(self, inputs: torch.Tensor, data_samples: list, **kwargs: Any) -> dict:
        """Train the detector on the frames of the batch: ``inputs (N, T, C, H, W)`` become ``N * T`` images with
        their frames' ``DetDataSample``s (as mmdet's ByteTrack trains its detector on key frames). A detector that
        also embeds its detections (FairMOT's network) finds the identity numbers in ``gt_instances.instances_ids``.
        The tracker and the post-processors have no training step here."""
        if self.detector is None:
            raise ValueError('TrackingByDetection: no detector to train (model.detector is None: cached detections)')
        if inputs.dim() != 5:
            raise ValueError(f'TrackingByDetection.loss: inputs must be (N, T, C, H, W) video clips (PackVastMATInputs '
                             f'/ PackTrackInputs), got shape {tuple(inputs.shape)}')
        frames = [sample[t] for sample in data_samples for t in range(len(sample))]
        return self.detector.loss(inputs.flatten(0, 1), frames, **kwargs)

    # ------------------------------------------------------------------------------------------------ detections
    def _detect(self, image: torch.Tensor, frame_sample: Any) -> tuple[FrameDetections, dict]:
        """The detector's boxes (in original-frame pixels) and its extra detection sets."""
        if not self.extra_detections:
            result = self.detector.predict(image, [frame_sample], rescale=True)[0].pred_instances
            return instances_to_detections(result), {}
        head = self.detector.bbox_head
        outs = head(self.detector.extract_feat(image))
        metas = [frame_sample.metainfo]
        result = head.predict_by_feat(*outs, batch_img_metas=metas, rescale=True)[0]
        extra = {}
        for name, overrides in self.extra_detections.items():
            cfg = copy.deepcopy(head.test_cfg)
            cfg.update(overrides)
            extra[name] = instances_to_detections(
                head.predict_by_feat(*outs, batch_img_metas=metas, cfg=cfg, rescale=True)[0])
        return instances_to_detections(result), extra

    def _appearance(self, image: torch.Tensor, bboxes: np.ndarray, scale_factor: Any) -> np.ndarray:
        """L2-normalised ``reid`` features of the boxes' crops of ``image`` (the frame as the detector's data
        preprocessor left it: BGR, 0-255, resized). An mmdet ``BaseReID`` gets its own normalisation first (its
        ``data_preprocessor``: BGR to RGB, mean and std), as in training and ``--dump-feats``."""
        from torchvision.ops import roi_align
        if len(bboxes) == 0:
            return np.zeros((0, 0))
        scale = np.tile(np.asarray(scale_factor if scale_factor is not None else (1.0, 1.0), np.float64), 2)
        boxes = torch.as_tensor(bboxes * scale, dtype=image.dtype, device=image.device)
        crops = roi_align(image[None].float(), [boxes.float()], output_size=self.reid_input_size, aligned=True)
        preprocessor = getattr(self.reid, 'data_preprocessor', None)
        if preprocessor is not None and hasattr(preprocessor, 'mean'):
            from mmdet.structures import ReIDDataSample
            crops = preprocessor(dict(inputs=crops, data_samples=[ReIDDataSample() for _ in crops]), False)['inputs']
            features = self.reid(crops, mode='tensor')
        else:
            features = self.reid(crops)
        features = features[-1] if isinstance(features, (tuple, list)) else features
        features = torch.nn.functional.normalize(features.detach().cpu().double().reshape(len(bboxes), -1), dim=1)
        return features.numpy()

    def tracking_frame(self, inputs: torch.Tensor | None, frame_index: int, frame_sample: Any) -> TrackingFrame:
        """The tracker input of one frame, the same for a detector in the loop and cached detections."""
        meta = frame_sample.metainfo
        image = inputs[0][frame_index] if inputs is not None else None
        if self.detector is not None:
            if 'pred_instances' in frame_sample:
                raise ValueError(CACHED_AND_DETECTOR)
            if image is None:
                raise ValueError('TrackingByDetection: the detector needs the frames; the test pipeline loaded none')
            detections, extra = self._detect(image[None], frame_sample)
        else:
            if 'pred_instances' not in frame_sample:
                raise ValueError('TrackingByDetection: no detector and no cached detections: set model.detector, or '
                                 'load detections in the test pipeline (LoadTrackingDetections; tools/test.py '
                                 '--det-root DIR)')
            detections = instances_to_detections(frame_sample.pred_instances)
            extra = {name: instances_to_detections(inst)
                     for name, inst in frame_sample.get('extra_det_instances', {}).items()}
        return TrackingFrame(
            detections, frame_id=int(meta['frame_id']) + 1, video_name=meta.get('video_name', ''),
            frame_rate=meta.get('frame_rate'), source_frame=meta.get('source_frame'), image=image,
            image_size=tuple(meta['ori_shape'][:2]) if meta.get('ori_shape') else None,
            scale_factor=tuple(meta['scale_factor']) if meta.get('scale_factor') else None, extra_dets=extra)

    # ------------------------------------------------------------------------------------------------- tracking
    def start_video(self) -> None:
        """Forget the previous video: the tracker restarts (ids from 1) and the video's rows are cleared."""
        self.tracker.reset()
        self._video_rows, self._video_features, self._video_dropped = [], [], 0

    def track_frame(self, frame: TrackingFrame) -> TrackOutput:
        """One frame of the current video: the score filter and appearance features, then the tracker."""
        if self.det_score_thr is not None:  # after the frame's checks, so that no bad score is filtered away unseen
            frame.detections = frame.detections.select(frame.scores >= self.det_score_thr)
        if frame.features is None and self.reid is not None and frame.image is not None:
            frame.detections.features = self._appearance(frame.image, frame.bboxes, frame.scale_factor)
        frame.require(*self.tracker.required_inputs)
        out = self.tracker.update(frame)
        self._video_dropped += frame.num_dropped
        self._video_rows.append(np.column_stack([np.full(len(out), frame.frame_id), out.ids, out.bboxes,
                                                 out.scores]))
        if self._video_features is not None:  # the tracks' embeddings, while every frame reports them
            if out.features is None and len(out):
                self._video_features = None
            elif len(out):
                self._video_features.append(np.asarray(out.features, np.float64).reshape(len(out), -1))
        return out

    def finish_video(self, video_name: str = '') -> np.ndarray:
        """After a video's last frame: log dropped boxes and run the post-processors; returns the video's final
        tracks, rows ``frame, id, x1, y1, x2, y2, score``."""
        if self._video_dropped:
            print_log(f'{video_name}: {self._video_dropped} zero-width or zero-height detection(s) dropped before '
                      'tracking', 'current', level=logging.WARNING)
        rows = np.concatenate(self._video_rows).reshape(-1, 7) if self._video_rows else np.zeros((0, 7))
        features = self.video_features(len(rows))
        for processor in self.post_processors:
            if getattr(processor, 'takes_video_context', False):  # the global linker: the video's name, its features
                rows = processor(rows, video_name=video_name, features=features)
            else:
                rows = processor(rows)
            rows = np.asarray(rows, np.float64).reshape(-1, 7)
            features = None  # a post-processor's rows no longer line up with the tracker's embeddings
        return rows

    def video_features(self, num_rows: int) -> np.ndarray | None:
        """The tracks' appearance embeddings of the video, one a row of its tracks, where the tracker reported them
        in every frame (TrackTrack, the JDE tracker of FairMOT, MOTIP); else None."""
        if not self._video_features or not num_rows:
            return None
        features = np.concatenate(self._video_features)
        return features if len(features) == num_rows and features.shape[1] else None

    @torch.no_grad()
    def track_video(self, frames: Iterable[TrackingFrame]) -> np.ndarray:
        """Track one whole video given as tracker inputs (frame ids 1, 2, ...), without a dataset or runner: the
        path of :mod:`vastmat.apis` (inference, sweeps). Same steps as :meth:`predict`."""
        self.start_video()
        name = ''
        for frame in frames:
            name = frame.video_name
            self.track_frame(frame)
        return self.finish_video(name)

    def predict(self, inputs: torch.Tensor | None, data_samples: list, rescale: bool = True, **kwargs: Any) -> list:
        """Track the frames of one video clip (test: one frame per call; the tracker restarts at frame 0), or a
        whole video of cached detections given as tracker inputs (``tracking_frames``, :class:`LoadVideoDetections`:
        its final tracks become ``pred_video_tracks``, the inputs are dropped)."""
        if len(data_samples) != 1:
            raise ValueError('TrackingByDetection tracks one video at a time (test batch_size=1)')
        track_sample = data_samples[0]
        if 'tracking_frames' in track_sample:
            if self.detector is not None:
                raise ValueError(CACHED_AND_DETECTOR)
            track_sample.pred_video_tracks = self.track_video(track_sample.tracking_frames)
            del track_sample.tracking_frames
            return [track_sample]
        for frame_index in range(len(track_sample)):
            frame_sample = track_sample[frame_index]
            if frame_sample.frame_id == 0:
                self.start_video()
            frame = self.tracking_frame(inputs, frame_index, frame_sample)
            if self.detector is not None:  # the detector's boxes (as mmdet's ByteTrack keeps them): --dump-dets
                frame_sample.pred_instances = detections_to_instances(frame.detections)
            out = self.track_frame(frame)
            frame_sample.pred_track_instances = self._track_instances(out)
            # a frame given alone (TrackImgSampler) has video_length 1; ori_video_length is the video's
            meta = frame_sample.metainfo
            if frame_sample.frame_id == meta.get('ori_video_length', meta.get('video_length', 0)) - 1:
                # the video's final tracks (post-processed): the metric writes these rows
                frame_sample.pred_video_tracks = self.finish_video(meta.get('video_name', ''))
        return [track_sample]

    @staticmethod
    def _track_instances(out: TrackOutput) -> InstanceData:
        instances = InstanceData(bboxes=torch.from_numpy(out.bboxes.reshape(-1, 4)),
                                 scores=torch.from_numpy(out.scores), instances_id=torch.from_numpy(out.ids),
                                 labels=torch.zeros(len(out.ids), dtype=torch.long))
        if out.features is not None:
            instances.features = torch.from_numpy(out.features)
        return instances
