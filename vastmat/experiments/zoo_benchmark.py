"""The model-zoo benchmark of one VastMAT root (``tools/zoo_benchmark.py``): data, the detections of the trackers
on cached detections, every selected zoo tracker per protocol (:mod:`.zoo`), one after another or as tasks of a
launcher (:mod:`.launchers`), then the report (:mod:`.zoo_report`)."""
from __future__ import annotations

import argparse
import os
import os.path as osp
import socket
import time
from dataclasses import dataclass, replace
from typing import Any

from rich.console import Console

from vastmat.apis import matcher_fragment, parse_matcher_option, video_list
from vastmat.models.trackers import zoo_trackers
from vastmat.models.trackers.zoo import ZooTracker
from vastmat.utils.errors import UserInputError

from .launchers import run_pulled
from .zoo import run_cached_member, run_model_member, train
from .zoo_calibration import THRESHOLD_SCALES
from .zoo_context import ZooContext
from .zoo_pace import MachinePace, measure_pace
from .zoo_plan import REPORT_SECONDS, configs_to_train, longest_first, makespan, task_plans
from .zoo_report import report
from .zoo_scoring import detector_boxes, link_runs
from .zoo_training_order import SHARED_TASK, checkpoint_sources, needs_shared_task, shared_sources, training_task

DEMO_ROOT = 'data/demo'


def per_protocol(values: list[str] | None, protocols: list[str], flag: str) -> dict[str, str]:
    """``[DIR]`` (one protocol) or ``[protocol1=DIR, protocol2=DIR]`` as ``{protocol: DIR}``."""
    if not values:
        return {}
    if len(values) == 1 and '=' not in values[0]:
        if len(protocols) > 1:
            raise UserInputError(f'{flag}: give one PROTOCOL=PATH per protocol ({", ".join(protocols)})')
        return {protocols[0]: values[0]}
    out = {}
    for value in values:
        protocol, sep, path = value.partition('=')
        if not sep or protocol not in protocols:
            raise UserInputError(f'{flag} {value}: expected PROTOCOL=PATH with PROTOCOL one of {", ".join(protocols)}')
        out[protocol] = path
    return out


def ensure_data(data_root: str, console: Console) -> None:
    """Render the demo dataset when the default root is absent; any other missing root is an error."""
    if osp.isdir(osp.join(data_root, 'videos')):
        return
    if osp.normpath(data_root) != osp.normpath(DEMO_ROOT):
        raise UserInputError(f'{data_root}: not a VastMAT root (no videos/ folder)')
    from vastmat.datasets.demo_data import make_demo_dataset
    start = time.perf_counter()
    with console.status('rendering the demo dataset'):
        make_demo_dataset(data_root)
    console.print(f'[1/4] demo dataset rendered to {data_root} ({time.perf_counter() - start:.0f} s)')


def get_detections(args: argparse.Namespace, ctx: Any, det_roots: dict, checkpoints: dict,
                   console: Console) -> dict:
    """The protocol's cached detections: given, or from the (given or trained) detector; returns their source."""
    protocol = ctx.protocol
    if protocol in det_roots:
        console.print(f'  {protocol}: cached detections from {det_roots[protocol]}')
        return dict(det_root=det_roots[protocol], source='given')
    work_dir = osp.join(args.work_dir, protocol, 'detector')
    checkpoint = checkpoints.get(protocol)
    out = dict(source='detector')
    if checkpoint is None:
        training = train(ctx, args.det_config, f'{protocol} detector')
        checkpoint = training.checkpoint
        out['training'] = dict(config=args.det_config, seconds=training.seconds, iterations=training.max_iters,
                               reused=training.reused, kind='detector')
    metrics, det_root, extra = detector_boxes(ctx, args.det_config, checkpoint, work_dir)
    nms95_root = extra['nms95']
    scores = {key: metrics.get(f'det/{key}', float('nan')) for key in ('AP50', 'AP75', 'AP')}
    console.print(f'  {protocol}: detector ' + ', '.join(f'{k} {100 * v:.1f}' for k, v in scores.items())
                  + f' on the test videos; boxes in {det_root} (NMS 0.95: {nms95_root})')
    return dict(out, det_root=det_root, checkpoint=checkpoint, extra_det_roots=extra, **scores)


class Stage:
    """Prints a stage's start and, when it ends, its time."""

    def __init__(self, text: str, console: Console) -> None:
        self.text = text
        self.console = console

    def __enter__(self) -> 'Stage':
        self.start = time.perf_counter()
        self.console.print(self.text)
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is None:
            self.console.print(f'  ({time.perf_counter() - self.start:.0f} s)')


