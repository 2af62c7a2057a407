"""The model zoo's runs on one protocol of a VastMAT root: every zoo tracker (:func:`zoo_trackers`) trained where it
learns and tracking the test videos.

* trackers on cached detections (ByteTrack, TrackTrack, DiffMOT, plugins): the detector's boxes, plus the learned
  inputs a tracker declares in ``zoo_demo_parts`` (``features``: a ReID model trained on identity crops of the train
  videos, its features appended to the boxes; ``motion``: a D2MP trained on the train trajectories);
* joint and end-to-end models (FairMOT, QDTrack, TransTrack, MOTIP): their ``zoo_demo_config`` trained on the train
  videos and tested whole; TCEI tests MOTIP's checkpoint (``zoo_checkpoint_of``).

Each learned tracker is scored at the first and the last of its kept checkpoints (HOTA against training minutes);
the last checkpoint runs once per matcher where the tracker takes one.
"""
from __future__ import annotations

import copy
import os
import os.path as osp
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from mmengine.config import Config

from vastmat.models.trackers.zoo import ZooTracker, config_path
from vastmat.utils.io import write_json_atomic

from .zoo_training import Training, detect, expected_seconds, find_training, scaled_thresholds, set_schedule, \
    test_tracking_model, train_once, zoo_config

TRACKING_BASE = config_path('_base_/tracking_cached-dets.py')
DONE = 'dump_done.json'  # written last in a feature dump's folder
DEMO_DETECTOR = config_path('yolox/yolox_tiny_1xb8-1200it_vastmat-demo.py')  # the demo data's detector
NUM_CHECKPOINTS = 3  # kept checkpoints of every learned part (tools/benchmark/convergence.py scores each)
SCORED_CHECKPOINTS = 2  # of them the zoo scores the first and the last: HOTA against training minutes
PART_LABELS = dict(features='ReID model (features)', motion='D2MP (motion)')
# The zoo's one threshold rule for its tiny models: each declares its official score thresholds
# (``zoo_official_thresholds``) and is tested at the official ones times the scale of this grid that tracks the
# protocol's dev videos (train videos held for tuning) best, at its last checkpoint; never chosen on the test videos.
# Minutes of CPU training leave each model's scores less confident by its own amount (measured on the demo's dev
# videos: the best scale is 0.5 for FairMOT, 0.6 QDTrack, 0.9 MOTIP and TCEI, 1.0 TransTrack).
THRESHOLD_SCALES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass
class ZooContext:
    """What every run of one protocol shares."""

    data_root: str
    protocol: str
    videos: list[str]
    work_dir: str  # W/<protocol>
    preset: str = 'vastmat'
    train_iters: int | None = None  # every training's length (None: each config's)
    log: Callable[[str], None] = print
    trainings: dict[str, Training] = field(default_factory=dict)  # by config path: each part trained once
    recipe: Callable[[Config], Config] | None = None  # changes every training config (the overfit benchmark's)
    calibration_split: str | None = 'dev'  # where the thresholds are calibrated (None: the configs' own)
    threshold_scales: tuple[float, ...] = THRESHOLD_SCALES
    adaptive_threads: bool = False  # trainings share the cores with others (zoo_config's AdaptiveThreadsHook)
    seed: int | None = None  # every training's randomness seed (None: each config's)


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


def training_config(ctx: ZooContext, config: str, label: str) -> Config:
    cfg = zoo_config(config, ctx.data_root, ctx.protocol, osp.join(ctx.work_dir, 'training',
                                                                  osp.splitext(osp.basename(config))[0]), label,
                     adaptive_threads=ctx.adaptive_threads, seed=ctx.seed)
    return ctx.recipe(cfg) if ctx.recipe is not None else cfg


def use_pretrained_backbone(cfg: Config, checkpoint: str) -> None:
    """Start ``model.detector.backbone`` from the ``backbone.*`` weights of ``checkpoint``."""
    cfg.model.detector.backbone.init_cfg = dict(type='Pretrained', checkpoint=checkpoint, prefix='backbone.')


def use_whole_checkpoint(cfg: Config, checkpoint: str) -> None:
    """Start the whole model from ``checkpoint`` (``load_from``: the weights whose names match)."""
    cfg.load_from = checkpoint


