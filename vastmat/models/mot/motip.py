"""MOTIP (Gao et al., CVPR 2025, "Multiple Object Tracking as ID Prediction"; MCG-NJU/MOTIP ``5cfbcd4``): a
Deformable DETR whose matched query outputs become identity tokens, and an ID decoder that predicts each new
detection's ID label in context of the trajectories of the last frames.

The network is mmdet 3.3's ``DeformableDETR`` (ResNet-50, ``ChannelMapper`` neck, 4 levels, box refinement, 300
queries, one class); the learned tracking parts (trajectory modelling, ID decoder) belong to the tracker
(:class:`~vastmat.models.trackers.MOTIPTracker`), which runs them frame by frame at test time, so that one
checkpoint carries the whole model and a ``TCEITracker`` config reuses a MOTIP checkpoint unchanged.

Training step (:meth:`MOTIP.loss`, the official ``train.py``) on clips ``(N, T, C, H, W)`` (``VastMATClipSample``):

1. the DETR runs on every frame; ``num_train_frames`` random frame positions (the same for every clip of the batch,
   official ``DETR_NUM_TRAIN_FRAMES`` 4) keep their gradients, the others run under ``no_grad``;
2. Deformable DETR's set loss on all frames (focal / L1 / GIoU on every decoder layer: ``bbox_head.loss_by_feat``);
3. each ground-truth box's identity token is the last decoder layer's output ``hs[-1]`` of the query matched to it
   by the Hungarian assignment the official criterion returns (``prepare_for_motip``'s ``detr_indices``): that of
   the second-to-last decoder layer (:attr:`MOTIP.id_matching_layer`);
4. per clip, ``num_groups`` random ID-label assignments with trajectory occlusion and switch augmentation
   (:mod:`.motip_targets`), trajectory modelling, the ID decoder, and the ID loss (cross-entropy over the unknown
   tokens of frames 1..T-1), weighted by ``id_loss_weight``.

``only_detr=True`` trains the DETR alone (the official detection pre-training stage, ``ONLY_DETR``).

At test time each frame's queries go to the tracker as detections (all of them, in query order) with their
``hs[-1]`` as features: :meth:`_detect`.
"""
from __future__ import annotations

from typing import Any

import torch
from mmdet.models.detectors import DeformableDETR
from mmdet.structures.bbox import BaseBoxes, bbox_cxcywh_to_xyxy
from mmengine.structures import InstanceData
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint

from vastmat.registry import MODELS
from vastmat.structures.tracking import FrameDetections

from .detr_outputs import queries_to_detections
from .frame_outputs import frame_output
from .motip_targets import gather_clip_features, generate_id_labels, id_loss, trajectory_and_unknown
from .tracking_by_detection import TrackingByDetection


