"""Test-only components that show what the tracking core hands to a tracker: a tracker that records its frame
inputs, a learned motion model, an appearance model and a learned post-processor (each with weights, so that the
checkpoint test sees them)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from vastmat.models.trackers import BaseTracker
from vastmat.registry import MODELS, TASK_UTILS
from vastmat.structures.tracking import TrackingFrame, TrackOutput


@TASK_UTILS.register_module(force=True)
class ToyMotion(nn.Module):
    """A learned motion model stand-in: one weight."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(4))


@MODELS.register_module(force=True)
class ToyReID(nn.Module):
    """Crops (k, C, H, W) -> (k, 3): the mean of each channel, through a learned 3x3 map (identity at start)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(3, 3, bias=False)
        nn.init.eye_(self.proj.weight)

    def forward(self, crops: torch.Tensor) -> torch.Tensor:
        return self.proj(crops.float().mean(dim=(2, 3)))


@TASK_UTILS.register_module(force=True)
class ToyLinker(nn.Module):
    """A learned post-processor stand-in: shifts every track id by ``offset`` (and has a weight)."""

    def __init__(self, offset: int = 1000) -> None:
        super().__init__()
        self.offset = offset
        self.scale = nn.Parameter(torch.ones(1))

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        rows = rows.copy()
        rows[:, 1] += self.offset
        return rows


@MODELS.register_module(force=True)
class ToyInputTracker(BaseTracker):
    """Reports every detection as a track of its own (id = row + 1, its features as the track's) and records what
    each frame held in ``ToyInputTracker.records``."""

    records: list[dict] = []

    def __init__(self, required: tuple = ('features', 'image_size', 'extra_dets.nms95'),
                 motion: dict | None = None) -> None:
        super().__init__()
        self.required_inputs = tuple(required)
        self.motion = TASK_UTILS.build(motion) if motion is not None else None

    def reset(self) -> None:
        pass

    def update(self, frame: TrackingFrame) -> TrackOutput:
        ToyInputTracker.records.append(dict(
            video=frame.video_name, frame_id=frame.frame_id, source_frame=frame.source_frame,
            frame_rate=frame.frame_rate, image_size=frame.image_size, bboxes=frame.bboxes.copy(),
            scores=frame.scores.copy(), features=None if frame.features is None else frame.features.copy(),
            image=None if frame.image is None else tuple(frame.image.shape),
            extra={name: len(dets) for name, dets in frame.extra_dets.items()}))
        return TrackOutput(np.arange(1, len(frame.bboxes) + 1), frame.bboxes, frame.scores, frame.features)
