"""MOTIP's runtime tracker (Gao et al., CVPR 2025, "Multiple Object Tracking as ID Prediction"), a faithful port of
the official ``RuntimeTracker``.

Follows MCG-NJU/MOTIP ``models/runtime_tracker.py`` and ``structures/ordered_set.py`` at HEAD ``5cfbcd4``, driven as
``submit_and_evaluate.py`` drives it (reference/trackers.md section 5, "Inference"). The network's part is the MOT
model's: per frame this tracker receives ``frame.detections`` = ALL Deformable DETR queries of the frame (boxes
``x1 y1 x2 y2`` in original-frame pixels, ``scores`` the max sigmoid over classes, ``features`` the last decoder
layer's output embedding ``hs[-1]`` of each query). It holds the learned ID parts itself (``trajectory_modeling``,
``id_decoder``, built from their configs), so the MOT model trains them through ``tracker.trajectory_modeling`` and
``tracker.id_decoder`` and one checkpoint carries them.

Per frame (:meth:`MOTIPTracker.update`):

1. :meth:`~MOTIPTracker.active_detections`: the queries with ``score > det_thresh`` and box area (``w * h``,
   original-frame pixels) ``> area_thresh``;
2. :meth:`~MOTIPTracker.predict_id_labels`: with a trajectory window (every frame after the video's first), the
   window's features go through trajectory modelling, the ID decoder reads them (with their ID labels, times
   ``0 .. T-1`` = frame position in the window, masks) and the current detections (time ``T``, the newborn token),
   softmax over the ``K + 1`` words, then :meth:`~MOTIPTracker.assign` by ``assignment_protocol``; without a window
   every detection is newborn (label ``K``);
3. newborns (label ``K``) with ``score <= newborn_thresh`` are dropped; the labels kept move to the end of the
   label queue (an ordered set of ``0 .. K-1``, least recently used first); if more newborns are left than free
   labels, the last ones (detection order) are dropped;
4. :meth:`~MOTIPTracker.assign_newborn_labels`: the newborns take the first labels of the queue (LRU), in detection
   order; a recycled label's old trajectory is evicted from the window and its old id forgotten; each newborn gets a
   new id (official ids from 0, written as id + 1: this tracker's ids start at 1);
5. the frame's labels move to the end of the queue (detection order);
6. :meth:`~MOTIPTracker.update_trajectories`: the window keeps its last ``miss_tolerance - 2`` frames, new labels get
   a column (masked in the past), the current frame is appended (features / boxes of the detection with that label,
   masked where none), times renumbered ``0 .. T-1``;
7. :meth:`~MOTIPTracker.remove_inactive`: label columns without an observation in the window are removed.

The output is the kept detections in detection order: their input boxes and scores, and the ids of their labels.

Assignment protocols (:meth:`~MOTIPTracker.assign`, the pure functions of :mod:`.motip_assignment`), the official
ones:

* ``'object-max'`` (the published configs): each detection takes its argmax word; it is accepted if the word is a
  label in the window, its probability is ``>= id_thresh``, no other detection claims that word with a higher
  probability, and no earlier detection took it already; otherwise the detection is newborn;
* ``'hungarian'``: ``scipy.optimize.linear_sum_assignment`` on ``1 - p`` with the newborn column repeated ``N - 1``
  extra times; a detection matched to a word that is not a window label, to a newborn column, or with ``p <
  id_thresh`` is newborn;
* ``'id-max'``: each word takes the detection with the highest probability for it, accepted when the probability is
  ``>= id_thresh``, no word claims that detection with a higher probability and the word is a window label; when
  words tie on a detection, each passes and the last one (highest index) is kept (the official lowers a tied value
  by 1e-4 before taking the maximum, which leaves the maximum unchanged).

Window length: the decoder sees ``miss_tolerance - 1`` past frames at most (times ``0 .. miss_tolerance - 2``, the
current frame at time ``T <= miss_tolerance - 1``), so the relative time ``T - t`` stays below the decoder's
``rel_pe_length`` iff ``miss_tolerance <= rel_pe_length`` (the official rule SAMPLE_LENGTHS == REL_PE_LENGTH >=
MISS_TOLERANCE); a larger ``miss_tolerance`` is refused. The official slicing ``[-miss_tolerance + 2:]`` does not cut
the window for ``miss_tolerance <= 2`` (``[0:]``, ``[1:]``), so those values are refused too.

Differences from the official code (none changes a decision where the official code runs):

* more newborns than free labels in a frame that also has tracked detections: the official mask of the newborns to
  keep has the length of all detections and its assignment raises (``shape mismatch``); here the first
  ``free`` newborns (detection order) are kept, which is what the official code does on a frame of newborns only;
* ``'id-max'`` on a frame without active detections: the official ``torch.max`` over an empty dimension raises;
  here nothing is assigned (the decoder is not run on a frame without active detections; with ``'object-max'`` and
  ``'hungarian'`` the official runs it and assigns nothing either);
* boxes stay as given (float64 ``x1 y1 x2 y2`` pixels; the official converts normalised ``cx cy w h`` to pixels in
  float32, about 2e-4 px apart at 2560 px); ``area_thresh`` compares ``w * h`` in original-frame pixels (the official
  computes the same area from the normalised box);
* errors raise instead of ``print`` / ``exit``; ``use_sigmoid`` (USE_FOCAL_LOSS) and ``only_detr`` are not ported
  (the published configs use softmax and the ID decoder); tensors live on the ID modules' device.

Subclasses (TCEI) hook in at :meth:`~MOTIPTracker.id_logits` (logits and the id embeddings),
:meth:`~MOTIPTracker.refine_id_labels` (after the assignment), :meth:`~MOTIPTracker.predict_id_labels`,
:meth:`~MOTIPTracker.assign`, :meth:`~MOTIPTracker.assign_newborn_labels`
(``self.kept`` then holds the indices, into the active detections, of the detections it receives),
:meth:`~MOTIPTracker.update_trajectories`, :meth:`~MOTIPTracker.remove_inactive` and :meth:`~MOTIPTracker.reset`;
``id_label_to_id`` maps a label to its official id (from 0; reported + 1).

Checked against the official ``RuntimeTracker``'s own output in tests/models/trackers/test_motip_tracker.py
(tests/fixtures/motip_tracker_official).

The tracker's state containers are in :mod:`.motip_state` (:class:`WindowKeysValues`, :class:`LabelQueue`), the
assignment protocols in :mod:`.motip_assignment` (:func:`assign_id_labels`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch import Tensor, nn

from vastmat.registry import MODELS
from vastmat.structures.tracking import TrackingFrame, TrackOutput

from . import motip_modules  # noqa: F401  (registers MOTIPTrajectoryModeling, MOTIPIDDecoder)
from .base_tracker import BaseTracker
from .motip_assignment import ASSIGNMENT_PROTOCOLS, assign_id_labels
from .motip_state import LabelQueue, WindowKeysValues

# the trajectory window's tensors, all (T, N, ...): T frames (oldest first), N label columns
WINDOW = ('trajectory_features', 'trajectory_boxes', 'trajectory_id_labels', 'trajectory_times', 'trajectory_masks')


def _build(cfg: dict | nn.Module | None, default: dict, key: str) -> nn.Module:
    if isinstance(cfg, nn.Module):
        return cfg
    if cfg is None:
        cfg = default
    if not isinstance(cfg, dict) or 'type' not in cfg:
        raise TypeError(f'MOTIPTracker: {key} must be a config dict with a type (or a module), got {cfg!r}')
    return MODELS.build(cfg)


@MODELS.register_module()
class MOTIPTracker(BaseTracker):
    """The official MOTIP ``RuntimeTracker`` (defaults: the published configs' inference settings).

    Args:
        trajectory_modeling: config of the trajectory modelling module (default ``MOTIPTrajectoryModeling`` of the
            official size, ``detr_dim = feature_dim = 256``) or a built module.
        id_decoder: config of the ID decoder (default ``MOTIPIDDecoder`` of the official size: 6 layers, ``K = 50``
            ID words, ``rel_pe_length = 30``) or a built module.
        det_thresh: queries with ``score > det_thresh`` are the frame's detections (DET_THRESH 0.3).
        newborn_thresh: a newborn detection is kept only if ``score > newborn_thresh`` (NEWBORN_THRESH 0.6).
        id_thresh: an ID word is accepted only with probability ``>= id_thresh`` (ID_THRESH 0.2).
        area_thresh: detections need a box area ``w * h > area_thresh`` (original-frame pixels; AREA_THRESH 0).
        miss_tolerance: the window holds the last ``miss_tolerance - 1`` frames: a track missed in up to
            ``miss_tolerance - 2`` consecutive frames can still be matched, then it is forgotten;
            ``3 <= miss_tolerance <= id_decoder.rel_pe_length`` (MISS_TOLERANCE 30).
        assignment_protocol: ``'object-max'`` (ASSIGNMENT_PROTOCOL of the published configs), ``'hungarian'`` (the
            official constructor default) or ``'id-max'``.
    """

    required_inputs = ('features', )
    zoo_name = 'MOTIP'
    zoo_demo_config = 'motip/motip_tiny_zoo_vastmat-demo.py'

    def __init__(self, trajectory_modeling: dict | None = None, id_decoder: dict | None = None,
                 det_thresh: float = 0.3, newborn_thresh: float = 0.6, id_thresh: float = 0.2,
                 area_thresh: float = 0.0, miss_tolerance: int = 30, assignment_protocol: str = 'object-max',
                 init_cfg: dict | None = None) -> None:
        super().__init__(init_cfg)
        self.trajectory_modeling = _build(trajectory_modeling, dict(type='MOTIPTrajectoryModeling'),
                                          'trajectory_modeling')
        self.id_decoder = _build(id_decoder, dict(type='MOTIPIDDecoder'), 'id_decoder')
        protocol = str(assignment_protocol).lower()
        if protocol not in ASSIGNMENT_PROTOCOLS:
            raise ValueError(f'MOTIPTracker: assignment_protocol {assignment_protocol!r} is not supported; use one of '
                             f'{", ".join(ASSIGNMENT_PROTOCOLS)}')
        self.assignment_protocol = protocol
        self.det_thresh, self.newborn_thresh = float(det_thresh), float(newborn_thresh)
        self.id_thresh, self.area_thresh = float(id_thresh), float(area_thresh)
        self.num_id_vocabulary = int(self.id_decoder.num_id_vocabulary)
        self.feature_dim = int(self.id_decoder.feature_dim)
        detr_dim = getattr(self.trajectory_modeling, 'detr_dim', None)
        out_dim = getattr(self.trajectory_modeling, 'feature_dim', None)
        if detr_dim is not None and (detr_dim != self.feature_dim or out_dim != self.feature_dim):
            raise ValueError(f'MOTIPTracker: trajectory_modeling.detr_dim ({detr_dim}) and .feature_dim ({out_dim}) '
                             f'must equal id_decoder.feature_dim ({self.feature_dim}): the current detections enter '
                             'the ID decoder without trajectory modelling, so all three are the DETR embedding size')
        rel_pe_length = int(self.id_decoder.rel_pe_length)
        if not 3 <= int(miss_tolerance) <= rel_pe_length:
            raise ValueError(f'MOTIPTracker: miss_tolerance must be in [3, id_decoder.rel_pe_length = '
                             f'{rel_pe_length}], got {miss_tolerance}: the window holds miss_tolerance - 1 past '
                             'frames and relative times up to miss_tolerance - 1 must have a relative position '
                             'embedding (the official rule REL_PE_LENGTH >= MISS_TOLERANCE); the official slicing '
                             'does not cut the window for miss_tolerance <= 2')
        self.miss_tolerance = int(miss_tolerance)
        MOTIPTracker.reset(self)  # this class's state only: a subclass sets up its own after super().__init__()

    # ------------------------------------------------------------------------------------------------------ state
    @property
    def device(self) -> torch.device:
        """The ID modules' device (the tracker's tensors live there)."""
        for p in self.id_decoder.parameters():
            return p.device
        return torch.device('cpu')

    def reset(self) -> None:
        """A new video: no trajectories, every label free (queue ``0 .. K-1``), ids restart at 1. :meth:`update`
        also resets on a frame numbered 1 after other frames."""
        device = self.device
        self.next_id = 0  # the official counter (ids from 0; reported + 1)
        self.id_label_to_id: dict[int, int] = {}
        self.id_queue = LabelQueue(range(self.num_id_vocabulary))
        # the trajectory window (WINDOW), empty
        self.trajectory_features = torch.zeros((0, 0, self.feature_dim), dtype=torch.float32, device=device)
        self.trajectory_boxes = torch.zeros((0, 0, 4), dtype=torch.float64, device=device)
        self.trajectory_id_labels = torch.zeros((0, 0), dtype=torch.int64, device=device)
        self.trajectory_times = torch.zeros((0, 0), dtype=torch.int64, device=device)
        self.trajectory_masks = torch.zeros((0, 0), dtype=torch.bool, device=device)
        decoder = self.id_decoder
        self.window_keys_values = WindowKeysValues(decoder.num_layers, decoder.num_heads, decoder.head_dim, device)
        self.window_frame = 0  # frames tracked since the reset (the window's frame numbers)
        self.kept = torch.zeros(0, dtype=torch.int64, device=device)
        self.started = False  # a frame was tracked since the last reset

    @property
    def window_labels(self) -> set[int]:
        """The ID labels of the window's trajectories (the official ``trajectory_id_labels[0]``)."""
        if self.trajectory_id_labels.shape[0] == 0:
            return set()
        return set(self.trajectory_id_labels[0].tolist())

    def _map_window(self, fn: Callable[[Tensor], Tensor]) -> None:
        """Apply ``fn`` to each of the window's ``(T, N, ...)`` tensors (:data:`WINDOW`)."""
        for name in WINDOW:
            setattr(self, name, fn(getattr(self, name)))

    def _follow_modules(self) -> None:
        """Move the window to the modules' device if they moved since :meth:`reset`."""
        device = self.device
        if self.trajectory_features.device != device:
            self._map_window(lambda t: t.to(device))
            self.kept = self.kept.to(device)
            self.window_keys_values.to(device)

    def _select_columns(self, keep: Tensor) -> None:
        self._map_window(lambda t: t[:, keep])

    # ----------------------------------------------------------------------------------------------------- update
    @torch.no_grad()
    def update(self, frame: TrackingFrame) -> TrackOutput:
        frame.require(*self.required_inputs)
        if frame.frame_id == 1 and self.started:  # a new video without reset() (the official: a tracker per video)
            self.reset()
        self.started = True
        self._follow_modules()
        scores, boxes, features = self.active_detections(frame)
        labels = self.predict_id_labels(features)
        newborn = self.num_id_vocabulary
        # newborns need score > newborn_thresh
        keep = (labels != newborn) | (scores > self.newborn_thresh)
        kept = torch.nonzero(keep).flatten()
        # the labels kept move to the end of the queue before newborns draw from it (no label taken twice)
        tracked = labels[kept] != newborn
        for label in labels[kept][tracked].tolist():
            self.id_queue.add(label)
        free = len(self.id_queue) - int(tracked.sum())
        newborn_idxs = torch.nonzero(~tracked).flatten()
        if len(newborn_idxs) > free:  # more newborns than free labels: the last ones are dropped
            drop = torch.zeros(len(kept), dtype=torch.bool, device=kept.device)
            drop[newborn_idxs[free:]] = True
            kept = kept[~drop]
        self.kept = kept  # indices into the active detections (for subclasses)
        scores, boxes, features, labels = scores[kept], boxes[kept], features[kept], labels[kept]
        labels = self.assign_newborn_labels(labels, features)
        if len(torch.unique(labels)) != len(labels):  # the official prints and exits
            raise RuntimeError(f'video {frame.video_name!r} frame {frame.frame_id}: MOTIPTracker assigned an ID label '
                               f'twice ({labels.tolist()}); this is a bug')
        ids = np.array([self.id_label_to_id[label] + 1 for label in labels.tolist()], np.int64)
        for label in labels.tolist():
            self.id_queue.add(label)
        self.update_trajectories(boxes, features, labels)
        self.remove_inactive()
        # the DETR embeddings the ID decoder read: the tracks' appearance for a post-processor (GlobalLinker)
        return TrackOutput(ids, boxes.cpu().numpy().astype(np.float64).reshape(-1, 4),
                           scores.cpu().numpy().astype(np.float64),
                           features.detach().cpu().numpy().astype(np.float64))

    def active_detections(self, frame: TrackingFrame) -> tuple[Tensor, Tensor, Tensor]:
        """The frame's detections with ``score > det_thresh`` and area ``> area_thresh``, on the modules' device:
        scores ``(n,)`` float32, boxes ``(n, 4)`` float64 ``x1 y1 x2 y2`` pixels, features ``(n, C)`` float32."""
        dets = frame.detections
        where = f'video {frame.video_name!r} frame {frame.frame_id}'
        if dets.features is None:
            raise ValueError(f'{where}: MOTIPTracker needs features (the DETR output embedding of each query)')
        feats = np.asarray(dets.features)
        if feats.ndim != 2 or feats.shape[1] != self.feature_dim:
            raise ValueError(f'{where}: detection features have shape {feats.shape} but the ID decoder '
                             f'reads (n, {self.feature_dim}) (id_decoder.feature_dim, trajectory_modeling.detr_dim): '
                             'features must be the DETR decoder output hs[-1]')
        device = self.device
        scores = torch.as_tensor(dets.scores, device=device).float()
        boxes = torch.as_tensor(dets.bboxes, dtype=torch.float64, device=device).reshape(-1, 4)
        area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        active = torch.nonzero((scores > self.det_thresh) & (area > self.area_thresh)).flatten()
        features = torch.as_tensor(feats, device=device).float()
        return scores[active], boxes[active], features[active]

    def id_logits(self, features: Tensor) -> tuple[Tensor, Tensor]:
        """The ID decoder's ``(n, K + 1)`` logits for the detections' ``features`` against the window, and the id
        half of its last layer's tokens ``(n, id_dim)`` (TCEI's ``after_id_decoder_id_embeds``).

        The official runs trajectory modelling and the decoder on the whole window every frame; here each observed
        window token's keys and values were computed once, when its frame entered the window
        (:meth:`update_trajectories`, :class:`WindowKeysValues`), and the detections are decoded against them
        (``MOTIPIDDecoder.decode_against_keys_values``: the decoder's forward without the masked tokens; equal to
        it within float rounding, tests/models/trackers/test_motip_modules.py)."""
        keys_values, padding, rel_times = self.window_keys_values.view(self.window_frame + 1)
        return self.id_decoder.decode_against_keys_values(features, keys_values, padding, rel_times)

    def predict_id_labels(self, features: Tensor) -> Tensor:
        """``(n,)`` ID labels of the active detections, ``0 .. K-1`` or ``K`` (newborn): the ID decoder's logits
        against the window, :meth:`assign_logits`, then :meth:`refine_id_labels`."""
        n = features.shape[0]
        if self.trajectory_features.shape[0] == 0 or n == 0:  # the video's first frame (or nothing to assign)
            return torch.full((n, ), self.num_id_vocabulary, dtype=torch.int64, device=features.device)
        logits, id_embeds = self.id_logits(features)
        return self.refine_id_labels(self.assign_logits(logits), logits, id_embeds, features)

    def refine_id_labels(self, labels: Tensor, logits: Tensor, id_embeds: Tensor, features: Tensor) -> Tensor:
        """The labels after the assignment of the ``logits`` (:meth:`id_logits`' outputs, ``features`` the
        detections'): MOTIP keeps ``labels``; TCEI calibrates the logits and assigns again."""
        return labels

    def assign(self, id_scores: Tensor) -> list[int]:
        """ID labels (``K`` = newborn) of word probabilities ``id_scores (n, K + 1)`` against the window, by
        ``assignment_protocol`` (:func:`~.motip_assignment.assign_id_labels`)."""
        return assign_id_labels(id_scores, self.window_labels, self.num_id_vocabulary, self.id_thresh,
                                self.assignment_protocol)

    def assign_logits(self, logits: Tensor) -> Tensor:
        """``(n,)`` int64 labels of the softmax of ID ``logits (n, K + 1)`` (:meth:`assign`)."""
        return torch.tensor(self.assign(logits.softmax(dim=-1)), dtype=torch.int64, device=logits.device)

    def assign_newborn_labels(self, labels: Tensor, features: Tensor) -> Tensor:
        """Give the newborns (label ``K``) the least recently used labels of the queue, in detection order; evict the
        trajectories and forget the ids those labels had; new ids. ``features`` are the kept detections'."""
        newborn = self.num_id_vocabulary
        is_newborn = labels == newborn
        n = int(is_newborn.sum())
        if n == 0:
            return labels
        recycled = self.id_queue.first(n)
        evict = torch.zeros(self.trajectory_id_labels.shape[1], dtype=torch.bool, device=labels.device)
        for label in recycled:
            if self.trajectory_id_labels.shape[0] > 0:
                evict |= self.trajectory_id_labels[0] == label
            self.id_label_to_id.pop(label, None)
        if bool(evict.any()):
            self._select_columns(~evict)
        self.window_keys_values.remove_labels(recycled)
        labels = labels.clone()
        labels[is_newborn] = torch.tensor(recycled, dtype=torch.int64, device=labels.device)
        for label in recycled:
            self.id_label_to_id[label] = self.next_id
            self.next_id += 1
        return labels

    def update_trajectories(self, boxes: Tensor, features: Tensor, labels: Tensor) -> None:
        """Cut the window to its last ``miss_tolerance - 2`` frames, add a column per new label, append the frame."""
        device = labels.device
        keep_frames = self.miss_tolerance - 2  # the official [-miss_tolerance + 2:] (miss_tolerance >= 3)
        self._map_window(lambda t: t[-keep_frames:])
        num_frames = self.trajectory_id_labels.shape[0]
        # new labels get a column, absent in the past frames (the official order: the set difference's iteration)
        new_labels = set(labels.tolist()) - self.window_labels
        if new_labels:
            new = torch.tensor(list(new_labels), dtype=torch.int64, device=device)
            m = len(new)
            self.trajectory_id_labels = torch.cat([self.trajectory_id_labels, new[None].repeat(num_frames, 1)], 1)
            self.trajectory_boxes = torch.cat(
                [self.trajectory_boxes, self.trajectory_boxes.new_zeros((num_frames, m, 4))], 1)
            self.trajectory_times = torch.cat(
                [self.trajectory_times, torch.arange(num_frames, device=device)[:, None].repeat(1, m)], 1)
            self.trajectory_features = torch.cat(
                [self.trajectory_features, self.trajectory_features.new_zeros((num_frames, m, self.feature_dim))], 1)
            self.trajectory_masks = torch.cat(
                [self.trajectory_masks, torch.ones((num_frames, m), dtype=torch.bool, device=device)], 1)
        # the current frame: each column takes the detection with its label, or stays masked
        current_labels = self.trajectory_id_labels[0] if num_frames > 0 else labels
        n = len(current_labels)
        current_features = self.trajectory_features.new_zeros((n, self.feature_dim))
        current_boxes = self.trajectory_boxes.new_zeros((n, 4))
        current_masks = torch.ones(n, dtype=torch.bool, device=device)
        columns, dets = torch.nonzero(current_labels[:, None] == labels[None, :], as_tuple=True)
        current_features[columns] = features[dets].to(current_features.dtype)
        current_boxes[columns] = boxes[dets].to(current_boxes.dtype)
        current_masks[columns] = False
        # the decoder's keys and values of the frame's observed tokens (column order), once
        self.window_keys_values.remove_before(self.window_frame - keep_frames + 1)
        self.window_frame += 1
        self.window_keys_values.append(self.id_decoder.trajectory_keys_values(
            self.trajectory_modeling(current_features[columns]), labels[dets]), labels[dets], self.window_frame)
        self.trajectory_features = torch.cat([self.trajectory_features, current_features[None]], 0)
        self.trajectory_boxes = torch.cat([self.trajectory_boxes, current_boxes[None]], 0)
        self.trajectory_id_labels = torch.cat([self.trajectory_id_labels, current_labels[None]], 0)
        self.trajectory_masks = torch.cat([self.trajectory_masks, current_masks[None]], 0)
        num_frames = self.trajectory_id_labels.shape[0]  # times = the frame position in the window
        self.trajectory_times = torch.arange(num_frames, device=device)[:, None].repeat(1, n)

    def remove_inactive(self) -> None:
        """Remove the label columns with no observation in the window."""
        active = (~self.trajectory_masks).any(dim=0)
        if not bool(active.all()):
            self._select_columns(active)

    def extra_repr(self) -> str:
        return (f'det_thresh={self.det_thresh}, newborn_thresh={self.newborn_thresh}, id_thresh={self.id_thresh}, '
                f'area_thresh={self.area_thresh}, miss_tolerance={self.miss_tolerance}, '
                f'assignment_protocol={self.assignment_protocol!r}')
