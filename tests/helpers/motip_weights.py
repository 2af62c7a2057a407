"""Deterministic weights for MOTIP's ID modules that both sides of a golden test apply (the official modules in
scratch, ours here: the same state-dict names), their digest, and a recorder of a MOTIP tracker's raw ID logits."""
from __future__ import annotations

import hashlib

from vastmat.benchmarks.simulated_inputs import deterministic_motip_weights as deterministic_weights  # noqa: F401


def weights_digest(state_dict: dict) -> str:
    """sha256 of a state dict's float32 tensors in sorted name order (what a golden run's weights were)."""
    h = hashlib.sha256()
    for name in sorted(state_dict):
        h.update(name.encode())
        h.update(state_dict[name].detach().float().contiguous().numpy().tobytes())
    return h.hexdigest()


def record_id_logits(tracker) -> list:
    """Wrap ``tracker.id_logits`` so that each call's raw ``(n, K + 1)`` logits are appended to the returned list."""
    recorded = []
    id_logits = tracker.id_logits

    def recording(features):
        out = id_logits(features)
        recorded.append(out[0])
        return out
    tracker.id_logits = recording
    return recorded
