"""TCEI's cache state: :class:`EntropyRankedCache` (the official cache dict, per class at most ``capacity`` items
ranked by entropy) of :class:`CacheItem`, and :class:`TCEICaches`, the four caches of a tracker."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import torch
from torch import Tensor

from .tcei_params import TCEIParams


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
