"""The interface every online tracker implements, so that one tracking model can drive any of them.

A tracker is built from its config (``MODELS.build(dict(type='BYTETracker', ...))``), told that a new video starts
with :meth:`BaseTracker.reset`, then given one :class:`~vastmat.structures.TrackingFrame` at a time::

    tracker.reset()
    for frame in frames:                 # TrackingFrame(detections, frame_id=1, 2, ..., video_name, frame_rate, ...)
        out = tracker.update(frame)      # TrackOutput(ids, bboxes, scores[, features])

Boxes are ``x1, y1, x2, y2`` in original-frame pixels; ``frame.frame_id`` numbers the frames of the tracked
sequence from 1, consecutively (the one frame number of every tracker). The tracker returns the tracks it reports
for this frame (the boxes written to the results file).

A tracker is an ``nn.Module`` (mmengine's ``BaseModule``): learned parts it builds from its config (a motion model
from ``TASK_UTILS``, as mmdet's trackers build theirs) are submodules of the MOT model that holds it, so one
checkpoint carries them. Inputs beyond boxes and scores are declared in ``required_inputs``; the MOT model checks
them before the first frame and a missing one fails with a message naming it and how to produce it.
"""
from __future__ import annotations

from mmengine.model import BaseModule

from vastmat.structures.tracking import TrackingFrame, TrackOutput


class BaseTracker(BaseModule):
    """Online tracker: ``reset()`` at each video start, ``update(frame)`` per frame.

    Attributes:
        required_inputs: frame inputs the tracker reads besides boxes and scores: ``'features'``, ``'image'``,
            ``'image_size'``, ``'frame_rate'``, ``'extra_dets.NAME'`` (see :meth:`TrackingFrame.require`).
        zoo_name: the tracker's name in the model zoo (``tools/zoo_benchmark.py``, :mod:`.zoo`); None keeps a
            tracker out of it (test doubles, building blocks).
        zoo_demo_config, zoo_demo_parts, zoo_checkpoint_of: what the zoo trains for the tracker on the demo data
            (its whole model's config; the configs of the learned inputs it reads on cached detections; the zoo
            member whose checkpoint it tests), see :mod:`.zoo`.
        matcher_overrides: per ``configs/matchers/`` name, the keys this tracker sets when that matcher replaces its
            own (:func:`vastmat.apis.swap_matcher`): defaults chosen for the tracker.
        experiment_name: the tracker's name in the studies and benchmarks (``--tracker(s)``); None keeps it out.
        study_config: its config on cached detections under ``configs/`` (None: not in the matcher studies,
            :mod:`vastmat.experiments.matcher_study`); study_own_matcher: the ``configs/matchers/`` name of that
            config's matcher; study_match_thresh: ``(key, {'paper': v, 'official': v})``, the first-stage match
            threshold of each setting (None: the config's); study_options: ``--cfg-options`` of every study run;
            study_cost: relative run time (the slowest start first).
        motion_checkpoint_key: the ``model.tracker`` key of a trained motion model's weights, which the studies and
            benchmarks require (``--d2mp-checkpoint``); None: the tracker needs none.
        speed_options: the tracker keys of the association benchmark (``tools/benchmark/association_speed.py``)
            beside the defaults (None: not in it); speed_features: it gets random appearance features there.
        search_spaces: named spaces of ``tools/tune.py`` (``--space``, ``'default'`` first) over the tracker's keys,
            beside its defaults: ``{key: ('float', low, high[, 'log']) | ('int', low, high) | ('categorical',
            [choices])}``, and ``matcher`` an axis of ``configs/matchers/`` names, each with its own keys' space
            (:data:`vastmat.models.association.search_spaces.MATCHER_AXIS`); see
            :mod:`vastmat.experiments.tuning.space`.
    """

    required_inputs: tuple[str, ...] = ()
    zoo_name: str | None = None
    zoo_demo_config: str | None = None
    zoo_demo_parts: dict[str, str] | None = None
    zoo_checkpoint_of: str | None = None
    matcher_overrides: dict[str, dict] = {}
    experiment_name: str | None = None
    study_config: str | None = None
    study_own_matcher: str | None = None
    study_match_thresh: tuple[str, dict[str, float]] | None = None
    study_options: tuple[str, ...] = ()
    study_cost: int = 1
    motion_checkpoint_key: str | None = None
    speed_options: dict | None = None
    speed_features: bool = False
    search_spaces: dict[str, dict] = {}

    def reset(self) -> None:
        """Forget every track (a new video starts); ids restart at 1."""
        raise NotImplementedError

    def update(self, frame: TrackingFrame) -> TrackOutput:
        """Associate the frame's detections and return the tracks reported in this frame."""
        raise NotImplementedError
