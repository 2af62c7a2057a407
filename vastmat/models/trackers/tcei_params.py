"""TCEI's hyperparameters (:class:`TCEIParams`, the official ``RuntimeTracker`` argument names and defaults), the
official configs' presets (:data:`TCEI_PRESETS`, :data:`TCEI_PRESET_RUNTIME`) and :func:`resolve_tcei_params`; the
tracker is :mod:`.tcei_tracker`."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

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
    # the published prob_map[0][:len(id_labels)] reading (see the tcei_tracker module docstring)
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
