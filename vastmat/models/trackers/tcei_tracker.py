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
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Iterator

import torch
import torch.nn.functional as F
from torch import Tensor

from vastmat.registry import MODELS

from .motip_tracker import MOTIPTracker

USE_CACHE_MODES = ('object_and_id', 'object', 'id')


@dataclass(frozen=True)
class TCEIParams:
    """TCEI's hyperparameters (the official ``RuntimeTracker`` argument names and defaults)."""

    # intuition (per-video caches)
    pos_enabled: bool = True
    pos_shot_capacity: int = 3
    pos_alpha: float = 1.0
    pos_beta: float = 5.0
    neg_enabled: bool = True
    neg_shot_capacity: int = 2
    neg_alpha: float = 0.117
    neg_beta: float = 1.0
    neg_entropy_threshold_lower: float = 0.2
    neg_entropy_threshold_upper: float = 0.5
    neg_mask_threshold_lower: float = 0.03
    neg_mask_threshold_upper: float = 1.0
    pos_temperature: float = 0.0
    neg_temperature: float = 0.01
    # experience (cross-video caches)
    w_pos_enabled: bool = True
    w_pos_shot_capacity: int = 3
    w_pos_alpha: float = 1.0
    w_pos_beta: float = 5.0
    w_neg_enabled: bool = True
    w_neg_shot_capacity: int = 2
    w_neg_alpha: float = 0.117
    w_neg_beta: float = 1.0
    w_neg_entropy_threshold_lower: float = 0.2
    w_neg_entropy_threshold_upper: float = 0.5
    w_neg_mask_threshold_lower: float = 0.03
    w_neg_mask_threshold_upper: float = 1.0
    w_pos_temperature: float = 0.0  # unused by the official code (the experience logits have no temperature)
    w_neg_temperature: float = 0.01  # unused by the official code
    # fusion
    use_cache: str = 'object_and_id'
    lambda_object: float = 1.0  # unused by the official code
    lambda_id: float = 1.0
    # the published prob_map[0][:len(id_labels)] reading (see the module docstring)
    prob_map_length_quirk: bool = True

    def __post_init__(self) -> None:
        if self.use_cache not in USE_CACHE_MODES:
            raise ValueError(f'TCEITracker: use_cache must be one of {", ".join(USE_CACHE_MODES)}, got '
                             f'{self.use_cache!r}')
        for name in ('pos_shot_capacity', 'neg_shot_capacity', 'w_pos_shot_capacity', 'w_neg_shot_capacity'):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f'TCEITracker: {name} must be an integer >= 1, got {value!r}')
        for name in ('pos_temperature', 'neg_temperature'):
            if getattr(self, name) < 0:
                raise ValueError(f'TCEITracker: {name} must be >= 0 (0 = no softmax), got {getattr(self, name)}')


TCEI_PARAM_NAMES = tuple(f.name for f in fields(TCEIParams))

_DANCETRACK = dict(
    pos_enabled=True, pos_shot_capacity=3, pos_alpha=1.0, pos_beta=3.0,
    neg_enabled=True, neg_shot_capacity=2, neg_alpha=0.117, neg_beta=1.5,
    neg_entropy_threshold_lower=0.2, neg_entropy_threshold_upper=0.5,
    neg_mask_threshold_lower=0.03, neg_mask_threshold_upper=1.0, pos_temperature=0.05, neg_temperature=0.05,
    w_pos_enabled=True, w_pos_shot_capacity=3, w_pos_alpha=1.0, w_pos_beta=5.0,
    w_neg_enabled=True, w_neg_shot_capacity=2, w_neg_alpha=0.117, w_neg_beta=2.0,
    w_neg_entropy_threshold_lower=0.2, w_neg_entropy_threshold_upper=0.5,
    w_neg_mask_threshold_lower=0.03, w_neg_mask_threshold_upper=1.0, w_pos_temperature=0.5, w_neg_temperature=0.5,
    use_cache='object_and_id', lambda_object=1.0, lambda_id=1.0)

#: The ``# For TCEI`` block of the official configs (sportsmot.yaml repeats dancetrack.yaml's values).
TCEI_PRESETS: dict[str, dict[str, Any]] = {
    'dancetrack': dict(_DANCETRACK),
    'sportsmot': dict(_DANCETRACK),
    'bft': dict(
        _DANCETRACK, pos_shot_capacity=2, pos_alpha=1.0, pos_beta=0.2, neg_alpha=0.145, neg_beta=1.0,
        pos_temperature=0.02, neg_temperature=0.05, w_pos_shot_capacity=12, w_pos_alpha=1.0, w_pos_beta=3.0,
        w_neg_alpha=0.150, w_neg_beta=1.0, w_neg_entropy_threshold_lower=0.1, w_pos_temperature=0.02,
        w_neg_temperature=0.05),
}