def run_member(args: argparse.Namespace, ctx: ZooContext, member: ZooTracker, detections: dict | None,
               by_name: dict[str, ZooTracker]) -> dict | None:
    """One zoo tracker: ``dict(runs={matcher: run}, curve=[...], training=...)``; None for a tracker on cached
    detections where there are none."""
    matchers = args.matchers if member.takes_matcher else ['original']
    if not member.on_cached_detections:
        return run_model_member(ctx, member, matchers, by_name)
    if detections is None:
        return None
    return run_cached_member(ctx, member, matchers, detections['det_root'], detections.get('extra_det_roots') or {})


@dataclass(frozen=True)
class MemberTask:
    """One zoo tracker for a launcher's worker (:func:`run_task`): ``phase`` ``all`` (its trainings and tests),
    ``train`` (its trainings only: a member whose checkpoint another tests, :func:`checkpoint_sources`) or ``test``
    (its tests, after its ``train`` task)."""

    args: argparse.Namespace
    ctx: ZooContext
    member: str
    detections: dict | None
    cwd: str  # the tool's folder: its relative paths resolve there on every node
    phase: str = 'all'

    @property
    def name(self) -> str:
        return training_task(self.member) if self.phase == 'train' else self.member

    def run(self) -> dict:
        by_name = {m.name: m for m in zoo_trackers()}
        member = by_name[self.member]
        if self.phase == 'train':
            train(self.ctx, member.demo_config, member.name)
            return dict(result=None)
        return dict(result=run_member(self.args, self.ctx, member, self.detections, by_name))


@dataclass(frozen=True)
class SharedTask:
    """The pooled run's first task (:data:`SHARED_TASK`): the detections of the trackers on cached detections (the
    detector trained where it is not) and the trainings that several trackers start from (:func:`shared_sources`:
    the demo YOLOX's backbone), in a worker while the other workers take the trackers that need none of it."""

    args: argparse.Namespace
    ctx: ZooContext
    det_roots: dict
    checkpoints: dict
    detections_needed: bool
    sources: tuple[str, ...]
    cwd: str
    name: str = SHARED_TASK

    def run(self) -> dict:
        from .zoo_report import make_console
        detections = {}
        if self.detections_needed:
            detections = get_detections(self.args, self.ctx, self.det_roots, self.checkpoints, make_console())
        for source in self.sources:
            train(self.ctx, source, f'{osp.basename(source)} (a start of the trackers\' trainings)')
        return dict(result=detections)


def run_task(task: MemberTask | SharedTask) -> dict:
    """A task of the pooled run in a launcher's worker, at one thread: ``dict(result, seconds, host, pid,
    trainings)``."""
    from vastmat.utils.threads import torch_threads
    os.chdir(task.cwd)
    start = time.perf_counter()
    with torch_threads(1):  # a worker a core
        result = task.run()
    return dict(result, seconds=time.perf_counter() - start, host=socket.gethostname(), pid=os.getpid(),
                trainings=task.ctx.trainings)


def print_member(name: str, result: dict, console: Console) -> None:
    """A tracker's skipped runs and its HOTA (at each kept checkpoint)."""
    for matcher, run in result['runs'].items():
        if 'skipped' in run:
            console.print(f'  {name} + {matcher}: skipped, {run["skipped"]}')
    hota = result['runs'].get('original', {}).get('metrics', {}).get('COMBINED', {}).get('HOTA')
    if hota is not None:
        trend = ' -> '.join(f'{100 * p["HOTA"]:.1f}' for p in result['curve'])
        console.print(f'  {name}: HOTA {100 * hota:.1f}' + (
            f' (at its checkpoints: {trend})' if len(result['curve']) > 1 else ''))


def task_workers(args: argparse.Namespace, members: list[ZooTracker]) -> int:
    """How many workers take the trackers as tasks; 1: they run one after another here (``--workers 1``, or one
    tracker with the local launcher)."""
    return 1 if args.launcher == 'local' and (args.workers <= 1 or len(members) == 1) else args.workers