@MODELS.register_module()
class MOTIP(TrackingByDetection):
    """MOTIP: a Deformable DETR feeding :class:`MOTIPTracker` (or ``TCEITracker``); trains the DETR, the trajectory
    modelling and the ID decoder together on video clips (module docstring).

    Args:
        detector: mmdet ``DeformableDETR`` config (``as_two_stage=False``); None tracks cached detections whose
            extra columns are the queries' ``hs[-1]`` (``tools/test.py --dump-dets`` of this model, then
            ``--det-root``: the tracker's modules load from the same checkpoint).
        tracker: ``dict(type='MOTIPTracker', trajectory_modeling=..., id_decoder=..., det_thresh=0.3, ...)``; its
            ``id_decoder.rel_pe_length`` must cover the training clips.
        id_loss_weight: weight of the ID loss (official ``ID_LOSS_WEIGHT`` 1.0).
        num_groups: random ID-label assignments per clip (``AUG_NUM_GROUPS`` 6).
        occlusion_prob: trajectory occlusion probability per (group, identity) (``AUG_TRAJECTORY_OCCLUSION_PROB``).
        switch_prob: trajectory switch probability per identity and frame (``AUG_TRAJECTORY_SWITCH_PROB``).
        num_train_frames: frames per clip whose DETR pass keeps gradients (``DETR_NUM_TRAIN_FRAMES`` 4).
        num_training_ids: the most identities supervised per clip (official default: the vocabulary size K).
        num_checkpoint_frames: ``c``: the DETR passes without gradients take ``4 c`` frames at a time, those with
            gradients ``c`` with activation checkpointing (``DETR_NUM_CHECKPOINT_FRAMES`` 5); 0: all frames at once.
        only_detr: train the DETR alone (``ONLY_DETR``: the detection pre-training stage, single frames).
        id_matching_layer: the decoder layer whose Hungarian assignment picks the identity tokens' queries; None:
            the official one (:attr:`id_matching_layer`: the second-to-last layer).
        post_processors, data_preprocessor, init_cfg: as :class:`TrackingByDetection`.
    """

    # its DETR's outputs of a frame do not depend on the tracker: kept while one checkpoint is tested again
    # (frame_outputs.py; the zoo's plan counts on it)
    keeps_frame_outputs = True

    def __init__(self, detector: dict, tracker: dict, id_loss_weight: float = 1.0, num_groups: int = 6,
                 occlusion_prob: float = 0.5, switch_prob: float = 0.5, num_train_frames: int = 4,
                 num_training_ids: int | None = None, num_checkpoint_frames: int = 5, only_detr: bool = False,
                 id_matching_layer: int | None = None, post_processors: list | None = None,
                 data_preprocessor: dict | None = None, init_cfg: dict | None = None) -> None:
        super().__init__(tracker=tracker, detector=detector, post_processors=post_processors,
                         data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        if self.detector is not None and (not isinstance(self.detector, DeformableDETR)
                                          or self.detector.as_two_stage):
            raise TypeError('MOTIP: model.detector must be an mmdet DeformableDETR with as_two_stage=False, got '
                            f'{type(self.detector).__name__}')
        for name in ('trajectory_modeling', 'id_decoder'):
            if not hasattr(self.tracker, name):
                raise TypeError(f'MOTIP: model.tracker must be a MOTIPTracker (or a subclass: TCEITracker) holding '
                                f'{name}, got {type(self.tracker).__name__}')
        if self.detector is not None:
            # mmdet creates level_embed with torch.Tensor(...), uninitialised memory until init_weights(): a model
            # built and run without init_weights or a checkpoint read garbage, occasionally NaN (the same fix as
            # TransTrackDeformableDETR's). Give it its normal_ draw now; init_weights and checkpoints replace it.
            nn.init.normal_(self.detector.level_embed)
        if self.detector is not None and self.tracker.trajectory_modeling.detr_dim != self.detector.embed_dims:
            raise ValueError(f'MOTIP: model.tracker.trajectory_modeling.detr_dim '
                             f'({self.tracker.trajectory_modeling.detr_dim}) must equal the DETR\'s embed_dims '
                             f'({self.detector.embed_dims})')
        if num_groups < 1 or num_train_frames < 0:
            raise ValueError(f'MOTIP: num_groups must be >= 1 and num_train_frames >= 0, got {num_groups}, '
                             f'{num_train_frames}')
        for key, value in (('occlusion_prob', occlusion_prob), ('switch_prob', switch_prob)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f'MOTIP: {key} must be in [0, 1], got {value}')
        self.id_loss_weight, self.num_groups = float(id_loss_weight), int(num_groups)
        self.occlusion_prob, self.switch_prob = float(occlusion_prob), float(switch_prob)
        self.num_train_frames, self.num_training_ids = int(num_train_frames), num_training_ids
        if num_checkpoint_frames < 0:
            raise ValueError(f'MOTIP: num_checkpoint_frames must be >= 0, got {num_checkpoint_frames}')
        self.num_checkpoint_frames = int(num_checkpoint_frames)
        self.only_detr = bool(only_detr)
        self._id_matching_layer = None if id_matching_layer is None else int(id_matching_layer)

    # ------------------------------------------------------------------------------------------------- training
    def _run_detr(self, images: Tensor, samples: list) -> tuple[Tensor, Tensor, Tensor]:
        """Class logits and boxes of every decoder layer ``(L, n, Q, ...)`` and the last layer's outputs ``(n, Q,
        C)`` of a batch of frames."""
        net = self.detector
        out = net.forward_transformer(net.extract_feat(images), samples)
        logits, boxes = net.bbox_head(out['hidden_states'], out['references'])
        return logits, boxes, out['hidden_states'][-1]

    def _run_detr_in_chunks(self, frames: Tensor, samples: list, rows: list[int], chunk: int,
                            checkpointed: bool = False) -> list[tuple[Tensor, Tensor, Tensor]]:
        """The DETR on ``rows`` of the frames, ``chunk`` frames per pass (all at once for ``chunk <= 0``), with
        activation checkpointing if ``checkpointed`` (the official ``batch_iterator`` / ``use_checkpoint``)."""
        step = chunk if chunk > 0 else len(rows)
        parts = []
        for start in range(0, len(rows), step):
            part = rows[start:start + step]
            args = (frames[part], [samples[i] for i in part])
            parts.append(checkpoint(self._run_detr, *args, use_reentrant=False) if checkpointed
                         else self._run_detr(*args))
        return parts

    def _detr_on_clips(self, frames: Tensor, samples: list, clip_length: int) -> tuple[Tensor, Tensor, Tensor]:
        """The DETR on all ``N * T`` frames (order ``(clip, time)``), with gradients only on ``num_train_frames``
        random time positions (the same for every clip, as the official ``train_one_epoch``). With
        ``num_checkpoint_frames = c > 0`` (official ``DETR_NUM_CHECKPOINT_FRAMES``), the frames without gradients run
        ``4 c`` at a time and, when there are more than ``c`` frames with gradients, those run ``c`` at a time with
        activation checkpointing (less memory, the same values)."""
        order = torch.randperm(clip_length).tolist()
        with_grad = set(order[:min(self.num_train_frames, clip_length)])
        grad_rows = [i for i in range(len(samples)) if i % clip_length in with_grad]
        other_rows = [i for i in range(len(samples)) if i % clip_length not in with_grad]
        c = self.num_checkpoint_frames
        parts, rows = [], []
        if grad_rows:
            checkpointed = 0 < c < len(grad_rows)
            parts += self._run_detr_in_chunks(frames, samples, grad_rows, c if checkpointed else 0, checkpointed)
            rows += grad_rows
        if other_rows:
            with torch.no_grad():
                parts += self._run_detr_in_chunks(frames, samples, other_rows, 4 * c if 4 * c < len(other_rows) else 0)
            rows += other_rows
        back = torch.argsort(torch.tensor(rows)).to(frames.device)
        logits = torch.cat([p[0] for p in parts], dim=1).index_select(1, back)
        boxes = torch.cat([p[1] for p in parts], dim=1).index_select(1, back)
        outputs = torch.cat([p[2] for p in parts], dim=0).index_select(0, back)
        return logits, boxes, outputs

    @property
    def id_matching_layer(self) -> int:
        """The decoder layer whose Hungarian assignment picks the identity tokens' queries in training: -2 (the
        last auxiliary layer) with more than one decoder layer, else -1. A faithful quirk of the official code: its
        ``SetCriterion.forward`` (models/deformable_detr/deformable_detr.py) reassigns ``indices`` in the loop over
        the auxiliary outputs and returns those, and ``train.py`` gathers ``hs[-1]`` with them
        (tests/models/mot/test_motip_golden_train.py). The ``id_matching_layer`` argument overrides it."""
        if self._id_matching_layer is not None:
            return self._id_matching_layer
        return -2 if self.detector.bbox_head.num_pred_layer > 1 else -1

    def matched_queries(self, logits: Tensor, boxes: Tensor, sample: Any) -> Tensor:
        """For each ground-truth box of a frame, the query a decoder layer's Hungarian assignment gives it (the
        layer of ``logits`` / ``boxes``; training passes :attr:`id_matching_layer`'s): ``(num_gt,)``."""
        head = self.detector.bbox_head
        img_h, img_w = sample.metainfo['img_shape'][:2]
        factor = boxes.new_tensor([img_w, img_h, img_w, img_h])
        pred = InstanceData(scores=logits.detach(), bboxes=bbox_cxcywh_to_xyxy(boxes.detach()) * factor)
        gt = sample.gt_instances
        result = head.assigner.assign(pred_instances=pred, gt_instances=gt, img_meta=sample.metainfo)
        queries = torch.full((len(gt),), -1, dtype=torch.long, device=boxes.device)
        positive = torch.nonzero(result.gt_inds > 0).squeeze(1)
        queries[result.gt_inds[positive] - 1] = positive
        if (queries < 0).any():
            raise ValueError(f"MOTIP: frame {sample.metainfo.get('frame_id')} of video "
                             f"{sample.metainfo.get('video_name')!r} has {len(gt)} ground-truth boxes, more than the "
                             f'{len(boxes)} queries (model.detector.num_queries)')
        return queries

    def loss(self, inputs: Tensor, data_samples: list, **kwargs: Any) -> dict:
        """The official training step on a batch of clips (module docstring): Deformable DETR's losses
        (``loss_cls``, ``loss_bbox``, ``loss_iou``, ``d{0..4}.*``) and ``loss_id``."""
        if self.detector is None:
            raise ValueError('MOTIP: no DETR to train (model.detector is None: cached detections)')
        if inputs is None or inputs.dim() != 5:
            raise ValueError('MOTIP.loss: inputs must be (N, T, C, H, W) video clips (VastMATClipSample, '
                             f'PackVastMATInputs), got {None if inputs is None else tuple(inputs.shape)}')
        num_clips, clip_length = inputs.shape[:2]
        samples = [clip[t] for clip in data_samples for t in range(clip_length)]
        for sample in samples:  # the DETR head works on plain tensors (mmdet's boxtype2tensor)
            if isinstance(sample.gt_instances.bboxes, BaseBoxes):
                sample.gt_instances.bboxes = sample.gt_instances.bboxes.tensor
        logits, boxes, outputs = self._detr_on_clips(inputs.flatten(0, 1), samples, clip_length)
        head = self.detector.bbox_head
        losses = head.loss_by_feat(logits, boxes, None, None, [s.gt_instances for s in samples],
                                   [s.metainfo for s in samples])
        if self.only_detr:
            return losses
        decoder = self.tracker.id_decoder
        targets, features = [], []
        for b in range(num_clips):
            clip = samples[b * clip_length:(b + 1) * clip_length]
            labels = generate_id_labels([s.gt_instances.instances_ids for s in clip], decoder.num_id_vocabulary,
                                        self.num_groups, self.num_training_ids)
            targets.append(trajectory_and_unknown(labels, decoder.num_id_vocabulary, self.occlusion_prob,
                                                  self.switch_prob))
            rows = range(b * clip_length, (b + 1) * clip_length)
            layer = self.id_matching_layer
            features.append([outputs[i][self.matched_queries(logits[layer][i], boxes[layer][i], samples[i])]
                             for i in rows])
        seq = gather_clip_features(targets, features)
        id_logits = decoder(self.tracker.trajectory_modeling(seq['trajectory_features']), seq['trajectory_id_labels'],
                            seq['trajectory_times'], seq['trajectory_masks'], seq['unknown_features'],
                            seq['unknown_times'], seq['unknown_masks'])
        losses['loss_id'] = self.id_loss_weight * id_loss(id_logits, seq['unknown_id_labels'], seq['unknown_masks'])
        return losses

    # ------------------------------------------------------------------------------------------------- tracking
    @torch.no_grad()
    def _detect(self, image: Tensor, frame_sample: Any) -> tuple[FrameDetections, dict]:
        """Every query of the frame as a detection (query order; the largest class ``sigmoid`` as score, boxes in
        original-frame pixels) with the last decoder layer's output ``hs[-1]`` as its features."""
        def detections() -> FrameDetections:
            logits, boxes, outputs = self._run_detr(image, [frame_sample])
            return queries_to_detections(logits[-1][0], boxes[-1][0], frame_sample.metainfo['ori_shape'],
                                         features=outputs[0])

        # the DETR's queries do not depend on the tracker: kept while a calibration tests one checkpoint
        key = ('MOTIP', frame_sample.metainfo.get('img_path'), tuple(image.shape))
        return frame_output(key, detections), {}
