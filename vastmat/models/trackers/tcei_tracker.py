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

Hyperparameters (:class:`TCEIParams`, resolved by :func:`resolve_tcei_params`): the official ``RuntimeTracker``
defaults, then the preset (``preset=``: the ``# For TCEI`` block of the official
``configs/{dancetrack,sportsmot,bft}.yaml``, :data:`TCEI_PRESETS`), then the values of ``params=dict(...)``; or a
built :class:`TCEIParams` (``params=``), used as it is. The MOTIP runtime settings of the same configs
(:data:`TCEI_PRESET_RUNTIME`: DET 0.3, NEWBORN 0.6, ID 0.2, AREA 0, object-max; MISS_TOLERANCE 30 / 60 / 20) belong
to the MOTIP model (``miss_tolerance`` must fit its ``rel_pe_length``) and are set on the tracker's MOTIP arguments,
not by the preset.

Where the parts live: :mod:`.tcei_params` (:class:`TCEIParams`, the presets, :func:`resolve_tcei_params`),
:mod:`.tcei_caches` (:class:`CacheItem`, :class:`EntropyRankedCache`, :class:`TCEICaches`) and
:mod:`.tcei_calibration` (the calibration math, :func:`calibrate_id_logits`, :func:`add_newborns_to_cache`); this
module holds the tracker.
"""
from __future__ import annotations

from typing import Any

from torch import Tensor

from vastmat.registry import MODELS

from .motip_tracker import MOTIPTracker
from .tcei_caches import TCEICaches
from .tcei_calibration import add_newborns_to_cache, calibrate_id_logits
from .tcei_params import TCEI_PARAM_NAMES, TCEIParams, resolve_tcei_params


@MODELS.register_module()
class TCEITracker(MOTIPTracker):
    """MOTIP's runtime tracker with TCEI's test-time calibration (the official TCEI ``RuntimeTracker``).

    Args:
        *args, **kwargs: :class:`MOTIPTracker`'s (the trained MOTIP ID modules and its runtime settings).
        params: TCEI's hyperparameters (:class:`~.tcei_params.TCEIParams`, whose fields the official
            ``RuntimeTracker`` arguments name): a dict of values that win over the preset's (a config's
            ``params=dict(lambda_id=0.5)``), None (the preset's values), or a :class:`TCEIParams`, used as it is
            (then no ``preset``).
        preset: ``'dancetrack'``, ``'sportsmot'`` or ``'bft'``: the official configs' TCEI values
            (:data:`~.tcei_params.TCEI_PRESETS`); None: the official ``RuntimeTracker`` defaults.
        reset_experience_per_video: clear the cross-video caches at each :meth:`reset` (default False: they
            persist across the videos a rank tracks, in the dataset's order, as the official).
    """

    zoo_name = 'TCEI'
    zoo_demo_config = 'tcei/tcei_motip_tiny_zoo_vastmat-demo.py'
    zoo_checkpoint_of = 'MOTIP'  # no training: MOTIP's checkpoint, recalibrated at test time

    def __init__(self, *args: Any, params: TCEIParams | dict | None = None, preset: str | None = None,
                 reset_experience_per_video: bool = False, **kwargs: Any) -> None:
        misplaced = sorted(set(kwargs) & set(TCEI_PARAM_NAMES))
        if misplaced:
            raise TypeError(f'TCEITracker: {", ".join(misplaced)} are TCEI hyperparameters: give them in '
                            'params=dict(...)')
        if isinstance(params, TCEIParams):
            if preset is not None:
                raise ValueError(f'TCEITracker: preset {preset!r} with a built TCEIParams; give params=dict(...) '
                                 'with a preset, or the TCEIParams alone')
        else:
            params = resolve_tcei_params(preset, **(params or {}))
        super().__init__(*args, **kwargs)
        self.params, self.preset = params, preset
        self.reset_experience_per_video = bool(reset_experience_per_video)
        self.caches = TCEICaches.from_params(params)
        self._calibrated_logits: Tensor | None = None  # the frame's calibrated logits (None without a window)

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
        """MOTIP's labels, with TCEI's calibration (:meth:`refine_id_labels`) on a frame with a window."""
        self._calibrated_logits = None
        return super().predict_id_labels(features)

    def refine_id_labels(self, labels: Tensor, logits: Tensor, id_embeds: Tensor, features: Tensor) -> Tensor:
        """The labels of the initial assignment (``labels``) recalibrate the ``logits`` (:func:`calibrate_id_logits`),
        which are assigned again (``(n,)`` labels, ``K`` = newborn)."""
        self._calibrated_logits = calibrate_id_logits(logits, labels, id_embeds, features, self.caches,
                                                      self.id_label_to_id, self.params)
        return self.assign_logits(self._calibrated_logits)

    def assign_newborn_labels(self, labels: Tensor, features: Tensor) -> Tensor:
        """MOTIP's label recycling; each newborn's DETR embedding goes into the per-video positive cache under
        its new global id (:func:`add_newborns_to_cache`)."""
        add_newborns_to_cache(self.caches, self.params, labels, features, self._calibrated_logits, self.next_id,
                              self.num_id_vocabulary)
        return super().assign_newborn_labels(labels, features)

    def extra_repr(self) -> str:
        return (f'{super().extra_repr()}, preset={self.preset!r}, '
                f'reset_experience_per_video={self.reset_experience_per_video}')