# The keys by which a zoo config starts from another zoo training (a config under configs/, trained first on the same
# videos): the role it plays and how its last checkpoint is used.
START_KEYS = {
    'zoo_pretrained_backbone': ('backbone', use_pretrained_backbone),  # its backbone.* weights (ImageNet's role)
    'zoo_load_from': ('start', use_whole_checkpoint),  # the whole model (an earlier training stage)
}


def start_sources(cfg: Config) -> list[tuple[str, str]]:
    """``[(key of START_KEYS, source config path), ...]`` that ``cfg`` starts from, in START_KEYS' order."""
    return [(key, config_path(cfg[key])) for key in START_KEYS if cfg.get(key)]


def source_order(config: str, _chain: tuple[str, ...] = ()) -> list[str]:
    """Every training ``config`` starts from, directly or through others (:data:`START_KEYS`), each once and before
    the ones that start from it.

    Raises:
        UserInputError: the configs start from each other in a loop.
    """
    from vastmat.utils.errors import UserInputError
    if config in _chain:
        loop = ' -> '.join(osp.basename(c) for c in (*_chain[_chain.index(config):], config))
        raise UserInputError(f'{config}: the zoo configs start from each other in a loop ({loop}; '
                             f'zoo_pretrained_backbone / zoo_load_from)')
    order = []
    for _, source in start_sources(Config.fromfile(config)):
        for found in [*source_order(source, (*_chain, config)), source]:
            if found not in order:
                order.append(found)
    return order


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


def member_trainings(member: ZooTracker) -> list[str]:
    """The configs the zoo trains for ``member`` itself (its learned parts, its whole model; none for a tracker that
    tests another's checkpoint)."""
    configs = list(member.demo_parts.values())
    if member.demo_config and not member.checkpoint_of:
        configs.append(member.demo_config)
    return configs


def task_trainings(member: ZooTracker, by_name: dict[str, ZooTracker], selected: set[str]) -> list[str]:
    """Every config that ``member``'s task trains (its trainings and what they start from, sources first); none for
    a tracker that tests the checkpoint of a selected one (its task waits for that one's)."""
    owner = by_name.get(member.checkpoint_of) if member.checkpoint_of else None
    if owner is not None and owner.name in selected:
        return []
    order = []
    for config in member_trainings(member) + (member_trainings(owner) if owner else []):
        order += [c for c in [*source_order(config), config] if c not in order]
    return order


def shared_sources(members: list[ZooTracker], by_name: dict[str, ZooTracker]) -> list[str]:
    """The configs that more than one member's task trains (:func:`task_trainings`: the demo YOLOX whose backbone
    starts QDTrack, TransTrack and MOTIP), sources first: trained before the tasks, so that no training runs twice
    at once. What only one task needs (MOTIP's DETR pre-training) stays in that task."""
    selected = {m.name for m in members}
    chains = [task_trainings(m, by_name, selected) for m in members]
    shared = []
    for chain in chains:
        shared += [c for c in chain if c not in shared and sum(c in other for other in chains) > 1]
    return shared


def training_plan(ctx: ZooContext, members: list[ZooTracker]) -> list[tuple[str, str, float | None]]:
    """``(label, config, expected seconds or None when already trained)`` of every training the members need, a
    training's sources (:data:`START_KEYS`) before it."""
    plan, planned = [], {}  # planned: {config: its finished training or None}, each config read once

    def add(config: str, name: str, role: str | None = None) -> Training | None:
        """Plan ``config`` (of tracker ``name``, as the ``role`` of another of its trainings) after its sources;
        its finished training, or None when it is still to train."""
        if config in planned:
            return planned[config]
        label = f'{name}: {osp.basename(config)}' if role is None else f'{role} of {name}: {osp.basename(config)}'
        cfg = training_config(ctx, config, label)
        set_schedule(cfg, ctx.train_iters, NUM_CHECKPOINTS)
        sources_done = True
        for key, source in start_sources(cfg):
            source_role, use = START_KEYS[key]
            found = add(source, name, source_role)
            if found is None:
                sources_done = False  # trained from that source's new checkpoint: not trained before either
            else:
                use(cfg, found.checkpoint)
        found = find_training(cfg) if sources_done else None
        planned[config] = found
        plan.append((label, config, None if found is not None else expected_seconds(cfg, ctx.train_iters)))
        return found

    for member in members:
        for config in member_trainings(member):
            source_order(config)  # no loop
            add(config, member.name)
    return plan