#: The MOTIP runtime settings of the same configs (for reference; set them on the MOTIP arguments).
TCEI_PRESET_RUNTIME: dict[str, dict[str, Any]] = {
    name: dict(det_thresh=0.3, newborn_thresh=0.6, id_thresh=0.2, area_thresh=0.0, miss_tolerance=tolerance,
               assignment_protocol='object-max')
    for name, tolerance in (('dancetrack', 30), ('sportsmot', 60), ('bft', 20))}


# ------------------------------------------------------------------------------------------------------- caches
@dataclass
class CacheItem:
    """One cached observation: ``key (1, C)`` L2-normalised, ``entropy`` its rank (the softmax entropy in nats of
    the raw ID logits it came with; lower is better), ``payload`` what a negative cache stores (the experience
    cache: the softmax ``(1, K + 1)``; the per-video cache: a list of global ids)."""

    key: Tensor
    entropy: float
    payload: Any = None


class EntropyRankedCache:
    """The official cache dict (``update_cache``): class -> at most ``capacity`` :class:`CacheItem`, sorted by
    entropy, lowest first.

    Insertion (:meth:`insert`): a new class starts with the item; a class with room appends it; a full class
    replaces its last (highest-entropy) item if the new entropy is strictly lower, else keeps its items; then the
    class is sorted by entropy (stable: equal entropies keep their insertion order).
    """

    def __init__(self, capacity: int) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f'EntropyRankedCache: capacity must be an integer >= 1, got {capacity!r}')
        self.capacity = capacity
        self._items: dict[int, list[CacheItem]] = {}
        self._stacked: tuple | None = None  # stacked(), until the next change

    def insert(self, cls: int, item: CacheItem) -> None:
        """Insert ``item`` under ``cls`` by the entropy rule."""
        items = self._items.get(cls)
        if items is None:
            self._items[cls] = [item]
            self._stacked = None
            return
        if len(items) < self.capacity:
            items.append(item)
        elif item.entropy < items[-1].entropy:
            items[-1] = item
        else:
            return  # full, not lower than its worst: unchanged (the official sorts the unchanged list again)
        items.sort(key=lambda it: it.entropy)
        self._stacked = None

    def stacked(self) -> tuple[list[int], list[CacheItem], Tensor, Tensor]:
        """``(classes, items, keys, counts)``: the sorted classes, their items in cache order, the items' keys
        stacked ``(M, C)`` and the items per class; built once per change of the cache (the calibration reads a
        cache once per detection, and most insertions into a full class change nothing)."""
        if self._stacked is None:
            classes = sorted(self._items)
            items = [item for c in classes for item in self._items[c]]
            self._stacked = (classes, items, torch.cat([item.key for item in items], dim=0),
                             torch.tensor([len(self._items[c]) for c in classes]))
        return self._stacked

    def classes(self) -> list[int]:
        """The cached classes, sorted (the official iterates ``sorted(cache.keys())``)."""
        return sorted(self._items)

    def __getitem__(self, cls: int) -> list[CacheItem]:
        return self._items[cls]

    def __contains__(self, cls: object) -> bool:
        return cls in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[int]:
        return iter(self.classes())

    def num_items(self) -> int:
        return sum(len(v) for v in self._items.values())

    def clear(self) -> None:
        self._items.clear()
        self._stacked = None

    def __repr__(self) -> str:
        return (f'EntropyRankedCache(capacity={self.capacity}, classes={len(self)}, items={self.num_items()})')


# ------------------------------------------------------------------------------------------------ pure functions
def softmax_entropy(logits: Tensor) -> Tensor:
    """Softmax entropy in nats over the last dimension (the official ``softmax_entropy``): ``(n, C) -> (n,)``."""
    return -(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1)


def normalized_entropy(entropy: Tensor, num_classes: int) -> float:
    """The official ``get_entropy``: entropy (nats, a one-element tensor) divided by ``log2(num_classes)`` (bits;
    so the maximum is ``ln 2 ~ 0.693``, not 1), computed in the tensor's precision."""
    return float(entropy / math.log2(num_classes))


def minmax_normalize(affinity: Tensor) -> Tensor:
    """``(a - min) / (max - min)``; when ``max == min`` (one class, or all equal: 0 / 0, NaN in the official) every
    entry is 1."""
    low, high = affinity.min(), affinity.max()
    if bool(high == low):
        return torch.ones_like(affinity)
    return (affinity - low) / (high - low)


