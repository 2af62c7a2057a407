"""A model's per-frame network outputs kept while one checkpoint tracks the same frames again and again: the zoo's
threshold calibration tests a model at every point of a grid (MOTIP and TCEI: 36 points) on the same dev videos,
and where the network's output of a frame does not depend on the tracker's state (MOTIP's DETR: every query of the
frame, before any threshold), only the tracker needs to run again. Half of such a test is the DETR.

Only inside :func:`keep_frame_outputs` are outputs kept, so that training and every other test compute them as
always; the caller vouches that the weights stay the same inside (one checkpoint).
"""
from __future__ import annotations

import contextlib
import copy
from typing import Any, Callable, Hashable, Iterator

_kept: dict[Hashable, Any] | None = None  # the outputs kept by the innermost keep_frame_outputs(); None: none


@contextlib.contextmanager
def keep_frame_outputs() -> Iterator[None]:
    """Keep the outputs that :func:`frame_output` computes until the block ends."""
    global _kept
    outer, _kept = _kept, {}
    try:
        yield
    finally:
        _kept = outer


def frame_output(key: Hashable, compute: Callable[[], Any]) -> Any:
    """``compute()``, or inside :func:`keep_frame_outputs` its kept result for ``key`` (a copy: the caller may change
    it)."""
    if _kept is None:
        return compute()
    if key not in _kept:
        _kept[key] = compute()
    return copy.deepcopy(_kept[key])
