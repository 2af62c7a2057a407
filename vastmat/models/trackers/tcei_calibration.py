"""TCEI's calibration math: entropies, the per-video (object) and cross-video (experience) cache logits, the Fisher
orthogonalised fusion, the negative ids, and the per-frame :func:`calibrate_id_logits` and
:func:`add_newborns_to_cache` that update :class:`~.tcei_caches.TCEICaches` (module docstring of :mod:`.tcei_tracker`:
the steps and the faithful quirks)."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .tcei_caches import CacheItem, EntropyRankedCache, TCEICaches
from .tcei_params import USE_CACHE_MODES, TCEIParams


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