# ------------------------------------------------------------------------------------------------- cached detections
def detector_boxes(ctx: ZooContext, config: str, checkpoint: str, work_dir: str) -> tuple[dict, str, dict]:
    """Test the detector on the test videos and dump its boxes to ``ctx.work_dir/dets`` and, with NMS 0.95, to
    ``dets_nms95`` (TrackTrack's ``nms95`` set); returns its metrics, the det root and the extra roots."""
    det_root, extra = osp.join(ctx.work_dir, 'dets'), dict(nms95=osp.join(ctx.work_dir, 'dets_nms95'))
    metrics = detect(config, checkpoint, ctx.data_root, ctx.protocol, work_dir, det_root)
    detect(config, checkpoint, ctx.data_root, ctx.protocol, work_dir, extra['nms95'], nms_iou=0.95)
    return metrics, det_root, extra


def track_on_cached(ctx: ZooContext, member: ZooTracker, matcher: str, det_root: str, extra_det_roots: dict | None,
                    run_dir: str, tracker_overrides: dict | None = None) -> dict:
    """One tracker with one matcher on cached detections: ``dict(metrics, seconds)`` or ``dict(skipped=reason)``."""
    from vastmat.apis import init_model, swap_matcher, track_and_score
    from vastmat.structures.tracking import MissingTrackerInput
    cfg = Config.fromfile(TRACKING_BASE)
    cfg.model.tracker = {**member.config(), **(tracker_overrides or {})}
    cfg = swap_matcher(cfg, matcher)
    try:
        metrics, seconds = track_and_score(init_model(cfg), ctx.data_root, det_root, ctx.videos, run_dir,
                                           ctx.preset, extra_det_roots=extra_det_roots)
    except MissingTrackerInput as exc:  # e.g. appearance features the cached detections do not carry
        return dict(skipped=str(exc))
    return dict(metrics=metrics, seconds=seconds, results=osp.join(run_dir, 'results'))


def folder_digest(folder: str) -> str:
    """A short hash of the paths and contents of the files under ``folder`` (cached detections: a few hundred kB)."""
    import hashlib
    digest = hashlib.sha1()
    for directory, folders, names in sorted(os.walk(folder)):
        folders.sort()
        for name in sorted(names):
            path = osp.join(directory, name)
            digest.update(osp.relpath(path, folder).encode())
            with open(path, 'rb') as f:
                digest.update(f.read())
    return digest.hexdigest()[:12]


def part_inputs(ctx: ZooContext, kind: str, config: str, training: Training, iteration: int, checkpoint: str,
                det_root: str, extra_det_roots: dict) -> tuple[str, dict, dict]:
    """The tracker's inputs with a learned part at one checkpoint: ``(det_root, extra_det_roots, tracker
    overrides)``. ``features``: every detection set gets the ReID model's features (dumped under the training's
    work dir); ``motion``: the tracker's ``motion`` is the D2MP of ``config`` with that checkpoint."""
    if kind == 'motion':
        model = Config.fromfile(config).model.to_dict()
        return det_root, extra_det_roots, dict(motion=dict(model, checkpoint=checkpoint))
    if kind == 'features':
        from vastmat.engine.cli import build_quiet_runner
        from vastmat.evaluation.metrics.dump_features import feature_dump_config
        roots = {}
        for name, root in dict(dets=det_root, **extra_det_roots).items():
            # one dump per (ReID checkpoint, detections): a later run with the same boxes reads it again
            out = osp.join(ctx.work_dir, 'features', osp.basename(training.work_dir), f'iter_{iteration}',
                           f'{name}-{folder_digest(root)}')
            roots[name] = out
            if osp.isfile(osp.join(out, DONE)):
                continue
            cfg = training_config(ctx, config, f'ReID features of {name} (iteration {iteration})')
            cfg.work_dir = osp.join(training.work_dir, 'dump')
            cfg.load_from = checkpoint
            cfg.test_dataloader.dataset.split = 'test'
            feature_dump_config(cfg, out, root, ctx.data_root)
            build_quiet_runner(cfg).test()
            write_json_atomic(dict(checkpoint=checkpoint, det_root=root), osp.join(out, DONE))
        return roots.pop('dets'), roots, {}
    raise ValueError(f"zoo_demo_parts: unknown kind {kind!r} (known: 'features', 'motion')")


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