def _tda_logits(affinity: Tensor, values: Tensor, alpha: float, beta: float) -> Tensor:
    # the TDA cache logits, in the official operation order: alpha * exp(-(beta - beta * A)) @ V
    return alpha * (((-1) * (beta - beta * affinity)).exp() @ values)


def object_cache_logits(feature: Tensor, cache: EntropyRankedCache, alpha: float, beta: float, num_classes: int,
                        label_of_id: dict[int, int], temperature: float, negative: bool = False) -> Tensor:
    """Per-video (intuition) cache logits ``(1, num_classes)`` of one detection (the official
    ``compute_cache_logits(is_wide=False)``).

    Per cached global id ``c`` (sorted): affinity ``a_c`` = mean over its items of ``feature @ key``; the
    affinities are min-max normalised (:func:`minmax_normalize`), then ``softmax(a / T)`` if ``temperature != 0``;
    the result is ``alpha * sum_c exp(-beta (1 - a_c)) v_c``. Positive (``negative=False``): ``v_c`` is the one-hot
    of ``c``'s current ID label (zero if ``c`` has none any more). Negative: every ``v_c`` is the multi-hot of the
    current labels of the union over the cached ids of their LAST item's negative ids (the official broadcast).

    Args:
        feature: ``(1, C)`` L2-normalised DETR embedding.
        cache: the per-video cache (classes = global ids).
        num_classes: ``K + 1``.
        label_of_id: global id -> its current ID label (the inverse of the tracker's ``id_label_to_id``).
    """
    device = feature.device
    classes, _, keys, counts = cache.stacked()
    values = torch.zeros((len(classes), num_classes), dtype=torch.float32, device=device)
    if negative:
        labels = sorted({label_of_id[g] for c in classes for g in cache[c][-1].payload if g in label_of_id})
        if labels:
            values[:, torch.tensor(labels, dtype=torch.int64, device=device)] = 1.0
    else:
        rows = [row for row, c in enumerate(classes) if c in label_of_id]
        if rows:
            values[rows, [label_of_id[classes[row]] for row in rows]] = 1.0
    # every item's similarity in one product, then the mean per class (the official: one product and mean per
    # class; equal within float rounding)
    keys, counts = keys.to(device), counts.to(device)
    sums = torch.zeros(len(classes), dtype=keys.dtype, device=device).index_add_(
        0, torch.repeat_interleave(torch.arange(len(classes), device=device), counts), (feature @ keys.t())[0])
    affinity = minmax_normalize((sums / counts)[None])
    if temperature != 0:
        affinity = F.softmax(affinity / temperature, dim=-1)
    return _tda_logits(affinity, values, alpha, beta)


def experience_cache_logits(feature: Tensor, cache: EntropyRankedCache, alpha: float, beta: float,
                            num_classes: int, neg_mask_range: tuple[float, float] | None = None) -> Tensor:
    """Cross-video (experience) cache logits ``(1, num_classes)`` of one detection (the official
    ``compute_cache_logits(is_wide=True)``): ``alpha * sum_items exp(-beta (1 - feature @ key)) v``, items of the
    sorted classes in cache order; positive: ``v`` = one-hot of the item's class (its ID-label slot); negative
    (``neg_mask_range=(lower, upper)``): ``v`` = 1 where the item's stored softmax is strictly inside the range."""
    classes, items, keys, counts = cache.stacked()
    keys = keys.permute(1, 0).to(feature.device)
    if neg_mask_range is not None:
        probs = torch.cat([item.payload for item in items], dim=0).to(feature.device)
        values = ((probs > neg_mask_range[0]) & (probs < neg_mask_range[1])).float()
    else:
        labels = torch.tensor(classes, dtype=torch.int64)
        values = F.one_hot(labels.repeat_interleave(counts), num_classes=num_classes).float().to(feature.device)
    return _tda_logits(feature @ keys, values, alpha, beta)


def fisher_inner(u: Tensor, v: Tensor) -> Tensor:
    """The official elementwise "Fisher inner product": ``clamp(1 - |u - v| / (max(|u|, |v|) + 1e-8), 0, 1)``."""
    return (1 - torch.abs(u - v) / (torch.maximum(torch.abs(u), torch.abs(v)) + 1e-8)).clamp(0, 1)


