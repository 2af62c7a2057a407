"""What a matcher may read about the current frame besides the boxes."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class FrameContext:
    """Frame context of one association call: ``matcher(tracks, dets, **context.as_kwargs())``.

    Attributes:
        num_high_conf: detections of the frame scoring above the tracker's high threshold (adaptive CDA's N).
    """

    num_high_conf: int | None = None

    @classmethod
    def from_scores(cls, scores: Any, high_thr: float) -> 'FrameContext':
        """Count the detections with score > ``high_thr`` (ByteTrack's ``track_thresh``, 0.6 by default)."""
        return cls(num_high_conf=int((np.asarray(scores) > high_thr).sum()))

    def as_kwargs(self) -> dict:
        return asdict(self)