def scored_checkpoints(training: Training) -> list[tuple[int, str]]:
    """The kept checkpoints the zoo scores (:data:`SCORED_CHECKPOINTS`): the first and the last; the one between
    them costs a test, or a ReID feature dump, of every test video and is the convergence benchmark's."""
    return training.checkpoints[:1] + training.checkpoints[1:][-1:]


def curve_point(training: Training, iteration: int, run: dict) -> dict:
    metrics = run.get('metrics', {}).get('COMBINED', {})
    return dict(iteration=iteration, minutes=training.minutes(iteration),
                **{key: metrics.get(key, float('nan')) for key in ('HOTA', 'DetA', 'AssA', 'IDF1', 'MOTA')})


# ------------------------------------------------------------------------------------------ joint / end-to-end models
def model_run_dir(training: Training, name: str, preset: str, iteration: int, matcher: str,
                  scale: float | None = None) -> str:
    """Where the zoo tests tracker ``name`` on the checkpoint of ``training`` at ``iteration`` with ``matcher``
    (``results/``, ``metrics.json``), at the official thresholds times ``scale`` (None: the config's own)."""
    thresholds = 'config_thresholds' if scale is None else f'thresholds_x{scale:g}'
    return osp.join(training.work_dir, 'tests', name, preset, thresholds, f'iter_{iteration}', matcher)


def calibrate_thresholds(ctx: ZooContext, name: str, cfg: Config, training: Training) -> dict | None:
    """The scale of :data:`THRESHOLD_SCALES` whose thresholds (:func:`scaled_thresholds`) track the
    ``ctx.calibration_split`` videos best (HOTA; ties: the larger scale) at the last checkpoint of ``training``:
    ``dict(scale, thresholds, split, hota={scale: HOTA})``; None where the config declares no official thresholds
    or the context calibrates nothing."""
    if ctx.calibration_split is None or not cfg.get('zoo_official_thresholds'):
        return None
    from vastmat.datasets.sequences import read_split
    videos = read_split(ctx.data_root, ctx.protocol, ctx.calibration_split)
    iteration, checkpoint = training.checkpoints[-1]
    hota = {}
    for scale in ctx.threshold_scales:
        scaled = copy.deepcopy(cfg)
        scaled.merge_from_dict(scaled_thresholds(cfg, scale))
        run_dir = osp.join(training.work_dir, 'tests', name, ctx.preset, 'calibration',
                           f'{ctx.calibration_split}_x{scale:g}', f'iter_{iteration}')
        metrics = test_tracking_model(scaled, checkpoint, videos, run_dir, ctx.preset, split=ctx.calibration_split)
        hota[scale] = metrics['COMBINED']['HOTA']
    best = max(hota, key=lambda scale: (hota[scale], scale))
    ctx.log(f'  {name}: thresholds x{best:g} of the official ones (HOTA on the {ctx.calibration_split} videos: '
            + ', '.join(f'x{s:g} {100 * h:.1f}' for s, h in hota.items()) + ')')
    return dict(scale=best, thresholds=scaled_thresholds(cfg, best), split=ctx.calibration_split,
                hota={f'{s:g}': h for s, h in hota.items()})


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
    calibration = calibrate_thresholds(ctx, member.name, cfg, training)
    if calibration is not None:
        cfg.merge_from_dict(calibration['thresholds'])
        out['thresholds'] = calibration
    scale = calibration['scale'] if calibration is not None else None
    for iteration, checkpoint in scored_checkpoints(training):
        last = iteration == training.checkpoints[-1][0]
        for matcher in (matchers if last and member.takes_matcher else ['original']):
            run_dir = model_run_dir(training, member.name, ctx.preset, iteration, matcher, scale)
            start = time.perf_counter()
            metrics = test_tracking_model(swap_matcher(cfg, matcher), checkpoint, ctx.videos, run_dir, ctx.preset)
            run = dict(metrics=metrics, seconds=time.perf_counter() - start, results=osp.join(run_dir, 'results'))
            if matcher == 'original':
                out['curve'].append(curve_point(training, iteration, run))
            if last:
                out['runs'][matcher] = run
    return out
