"""The model zoo's runs on one protocol of a VastMAT root: every zoo tracker (:func:`zoo_trackers`) trained where it
learns and tracking the test videos.

* trackers on cached detections (ByteTrack, TrackTrack, DiffMOT, plugins): the detector's boxes, plus the learned
  inputs a tracker declares in ``zoo_demo_parts`` (``features``: a ReID model trained on identity crops of the train
  videos, its features appended to the boxes; ``motion``: a D2MP trained on the train trajectories);
* joint and end-to-end models (FairMOT, QDTrack, TransTrack, MOTIP): their ``zoo_demo_config`` trained on the train
  videos and tested whole; TCEI tests MOTIP's checkpoint (``zoo_checkpoint_of``).

Each learned tracker is scored at the first and the last of its kept checkpoints (HOTA against training minutes);
the last checkpoint runs once per matcher where the tracker takes one.

This module trains and runs each member; what the zoo trains and in which order is :mod:`.zoo_training_order`, the
test thresholds :mod:`.zoo_calibration`, the tracking and scoring steps :mod:`.zoo_scoring`.
"""
from __future__ import annotations

import os.path as osp
import time
from dataclasses import replace
from typing import Any

from vastmat.models.trackers.zoo import ZooTracker, config_path

from .zoo_calibration import calibrate_thresholds
from .zoo_context import ZooContext
from .zoo_scoring import curve_point, model_run_dir, part_inputs, rows_read_roots, scored_checkpoints, track_on_cached
from .zoo_testing import test_tracking_model
from .zoo_training import Training, train_once, zoo_config
from .zoo_training_order import NUM_CHECKPOINTS, START_KEYS, source_order, start_sources, training_config

DEMO_DETECTOR = config_path('yolox/yolox_tiny_1xb8-1200it_vastmat-demo.py')  # the demo data's detector
PART_LABELS = dict(features='ReID model (features)', motion='D2MP (motion)')


def select_members(names: list[str] | None) -> list[ZooTracker]:
    """The zoo trackers named (case-insensitive; all when None), in the zoo's order."""
    from vastmat.utils.errors import UserInputError
    from vastmat.models.trackers.zoo import zoo_trackers
    members = zoo_trackers()
    if not names:
        return members
    known = {m.name.lower(): m for m in members}
    unknown = [n for n in names if n.lower() not in known]
    if unknown:
        raise UserInputError(f'--trackers {" ".join(unknown)}: not a zoo tracker (known: '
                             f'{", ".join(m.name for m in members)})')
    wanted = {n.lower() for n in names}
    return [m for m in members if m.name.lower() in wanted]


def train(ctx: ZooContext, config: str, label: str) -> Training:
    """Train ``config`` on the protocol's train videos once per run (and reuse an earlier run's training). A config
    that names another in ``zoo_pretrained_backbone`` or ``zoo_load_from`` (:data:`START_KEYS`) starts from that
    config's training, trained first."""
    if config not in ctx.trainings:
        source_order(config)  # refuses a loop before anything trains
        _train_with_sources(ctx, config, label)
    return ctx.trainings[config]


def _train_with_sources(ctx: ZooContext, config: str, label: str) -> Training:
    """:func:`train` once the chain of ``config``'s sources is known to hold no loop."""
    if config not in ctx.trainings:
        cfg = training_config(ctx, config, label)
        earlier_seconds = 0.0
        for key, source in start_sources(cfg):
            role, use = START_KEYS[key]
            source_training = _train_with_sources(ctx, source, f'{osp.basename(source)} ({role} of {label})')
            use(cfg, source_training.checkpoint)
            if key == 'zoo_load_from':  # an earlier stage of this model (a backbone's training is another model)
                earlier_seconds += source_training.total_seconds
        start = time.perf_counter()
        training = replace(train_once(cfg, ctx.train_iters, NUM_CHECKPOINTS), earlier_seconds=earlier_seconds)
        if training.reused:
            ctx.log(f'  {label}: reusing the training of {training.work_dir}')
        else:
            ctx.log(f'  {label}: trained {training.max_iters} iterations in {time.perf_counter() - start:.0f} s')
        ctx.trainings[config] = training
    return ctx.trainings[config]


