"""TCEI's test-time calibration of MOTIP (Guo et al., CVPR 2026, "Dual-level Adaptation for Multi-Object Tracking:
Building Test-Time Calibration from Experience and Intuition"), a faithful port of the official code.

Follows 1941Zpf/TCEI at HEAD ``145d1b8``: ``TCEI/tcei.py`` (the cache functions), ``models/runtime_tracker.py`` (the
MOTIP ``RuntimeTracker`` with TCEI added: ``_get_id_pred_labels`` and ``_assign_newborn_id_labels``),
``models/motip/id_decoder.py`` (returns the id half of the last layer's tokens) and ``submit_and_evaluate.py`` (how
the caches live); reference/trackers.md section 6. No training: TCEI runs a trained MOTIP model and recalibrates its
ID logits per frame with four key-value caches (TDA-style, forward only).

Caches (:class:`EntropyRankedCache`: per class, at most ``capacity`` items sorted by entropy, lowest first):

* intuition, per video (``pos_cache`` / ``neg_cache``; cleared by :meth:`TCEITracker.reset`): keyed by **global
  track id** (the official 0-based id, this tracker's reported id - 1); keys are the L2-normalised DETR output
  embeddings of the detections (``frame.detections.features``);
* experience, across videos (``w_pos_cache`` / ``w_neg_cache``): keyed by **ID-label slot** ``0 .. K`` (``K`` the
  newborn word); keys are the L2-normalised id half of the ID decoder's last-layer token
  (:meth:`MOTIPTracker.id_logits`' second output). They persist from video to video: the official creates them once
  per process and tracks the test videos one after another, so the result depends on the video order. Here the
  videos are tracked in the test dataset's order, per rank: ``VastMATDataset`` lists a split's videos in the split
  file's order (a root's videos: sorted names), and mmdet's ``TrackImgSampler`` gives each rank a contiguous share
  of that list (``np.array_split``); each rank keeps its own experience caches, as each official process does (the
  official sorts the names, gives rank ``r`` every ``world_size``-th one from ``r`` and tracks them in the dataset's
  order). The caches live in this tracker object (not in checkpoints). ``reset_experience_per_video=True`` clears
  them at every video start (results then do not depend on the order); :meth:`TCEITracker.reset_experience` clears
  them on demand.

Per frame with a trajectory window (:func:`calibrate_id_logits`, the official ``_get_id_pred_labels``):

1. MOTIP's ID logits ``(n, K + 1)`` and an initial assignment of the softmax by ``assignment_protocol``;
2. for each detection ``i`` in detection order, with ``pred`` its initial label, ``H`` the softmax entropy of its
   raw logits (nats) and ``h = H / log2(K + 1)`` (the official "normalised" entropy, nats over bits):

   * experience: insert ``(id key, H)`` into ``w_pos_cache[pred]``, and ``(id key, H, softmax)`` into
     ``w_neg_cache[pred]`` when ``lower < h < upper``; ``final_id = logits + W_pos - W_neg``
     (:func:`experience_cache_logits`);
   * if ``pred`` is a tracked label (not newborn), with ``g`` its global id: insert ``(DETR key, H)`` into
     ``pos_cache[g]`` and, when ``h`` is in the band, ``(DETR key, H, negative ids)`` into ``neg_cache[g]``
     (:func:`negative_ids`); ``final_obj = logits + P - N`` (:func:`object_cache_logits`); the detection's logits
     become :func:`fuse_logits` (``use_cache='object_and_id'``: ``logits + l_obj + lambda_id * p(1 - p) *
     fisher_orthogonalize(l_obj, l_id)``). A detection first predicted newborn keeps its logits;
3. the calibrated logits' softmax is assigned again by ``assignment_protocol``; the newborns get labels as in MOTIP
   (:meth:`TCEITracker.assign_newborn_labels`) and each newborn's DETR key goes into ``pos_cache`` under its new
   global id.

Faithful quirks, reproduced because they are the published behaviour:

* ``prob_map[0][:len(id_labels)]`` (flagged by the author as the wrong length): the per-video negative ids of a
  detection are built by reading the first ``n`` word probabilities (``n`` = number of detections) as if word ``j``
  were detection ``j``, and taking the initial labels of the detections ``j`` whose probability ``p_j`` lies in the
  mask band (``prob_map_length_quirk=True``, the default; ``False`` reads the word probabilities as words: the
  tracked labels ``k`` with ``p_k`` in the band);
* the per-video negative logits use, for each cached id, only the last (highest-entropy) item's negative ids, and
  the official ``mask[rows, values[valid]] = 1`` broadcast gives EVERY cached id the union of all of them;
* the entropy a newborn's item is ranked by comes from row ``idx`` of the calibrated logits of the frame's active
  detections, where ``idx`` is the newborn's position among the detections kept after the newborn filter (the same
  row only when nothing before it was filtered); on a video's first frame (no logits) it is the entropy of a
  uniform ``(1, K)`` row, ``ln K``;
* the experience caches' logits use no temperature and no normalisation (``w_pos_temperature`` and
  ``w_neg_temperature`` are read and unused, as ``lambda_object``).

Differences from the official code: device-agnostic (the official hard-codes ``.cuda()``); the official one-hot of
an id without a label uses the placeholder index 50 (it breaks unless ``K = 50``): here that row is simply zero; the
min-max normalisation of the per-video affinities divides by zero when the cache holds one class, or when all its
classes have the same affinity (NaN logits in the official): here the normalised affinities are then all 1 (the
min-max maps the best class to 1, and with one class that class is the best; with a temperature the softmax is
uniform either way); errors raise instead of printing.

Presets (``preset=``): the ``# For TCEI`` block of the official ``configs/{dancetrack,sportsmot,bft}.yaml``
(:data:`TCEI_PRESETS`); any argument given explicitly wins over the preset, the preset over the official
``RuntimeTracker`` defaults. The MOTIP runtime settings of the same configs (:data:`TCEI_PRESET_RUNTIME`: DET 0.3,
NEWBORN 0.6, ID 0.2, AREA 0, object-max; MISS_TOLERANCE 30 / 60 / 20) belong to the MOTIP model (``miss_tolerance``
must fit its ``rel_pe_length``) and are set on the tracker's MOTIP arguments, not by the preset.

Where the parts live: :mod:`.tcei_params` (:class:`TCEIParams`, the presets, :func:`resolve_tcei_params`),
:mod:`.tcei_caches` (:class:`CacheItem`, :class:`EntropyRankedCache`, :class:`TCEICaches`) and
:mod:`.tcei_calibration` (the calibration math, :func:`calibrate_id_logits`, :func:`add_newborns_to_cache`); this
module holds the tracker.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from vastmat.registry import MODELS

from .motip_tracker import MOTIPTracker
from .tcei_caches import CacheItem, EntropyRankedCache, TCEICaches
from .tcei_calibration import (add_newborns_to_cache, calibrate_id_logits, experience_cache_logits, fisher_inner,
                               fisher_orthogonalize, fuse_logits, minmax_normalize, negative_ids, normalized_entropy,
                               object_cache_logits, softmax_entropy)
from .tcei_params import TCEI_PARAM_NAMES, TCEI_PRESETS, TCEIParams, resolve_tcei_params

# TCEITracker, and the names that tests/models/trackers/test_tcei.py and
# tests/fixtures/tcei_official/make_tracker_fixtures.py import from this module (defined in .tcei_params,
# .tcei_caches and .tcei_calibration)
__all__ = ['TCEITracker', 'TCEI_PRESETS', 'CacheItem', 'EntropyRankedCache', 'TCEICaches', 'TCEIParams',
           'calibrate_id_logits', 'experience_cache_logits', 'fisher_inner', 'fisher_orthogonalize', 'fuse_logits',
           'minmax_normalize', 'negative_ids', 'normalized_entropy', 'object_cache_logits', 'resolve_tcei_params',
           'softmax_entropy']


@MODELS.register_module()
class TCEITracker(MOTIPTracker):
    """MOTIP's runtime tracker with TCEI's test-time calibration (the official TCEI ``RuntimeTracker``).

    Args:
        *args, **kwargs: :class:`MOTIPTracker`'s (the trained MOTIP ID modules and its runtime settings).
        preset: ``'dancetrack'``, ``'sportsmot'`` or ``'bft'``: the official configs' TCEI values
            (:data:`TCEI_PRESETS`); None: the official ``RuntimeTracker`` defaults. Explicit arguments win.
        pos_* / neg_*: the per-video caches: enabled, shot capacity, alpha, beta, temperature (0 = no softmax),
            the normalised-entropy band ``(lower, upper)`` that admits a negative item and the probability band
            ``(lower, upper)`` that marks negative labels.
        w_pos_* / w_neg_*: the same for the cross-video caches (temperatures unused, as the official).
        use_cache: ``'object_and_id'`` (the fusion), ``'object'`` or ``'id'`` (one level only).
        lambda_object: unused (as the official); lambda_id: weight of the orthogonalised id term.
        prob_map_length_quirk: True (the published ``prob_map[0][:len(id_labels)]``) or False (module docstring).
        reset_experience_per_video: clear the cross-video caches at each :meth:`reset` (default False: they
            persist across the videos a rank tracks, in the dataset's order, as the official).
    """

    zoo_name = 'TCEI'
    zoo_demo_config = 'tcei/tcei_motip_tiny_zoo_vastmat-demo.py'
    zoo_checkpoint_of = 'MOTIP'  # no training: MOTIP's checkpoint, recalibrated at test time

    def __init__(self, *args: Any, preset: str | None = None, pos_enabled: bool | None = None,
                 pos_shot_capacity: int | None = None, pos_alpha: float | None = None,
                 pos_beta: float | None = None, neg_enabled: bool | None = None,
                 neg_shot_capacity: int | None = None, neg_alpha: float | None = None,
                 neg_beta: float | None = None, neg_entropy_threshold_lower: float | None = None,
                 neg_entropy_threshold_upper: float | None = None, neg_mask_threshold_lower: float | None = None,
                 neg_mask_threshold_upper: float | None = None, pos_temperature: float | None = None,
                 neg_temperature: float | None = None, w_pos_enabled: bool | None = None,
                 w_pos_shot_capacity: int | None = None, w_pos_alpha: float | None = None,
                 w_pos_beta: float | None = None, w_neg_enabled: bool | None = None,
                 w_neg_shot_capacity: int | None = None, w_neg_alpha: float | None = None,
                 w_neg_beta: float | None = None, w_neg_entropy_threshold_lower: float | None = None,
                 w_neg_entropy_threshold_upper: float | None = None,
                 w_neg_mask_threshold_lower: float | None = None, w_neg_mask_threshold_upper: float | None = None,
                 w_pos_temperature: float | None = None, w_neg_temperature: float | None = None,
                 use_cache: str | None = None, lambda_object: float | None = None, lambda_id: float | None = None,
                 prob_map_length_quirk: bool | None = None, reset_experience_per_video: bool = False,
                 **kwargs: Any) -> None:
        arguments = locals()
        given = {k: arguments[k] for k in TCEI_PARAM_NAMES if arguments.get(k) is not None}
        self.params = resolve_tcei_params(preset, **given)
        self.preset = preset
        self.reset_experience_per_video = bool(reset_experience_per_video)
        self._calibrated_logits: Tensor | None = None
        # set before MOTIPTracker.__init__, which calls reset() (plain attributes: nn.Module allows them here)
        self.caches = TCEICaches.from_params(self.params)
        super().__init__(*args, **kwargs)

    # ------------------------------------------------------------------------------------------------------ state
    def reset(self) -> None:
        """A new video: MOTIP's state, the per-video caches cleared (and the cross-video ones if
        ``reset_experience_per_video``)."""
        super().reset()
        self._calibrated_logits = None
        self.caches.pos.clear()
        self.caches.neg.clear()
        if self.reset_experience_per_video:
            self.reset_experience()

    def reset_experience(self) -> None:
        """Clear the cross-video (experience) caches."""
        self.caches.w_pos.clear()
        self.caches.w_neg.clear()

    # --------------------------------------------------------------------------------------------------- the steps
    def predict_id_labels(self, features: Tensor) -> Tensor:
        """MOTIP's labels after TCEI's calibration: the initial assignment, :func:`calibrate_id_logits`, the
        assignment again (``(n,)`` labels, ``K`` = newborn)."""
        n = features.shape[0]
        self._calibrated_logits = None
        if self.trajectory_features.shape[0] == 0 or n == 0:
            return torch.full((n, ), self.num_id_vocabulary, dtype=torch.int64, device=features.device)
        logits, id_embeds = self.id_logits(features)
        labels = torch.tensor(self.assign(logits.softmax(dim=-1)), dtype=torch.int64, device=features.device)
        calibrated = calibrate_id_logits(logits, labels, id_embeds, features, self.caches, self.id_label_to_id,
                                         self.params)
        self._calibrated_logits = calibrated
        return torch.tensor(self.assign(calibrated.softmax(dim=-1)), dtype=torch.int64, device=features.device)

    def assign_newborn_labels(self, labels: Tensor, features: Tensor) -> Tensor:
        """MOTIP's label recycling; each newborn's DETR embedding goes into the per-video positive cache under
        its new global id (:func:`add_newborns_to_cache`)."""
        add_newborns_to_cache(self.caches, self.params, labels, features, self._calibrated_logits, self.next_id,
                              self.num_id_vocabulary)
        return super().assign_newborn_labels(labels, features)

    def extra_repr(self) -> str:
        return (f'{super().extra_repr()}, preset={self.preset!r}, '
                f'reset_experience_per_video={self.reset_experience_per_video}')