def fisher_orthogonalize(a: Tensor, b: Tensor) -> Tensor:
    """``b - fisher_inner(a, b) / (fisher_inner(a, a) + 1e-12) * a`` (elementwise; the official's unused ``p``
    argument dropped)."""
    return b - fisher_inner(a, b) / (fisher_inner(a, a) + 1e-12) * a


def fuse_logits(logits: Tensor, object_logits: Tensor, id_logits: Tensor, lambda_id: float,
                use_cache: str = 'object_and_id') -> Tensor:
    """TCEI's fusion of one detection's raw ``logits`` with its object-level (``logits + P - N``) and id-level
    (``logits + W_pos - W_neg``) calibrated logits, all ``(1, K + 1)``.

    ``'object_and_id'``: ``l_obj = object_logits - logits``, ``l_id = id_logits - logits``, ``p = softmax(logits)``;
    ``logits + l_obj + lambda_id * p (1 - p) fisher_orthogonalize(l_obj, l_id)``. ``'object'`` / ``'id'``: that
    calibrated row alone.
    """
    if use_cache == 'object':
        return object_logits
    if use_cache == 'id':
        return id_logits
    if use_cache != 'object_and_id':
        raise ValueError(f'fuse_logits: use_cache must be one of {", ".join(USE_CACHE_MODES)}, got {use_cache!r}')
    l_obj = object_logits - logits
    l_id = id_logits - logits
    p = logits.softmax(dim=-1)
    l_id_perp = fisher_orthogonalize(l_obj, l_id) * (p * (1. - p))
    return logits + l_obj + lambda_id * l_id_perp


def negative_ids(probs: Tensor, labels: Tensor, num_id_vocabulary: int, id_label_to_id: dict[int, int],
                 lower: float, upper: float, length_quirk: bool = True) -> list[int]:
    """The global ids a detection is stored against in the per-video negative cache.

    ``probs (K + 1,)`` its softmax, ``labels (n,)`` the frame's initial labels. ``length_quirk=True`` (published,
    ``prob_map[0][:len(id_labels)]``): the detections ``j < min(n, K + 1)`` with ``lower < probs[j] < upper``, their
    initial labels, newborns dropped, as global ids. ``False``: the tracked labels ``k < K`` with ``lower <
    probs[k] < upper`` that have a global id, as global ids (label order).
    """
    if length_quirk:
        p = probs[:len(labels)]
        idx = torch.where((p > lower) & (p < upper))[0]
        chosen = labels[idx.to(labels.device)]
        chosen = chosen[chosen != num_id_vocabulary]
        return [id_label_to_id[k] for k in chosen.tolist()]
    p = probs[:num_id_vocabulary]
    idx = torch.where((p > lower) & (p < upper))[0].tolist()
    return [id_label_to_id[k] for k in idx if k in id_label_to_id]


# ----------------------------------------------------------------------------------------------- the calibration
@dataclass
class TCEICaches:
    """TCEI's four caches: per video ``pos`` / ``neg`` (global ids), across videos ``w_pos`` / ``w_neg`` (labels)."""

    pos: EntropyRankedCache
    neg: EntropyRankedCache
    w_pos: EntropyRankedCache
    w_neg: EntropyRankedCache

    @classmethod
    def from_params(cls, params: TCEIParams) -> 'TCEICaches':
        return cls(EntropyRankedCache(params.pos_shot_capacity), EntropyRankedCache(params.neg_shot_capacity),
                   EntropyRankedCache(params.w_pos_shot_capacity), EntropyRankedCache(params.w_neg_shot_capacity))


def _normalized_key(x: Tensor) -> Tensor:
    key = x.unsqueeze(0).clone()
    key /= key.norm(dim=-1, keepdim=True)
    return key


