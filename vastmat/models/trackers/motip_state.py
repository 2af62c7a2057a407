"""The state containers of MOTIP's runtime tracker (:mod:`.motip_tracker`): :class:`WindowKeysValues`, the ID
decoder's keys and values of the trajectory window, and :class:`LabelQueue`, the ID labels in least-recently-used
order."""
from __future__ import annotations

from collections import OrderedDict
from typing import Iterable

import torch
from torch import Tensor


class WindowKeysValues:
    """The decoder's keys and values of the window's observed tokens (the unmasked ones), each computed once, when
    its frame entered the window: ``buffer (num_layers, 2, num_heads, capacity, head_dim)`` with per slot the
    token's frame number and ID label. Slot 0 is nn.MultiheadAttention's zero-attention token (zero key and value,
    never removed). A frame's tokens are written after the last used slot (no copy of the others); removed tokens
    are padding until the buffer is full, then the live ones move to the front (their order kept: frame, then
    column), and the capacity doubles when they fill half of it."""

    def __init__(self, num_layers: int, num_heads: int, head_dim: int, device: torch.device,
                 capacity: int = 256) -> None:
        self.buffer = torch.zeros((num_layers, 2, num_heads, capacity, head_dim), device=device)
        self.frames = torch.zeros(capacity, dtype=torch.int64, device=device)
        self.labels = torch.full((capacity, ), -1, dtype=torch.int64, device=device)
        self.alive = torch.zeros(capacity, dtype=torch.bool, device=device)
        self.alive[0] = True  # the zero-attention slot
        self.size = 1

    def append(self, keys_values: Tensor, labels: Tensor, frame: int) -> None:
        """Add ``m`` tokens of ``frame`` (``keys_values (num_layers, 2, num_heads, m, head_dim)``)."""
        m = keys_values.shape[3]
        if self.size + m > self.buffer.shape[3]:
            self._compact(m)
        end = self.size + m
        self.buffer[:, :, :, self.size:end] = keys_values
        self.frames[self.size:end] = frame
        self.labels[self.size:end] = labels
        self.alive[self.size:end] = True
        self.size = end

    def _compact(self, room: int) -> None:
        keep = torch.nonzero(self.alive[:self.size]).flatten()
        capacity = self.buffer.shape[3]
        while 2 * (len(keep) + room) > capacity:
            capacity *= 2
        buffer = self.buffer.new_zeros((*self.buffer.shape[:3], capacity, self.buffer.shape[4]))
        buffer[:, :, :, :len(keep)] = self.buffer[:, :, :, keep]
        frames, labels, alive = (t.new_zeros(capacity) for t in (self.frames, self.labels, self.alive))
        frames[:len(keep)], labels[:len(keep)], alive[:len(keep)] = self.frames[keep], self.labels[keep], True
        self.buffer, self.frames, self.labels, self.alive, self.size = buffer, frames, labels, alive, len(keep)

    def remove_before(self, frame: int) -> None:
        """Remove the tokens of frames before ``frame`` (the window cut)."""
        self.alive[1:self.size] &= self.frames[1:self.size] >= frame

    def remove_labels(self, labels: list[int]) -> None:
        """Remove the tokens with these ID labels (evicted trajectories)."""
        if labels:
            gone = torch.isin(self.labels[1:self.size], torch.tensor(labels, device=self.labels.device))
            self.alive[1:self.size] &= ~gone

    def to(self, device: torch.device) -> None:
        self.buffer, self.frames, self.labels, self.alive = (
            t.to(device) for t in (self.buffer, self.frames, self.labels, self.alive))

    def view(self, frame: int) -> tuple[Tensor, Tensor, Tensor]:
        """``(keys_values, padding, rel_times)`` for decoding detections of ``frame``
        (``MOTIPIDDecoder.decode_against_keys_values``)."""
        alive = self.alive[:self.size]
        rel_times = torch.where(alive, frame - self.frames[:self.size], 1)  # removed tokens: any valid index
        rel_times[0] = 0  # the zero-attention slot
        return self.buffer[:, :, :, :self.size], ~alive, rel_times


class LabelQueue:
    """The official ``OrderedSet``: labels in least-recently-used-first order; :meth:`add` moves a label to the end."""

    def __init__(self, labels: Iterable[int] = ()) -> None:
        self._order: OrderedDict[int, None] = OrderedDict()
        for label in labels:
            self.add(label)

    def add(self, label: int) -> None:
        self._order.pop(label, None)
        self._order[label] = None

    def first(self, n: int) -> list[int]:
        """The ``n`` least recently used labels."""
        out = []
        for label in self._order:
            if len(out) == n:
                break
            out.append(label)
        return out

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self):
        return iter(self._order)

    def __repr__(self) -> str:
        return f'LabelQueue({list(self._order)})'
