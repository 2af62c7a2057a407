"""What the zoo trains for one protocol's run (:class:`.zoo_context.ZooContext`): each training's config, the
trainings a config starts from (:data:`START_KEYS`, sources first), each member's and each task's trainings, and the
plan of them all with their expected seconds. The trainings themselves run in :func:`vastmat.experiments.zoo.train`.
"""
from __future__ import annotations

import os.path as osp

from mmengine.config import Config

from vastmat.models.trackers.zoo import ZooTracker, config_path
from vastmat.utils.io import once_per_file_version

from .zoo_context import ZooContext
from .zoo_training import Training, expected_seconds, find_training, read_config, set_schedule, zoo_config

NUM_CHECKPOINTS = 3  # kept checkpoints of every learned part (tools/benchmark/convergence.py scores each)


def training_config(ctx: ZooContext, config: str, label: str) -> Config:
    cfg = zoo_config(config, ctx.data_root, ctx.protocol, osp.join(ctx.work_dir, 'training',
                                                                  osp.splitext(osp.basename(config))[0]), label,
                     adaptive_threads=ctx.adaptive_threads, seed=ctx.seed, held_out=ctx.calibration_split)
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


@once_per_file_version()
def _file_start_sources(config: str) -> tuple[tuple[str, str], ...]:
    """:func:`start_sources` of a config file, found once per version of the file (a zoo run asks for them hundreds
    of times while it orders its trainings)."""
    return tuple(start_sources(read_config(config)))


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
    for _, source in _file_start_sources(config):
        for found in [*source_order(source, (*_chain, config)), source]:
            if found not in order:
                order.append(found)
    return order


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


# The pooled zoo run's first task: the detector, its detections and the shared trainings (:func:`shared_sources`)
SHARED_TASK = 'detector'


def needs_shared_task(member: ZooTracker, members: list[ZooTracker], by_name: dict[str, ZooTracker]) -> bool:
    """Whether ``member``'s task waits for the :data:`SHARED_TASK`: it tracks the detections, or one of its trainings
    starts from a shared one."""
    shared = set(shared_sources(members, by_name))
    return member.on_cached_detections or bool(
        shared & set(task_trainings(member, by_name, {m.name for m in members})))


def checkpoint_sources(members: list[ZooTracker]) -> set[str]:
    """The members whose checkpoint another of ``members`` tests (MOTIP for TCEI): the pooled run trains them as a
    task of their own (:func:`training_task`), so that the other's tests start beside their own."""
    selected = {m.name for m in members}
    return {m.checkpoint_of for m in members if m.checkpoint_of in selected}


def training_task(name: str) -> str:
    """The name of the task that trains member ``name`` (one of :func:`checkpoint_sources`) before its tests."""
    return f'{name} training'


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