def run_members(args: argparse.Namespace, ctx: ZooContext, members: list[ZooTracker], det_roots: dict,
                checkpoints: dict, step: str, console: Console, order: list[str] | None = None) -> tuple[dict, dict]:
    """Every selected zoo tracker: ``({tracker: dict(runs={matcher: run}, curve=[...], training=...)}, the
    detections)``. One after another here (the detections first), or (``--launcher ray``, or ``--workers`` above 1)
    each tracker a task of the launcher, taken in ``order`` (names; default the zoo's): the :class:`SharedTask`
    first, the trackers that need none of it beside it; a member whose checkpoint another tests (MOTIP for TCEI) is
    trained as a task of its own, then both test it side by side (no training runs twice at once)."""
    by_name = {m.name: m for m in zoo_trackers()}
    needs_detections = any(m.on_cached_detections for m in members)
    out, detections = {}, {}
    if task_workers(args, members) == 1:
        if needs_detections:
            with Stage(f'[2/4] {ctx.protocol}: detections of {detections_source(args, ctx, det_roots)}', console):
                detections = get_detections(args, ctx, det_roots, checkpoints, console)
        for member in members:
            with Stage(f'{step} {ctx.protocol}: {member.name}', console):
                result = run_member(args, ctx, member, detections or None, by_name)
                if result is not None:
                    out[member.name] = result
                    print_member(member.name, result, console)
        return out, detections
    task_ctx = replace(ctx, log=print)  # the console stays here
    waiting, finished = task_queue(members, order), set()
    shared = SharedTask(args, task_ctx, det_roots, checkpoints, needs_detections,
                        tuple(shared_sources(members, by_name)), os.getcwd())
    first = [shared] if needs_detections or shared.sources else []
    if not first:
        finished.add(SHARED_TASK)

    def next_task() -> MemberTask | SharedTask | None:
        if first:
            return first.pop()
        ready = ready_member(waiting, finished, members)
        return None if ready is None else MemberTask(args, task_ctx, ready[0].name, detections or None, os.getcwd(),
                                                     ready[1])

    def done(task: MemberTask | SharedTask, reply: dict) -> None:
        finished.add(task.name)
        # what this run trained, for the tasks still to start (TCEI tests the MOTIP that this run trained)
        task_ctx.trainings.update({c: t for c, t in reply['trainings'].items() if c not in task_ctx.trainings})
        where = f'{args.launcher} worker {reply["pid"]} on {reply["host"]}'
        if isinstance(task, SharedTask):
            detections.update(reply['result'])
            console.print(f'[2/4] {ctx.protocol}: detections of {detections_source(args, ctx, det_roots)} and the '
                          f'shared trainings ({reply["seconds"]:.0f} s, {where})')
            return
        console.print(f'{step} {ctx.protocol}: {task.name} ({reply["seconds"]:.0f} s, {where})')
        if task.phase != 'train' and reply['result'] is not None:
            out[task.name] = reply['result']
            print_member(task.name, reply['result'], console)

    console.print(f'{step} {ctx.protocol}: {len(members)} trackers, {args.workers} {args.launcher} worker(s)'
                  + (', the first one on the detections and shared trainings' if first else ''))
    run_pulled(run_task, next_task, args.launcher, args.workers, done,
               describe=lambda task: f'in zoo task {task.name} ({ctx.protocol})')
    return {m.name: out[m.name] for m in members if m.name in out}, detections


def detections_source(args: argparse.Namespace, ctx: ZooContext, det_roots: dict) -> str:
    """What the detections come from: the detector config's name, or the given folder."""
    return det_roots[ctx.protocol] if ctx.protocol in det_roots else osp.basename(args.det_config)


def task_queue(members: list[ZooTracker], order: list[str] | None = None) -> list[tuple[ZooTracker, str]]:
    """The pooled run's ``(member, phase)`` tasks (:class:`MemberTask`) in ``order`` (the plan's task names, longest
    first; default the zoo's), so that the workers take them as the plan laid them out: a member whose checkpoint
    another tests is a ``train`` task (in the place of its training task) and a ``test`` task (in the place of its
    own name), every other one task."""
    rank = {name: i for i, name in enumerate(order or [])}
    sources = checkpoint_sources(members)

    def place(task: tuple[ZooTracker, str]) -> int:
        member, phase = task
        return rank.get(training_task(member.name) if phase == 'train' else member.name, len(rank))
    return sorted(((m, phase) for m in members for phase in (('train', 'test') if m.name in sources else ('all', ))),
                  key=place)


def ready_member(waiting: list[tuple[ZooTracker, str]], finished: set[str],
                 members: list[ZooTracker]) -> tuple[ZooTracker, str] | None:
    """The first ``(member, phase)`` of ``waiting`` (:class:`MemberTask`'s phases) that can start, taken off it
    (None: none now). A member's tests wait for its training task; a tracker that tests another's checkpoint waits
    until that one, where it is among ``members``, is trained; one that needs the detections or a shared training
    (:func:`needs_shared_task`) waits for :data:`SHARED_TASK`."""
    selected = {m.name for m in members}
    by_name = {m.name: m for m in zoo_trackers()}
    for member, phase in waiting:
        if phase == 'test' and training_task(member.name) not in finished:
            continue
        if member.checkpoint_of in selected and training_task(member.checkpoint_of) not in finished:
            continue
        if phase != 'test' and SHARED_TASK not in finished and needs_shared_task(member, members, by_name):
            continue
        waiting.remove((member, phase))
        return member, phase
    return None