def calibrate_id_logits(id_logits: Tensor, labels: Tensor, id_embeds: Tensor, features: Tensor,
                        caches: TCEICaches, id_label_to_id: dict[int, int], params: TCEIParams) -> Tensor:
    """TCEI's per-frame calibration (the loop of the official ``_get_id_pred_labels``); updates ``caches``.

    Args:
        id_logits: ``(n, K + 1)`` MOTIP's ID logits of the frame's active detections.
        labels: ``(n,)`` their initial labels (the assignment of ``softmax(id_logits)``), ``K`` = newborn.
        id_embeds: ``(n, D)`` the ID decoder's id embeddings (experience keys).
        features: ``(n, C)`` the DETR output embeddings (intuition keys).
        id_label_to_id: the tracker's label -> global id map (every tracked label has one).

    Returns:
        ``(n, K + 1)`` calibrated logits (rows of detections first predicted newborn unchanged).
    """
    n, num_classes = id_logits.shape
    newborn = num_classes - 1
    label_of_id = {g: k for k, g in id_label_to_id.items()}
    out = id_logits.clone()
    label_list = labels.tolist()
    for i in range(n):
        logits = id_logits[i].unsqueeze(0).clone()
        loss = softmax_entropy(logits)
        prob_map = logits.softmax(1)
        pred = label_list[i]
        entropy = float(loss)
        h = normalized_entropy(loss, num_classes)
        # experience (all detections, keyed by label slot)
        key = _normalized_key(id_embeds[i])
        if params.w_pos_enabled:
            caches.w_pos.insert(pred, CacheItem(key, entropy))
        if params.w_neg_enabled and params.w_neg_entropy_threshold_lower < h < params.w_neg_entropy_threshold_upper:
            caches.w_neg.insert(pred, CacheItem(key, entropy, prob_map))
        if pred == newborn:
            continue
        final_id = logits.clone()
        if params.w_pos_enabled and caches.w_pos:
            final_id += experience_cache_logits(key, caches.w_pos, params.w_pos_alpha, params.w_pos_beta,
                                                num_classes)
        if params.w_neg_enabled and caches.w_neg:
            final_id -= experience_cache_logits(
                key, caches.w_neg, params.w_neg_alpha, params.w_neg_beta, num_classes,
                (params.w_neg_mask_threshold_lower, params.w_neg_mask_threshold_upper))
        # intuition (tracked detections, keyed by global id)
        gid = id_label_to_id[pred]
        negatives = negative_ids(prob_map[0], labels, newborn, id_label_to_id, params.neg_mask_threshold_lower,
                                 params.neg_mask_threshold_upper, params.prob_map_length_quirk)
        key = _normalized_key(features[i])
        if params.pos_enabled:
            caches.pos.insert(gid, CacheItem(key, entropy))
        if params.neg_enabled and params.neg_entropy_threshold_lower < h < params.neg_entropy_threshold_upper:
            caches.neg.insert(gid, CacheItem(key, entropy, negatives))
        final_obj = logits.clone()
        if params.pos_enabled and caches.pos:
            final_obj += object_cache_logits(key, caches.pos, params.pos_alpha, params.pos_beta, num_classes,
                                             label_of_id, params.pos_temperature)
        if params.neg_enabled and caches.neg:
            final_obj -= object_cache_logits(key, caches.neg, params.neg_alpha, params.neg_beta, num_classes,
                                             label_of_id, params.neg_temperature, negative=True)
        out[i] = fuse_logits(logits, final_obj, final_id, params.lambda_id, params.use_cache).squeeze(0)
    return out


def add_newborns_to_cache(caches: TCEICaches, params: TCEIParams, labels: Tensor, features: Tensor,
                          calibrated_logits: Tensor | None, next_id: int, num_id_vocabulary: int) -> None:
    """The TCEI part of the official ``_assign_newborn_id_labels``: the ``i``-th newborn (label ``K``, detection
    order) of the kept detections gets global id ``next_id + i``; its DETR key goes into the per-video positive
    cache, ranked by the entropy of ``calibrated_logits[idx]`` (``idx`` its position among the kept detections, the
    published indexing) or, without logits (a video's first frame), of a uniform ``(1, K)`` row."""
    if not params.pos_enabled:
        return
    idxs = torch.where(labels == num_id_vocabulary)[0].tolist()
    for i, idx in enumerate(idxs):
        if calibrated_logits is not None:
            logit = calibrated_logits[idx].unsqueeze(0)
        else:
            logit = torch.full((1, num_id_vocabulary), 1.0 / num_id_vocabulary, dtype=torch.float32,
                               device=features.device)
        entropy = float(softmax_entropy(logit))
        caches.pos.insert(next_id + i, CacheItem(_normalized_key(features[idx]), entropy))


# ----------------------------------------------------------------------------------------------------- the tracker
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


def resolve_tcei_params(preset: str | None = None, **overrides: Any) -> TCEIParams:
    """TCEI's hyperparameters: the official defaults, then the ``preset``'s values, then ``overrides``."""
    values = asdict(TCEIParams())
    if preset is not None:
        if preset not in TCEI_PRESETS:
            raise ValueError(f'TCEITracker: unknown preset {preset!r}; use one of {", ".join(TCEI_PRESETS)} or None')
        values.update(TCEI_PRESETS[preset])
    unknown = sorted(set(overrides) - set(values))
    if unknown:
        raise TypeError(f'TCEITracker: unknown TCEI argument(s) {", ".join(unknown)}')
    values.update(overrides)
    return TCEIParams(**values)
