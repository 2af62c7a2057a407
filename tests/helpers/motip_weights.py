"""Deterministic weights for MOTIP's ID modules that both sides of a golden test apply (the official modules in
scratch, ours here: the same state-dict names), and a recorder of a MOTIP tracker's raw ID logits."""
from __future__ import annotations

from vastmat.experiments.simulated_inputs import deterministic_motip_weights as deterministic_weights  # noqa: F401


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