def print_plan(ctx: Any, members: list, args: argparse.Namespace, det_roots: dict, checkpoints: dict,
               console: Console, start: float) -> tuple[list[str], dict]:
    """What will be trained and how long the run is expected to take from its ``start`` (a ``perf_counter`` time) to
    its end (:mod:`.zoo_plan`: each training's pace, measured here by :mod:`.zoo_pace`, the tasks laid out on the
    workers); returns the order in which the workers take the tasks, and the estimate (``seconds`` from the start,
    this machine's ``factors`` by config, the probe's ``probe_seconds``) that zoo.json keeps beside the run's time."""
    by_name = {m.name: m for m in zoo_trackers()}
    workers = task_workers(args, members)
    detector = args.det_config if ctx.protocol not in det_roots and any(
        m.on_cached_detections for m in members) else None
    if ctx.protocol in checkpoints:
        detector = None  # a given checkpoint: nothing to train, its test is a few seconds
    # nothing to train: nothing is probed (the tests of reused trainings read their scores back, and the detector's
    # boxes of the same test are found: seconds)
    to_train = configs_to_train(ctx, members, detector)
    pace = MachinePace()
    if to_train:
        with console.status(f"measuring this machine's pace ({len(to_train)} config(s), a few iterations each)"):
            pace = measure_pace(to_train)
    first, tasks = task_plans(ctx, members, by_name, args.matchers, workers, detector, pace)
    ordered = longest_first(tasks)
    elapsed = time.perf_counter() - start
    total = elapsed + sum(s for _, s in first) + makespan(ordered, workers) + REPORT_SECONDS * pace.typical
    trainings = first + [item for task in ordered for item in task.trainings]
    console.print(f'  {ctx.protocol}: expected about {total / 60:.1f} min in all on 2 cores ({workers} worker(s); '
                  f'{pace.describe()}): ' + ''.join(f'{label} {s / 60:.1f} min, ' for label, s in trainings)
                  + f'tests {sum(t.test_seconds for t in tasks) / 60:.1f} min')
    return [task.name for task in ordered], dict(seconds=total, factors=pace.factors, probe_seconds=pace.probe_seconds)


def run(args: argparse.Namespace, members: list, console: Console) -> dict:
    """The whole benchmark for ``args`` (the tool's options) and the selected zoo ``members``; returns zoo.json's
    content and the total seconds."""
    start = time.perf_counter()
    det_roots = per_protocol(args.det_root, args.protocols, '--det-root')
    checkpoints = per_protocol(args.checkpoint, args.protocols, '--checkpoint')
    for path in [*det_roots.values(), *checkpoints.values()]:
        if not osp.exists(path):
            raise UserInputError(f'{path}: no such file or folder')
    for text in args.matchers:
        name, _ = parse_matcher_option(text, '--matchers')
        if name != 'original':
            matcher_fragment(name)  # an unknown matcher name fails here, before any training
    ensure_data(args.data_root, console)
    detections, results, linked, expected = {}, {}, {}, {}
    for protocol in args.protocols:
        videos = video_list(args.data_root, f'{protocol}/test')
        if not videos:
            raise UserInputError(f'{args.data_root}: {protocol}/test lists no videos')
        ctx = ZooContext(args.data_root, protocol, videos, osp.join(args.work_dir, protocol), args.preset,
                         args.train_iters, log=console.print,
                         calibration_split=None if args.no_calibration else 'dev',
                         threshold_scales=tuple(args.threshold_scales or THRESHOLD_SCALES),
                         own_threshold_grids=args.threshold_scales is None,
                         # one thread count unless asked: reproducible trainings (docs/zoo.md)
                         adaptive_threads=args.adaptive_threads, seed=args.seed)
        order, expected[protocol] = print_plan(ctx, members, args, det_roots, checkpoints, console, start)
        results[protocol], detections[protocol] = run_members(args, ctx, members, det_roots, checkpoints, '[3/4]',
                                                              console, order)
        if args.linker is not None:
            with Stage(f'[3/4] {protocol}: global linking of every tracker\'s results', console):
                linked[protocol] = link_runs(ctx, results[protocol], args.linker)
    out = report(args, detections, results, console, linked if args.linker is not None else None, expected)
    out['seconds'] = time.perf_counter() - start
    console.print(f'zoo benchmark finished in {out["seconds"]:.0f} s')
    return out