# ------------------------------------------------------------------------------------------------- cached detections
def run_cached_member(ctx: ZooContext, member: ZooTracker, matchers: list[str], det_root: str,
                      extra_det_roots: dict) -> dict:
    """A tracker on the detector's cached detections: its learned parts trained, every checkpoint of them scored
    with the original matcher (the curve), the last one with every matcher. Returns ``dict(runs={matcher: run},
    curve=[...], training=...)``."""
    out: dict[str, Any] = dict(runs={}, curve=[])
    if not member.demo_parts:
        for matcher in matchers:
            out['runs'][matcher] = track_on_cached(ctx, member, matcher, det_root, extra_det_roots,
                                                   osp.join(ctx.work_dir, member.name, matcher))
        return out
    if len(member.demo_parts) > 1:
        raise ValueError(f'{member.name}: the zoo trains one learned part per tracker, got {member.demo_parts}')
    (kind, config), = member.demo_parts.items()
    training = train(ctx, config, f'{member.name} {kind}')
    out['training'] = dict(config=config, checkpoint=training.checkpoint, seconds=training.total_seconds,
                           iterations=training.max_iters, reused=training.reused, kind=PART_LABELS.get(kind, kind))
    if kind == 'features':  # the ReID model's features of the rows the tracker reads
        extra_det_roots = rows_read_roots(ctx, member.config(), det_root, extra_det_roots)
    for iteration, checkpoint in scored_checkpoints(training):
        last = iteration == training.checkpoints[-1][0]
        roots = part_inputs(ctx, kind, config, training, iteration, checkpoint, det_root, extra_det_roots)
        for matcher in (matchers if last else ['original']):
            run_dir = osp.join(ctx.work_dir, member.name, matcher if last else f'original_iter_{iteration}')
            run = track_on_cached(ctx, member, matcher, roots[0], roots[1], run_dir, roots[2])
            if matcher == 'original':
                out['curve'].append(curve_point(training, iteration, run))
            if last:
                out['runs'][matcher] = run
    return out


# ------------------------------------------------------------------------------------------ joint / end-to-end models
def run_model_member(ctx: ZooContext, member: ZooTracker, matchers: list[str], members: dict[str, ZooTracker]) -> dict:
    """A whole tracking model: trained (or the checkpoint of ``checkpoint_of``), its thresholds calibrated
    (:func:`calibrate_thresholds`), tested at every checkpoint (the curve) and, at the last one, with every matcher
    if the tracker takes one. Each run records its ``results`` folder."""
    from vastmat.apis import swap_matcher
    owner = members.get(member.checkpoint_of) if member.checkpoint_of else member
    if member.checkpoint_of and owner is None:
        raise ValueError(f'{member.name}: zoo_checkpoint_of {member.checkpoint_of!r} is not a zoo tracker')
    training = train(ctx, owner.demo_config, owner.name)
    out: dict[str, Any] = dict(runs={}, curve=[], training=dict(
        config=owner.demo_config, checkpoint=training.checkpoint, seconds=training.total_seconds,
        iterations=training.max_iters, reused=training.reused,
        kind='checkpoint of ' + owner.name if member.checkpoint_of else 'model'))
    cfg = zoo_config(member.demo_config, ctx.data_root, ctx.protocol, ctx.work_dir, f'{member.name}')
    calibration = calibrate_thresholds(cfg, training, member.name, ctx.data_root, ctx.protocol, ctx.preset,
                                       ctx.calibration_split, ctx.threshold_scales, ctx.own_threshold_grids, ctx.log)
    if calibration is not None:
        cfg.merge_from_dict(calibration['thresholds'])
        out['thresholds'] = calibration
    label = calibration['label'] if calibration is not None else None
    for iteration, checkpoint in scored_checkpoints(training):
        last = iteration == training.checkpoints[-1][0]
        for matcher in (matchers if last and member.takes_matcher else ['original']):
            run_dir = model_run_dir(training, member.name, ctx.preset, iteration, matcher, label)
            start = time.perf_counter()
            metrics = test_tracking_model(swap_matcher(cfg, matcher), checkpoint, ctx.videos, run_dir, ctx.preset)
            run = dict(metrics=metrics, seconds=time.perf_counter() - start, results=osp.join(run_dir, 'results'))
            if matcher == 'original':
                out['curve'].append(curve_point(training, iteration, run))
            if last:
                out['runs'][matcher] = run
    return out
