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
from .zoo_plan import REPORT_SECONDS, longest_first, makespan, task_plans
from .zoo_report import report
from .zoo_scoring import detector_boxes, link_runs
from .zoo_training_order import shared_sources

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
    """One zoo tracker for a launcher's worker (:func:`member_task`)."""

    args: argparse.Namespace
    ctx: ZooContext
    name: str
    detections: dict | None
    cwd: str  # the tool's folder: its relative paths resolve there on every node


def member_task(task: MemberTask) -> dict:
    """:func:`run_member` in a launcher's worker: ``dict(result, seconds, host, pid)``."""
    from vastmat.utils.threads import torch_threads
    os.chdir(task.cwd)
    by_name = {m.name: m for m in zoo_trackers()}
    start = time.perf_counter()
    with torch_threads(1):  # a worker a core
        result = run_member(task.args, task.ctx, by_name[task.name], task.detections, by_name)
    return dict(result=result, seconds=time.perf_counter() - start, host=socket.gethostname(), pid=os.getpid(),
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


def run_members(args: argparse.Namespace, ctx: ZooContext, members: list[ZooTracker], detections: dict | None,
                step: str, console: Console, order: list[str] | None = None) -> dict:
    """Every selected zoo tracker: ``{tracker: dict(runs={matcher: run}, curve=[...], training=...)}``. One after
    another here, or (``--launcher ray``, or ``--workers`` above 1) each tracker a task of the launcher, taken in
    ``order`` (names; default the zoo's): first, here, the trainings that several tasks need
    (:func:`shared_sources`: the YOLOX backbone), then the trackers, one that tests another's checkpoint once that
    one is done (no training runs twice at once)."""
    by_name = {m.name: m for m in zoo_trackers()}
    out = {}
    if task_workers(args, members) == 1:
        for member in members:
            with Stage(f'{step} {ctx.protocol}: {member.name}', console):
                result = run_member(args, ctx, member, detections, by_name)
                if result is not None:
                    out[member.name] = result
                    print_member(member.name, result, console)
        return out
    for source in shared_sources(members, by_name):
        train(ctx, source, f'{osp.basename(source)} (a start of the trackers\' trainings)')
    task_ctx = replace(ctx, log=print)  # the console stays here
    rank = {name: i for i, name in enumerate(order or [])}
    waiting, finished = sorted(members, key=lambda m: rank.get(m.name, len(rank))), set()

    def next_task() -> MemberTask | None:
        member = ready_member(waiting, finished, members)
        return None if member is None else MemberTask(args, task_ctx, member.name, detections, os.getcwd())

    def done(task: MemberTask, reply: dict) -> None:
        finished.add(task.name)
        # what this run trained, for the tasks still to start (TCEI tests the MOTIP that this run trained)
        task_ctx.trainings.update({c: t for c, t in reply['trainings'].items() if c not in task_ctx.trainings})
        console.print(f'{step} {ctx.protocol}: {task.name} ({reply["seconds"]:.0f} s, {args.launcher} worker '
                      f'{reply["pid"]} on {reply["host"]})')
        if reply['result'] is not None:
            out[task.name] = reply['result']
            print_member(task.name, reply['result'], console)

    console.print(f'{step} {ctx.protocol}: {len(members)} trackers, {args.workers} {args.launcher} worker(s)')
    run_pulled(member_task, next_task, args.launcher, args.workers, done,
               describe=lambda task: f'in zoo tracker {task.name} ({ctx.protocol})')
    return {m.name: out[m.name] for m in members if m.name in out}


def ready_member(waiting: list[ZooTracker], finished: set[str], members: list[ZooTracker]) -> ZooTracker | None:
    """The first of ``waiting`` that can start, taken off it (None: none now): a tracker that tests another's
    checkpoint waits until that one, where it is among ``members``, is ``finished``."""
    selected = {m.name for m in members}
    for member in waiting:
        if member.checkpoint_of not in selected or member.checkpoint_of in finished:
            waiting.remove(member)
            return member
    return None


def print_plan(ctx: Any, members: list, args: argparse.Namespace, det_roots: dict, checkpoints: dict,
               console: Console) -> list[str]:
    """What will be trained and how long it is expected to take (:mod:`.zoo_plan`: each training's measured pace,
    the tasks laid out on the workers); returns the order in which the workers take the trackers."""
    by_name = {m.name: m for m in zoo_trackers()}
    workers = task_workers(args, members)
    detector = args.det_config if ctx.protocol not in det_roots and any(
        m.on_cached_detections for m in members) else None
    if ctx.protocol in checkpoints:
        detector = None  # a given checkpoint: nothing to train, its test is a few seconds
    first, tasks = task_plans(ctx, members, by_name, args.matchers, workers, detector)
    ordered = longest_first(tasks)
    total = sum(s for _, s in first) + makespan(ordered, workers) + REPORT_SECONDS
    trainings = first + [item for task in ordered for item in task.trainings]
    console.print(f'  {ctx.protocol}: expected about {total / 60:.1f} min on 2 cores ({workers} worker(s)): '
                  + ', '.join(f'{label} {s / 60:.1f} min' for label, s in trainings)
                  + f', tests {sum(t.test_seconds for t in tasks) / 60:.1f} min')
    return [task.name for task in ordered]


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
    detections, results, linked = {}, {}, {}
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
        order = print_plan(ctx, members, args, det_roots, checkpoints, console)
        detections[protocol] = {}
        if any(m.on_cached_detections for m in members):
            with Stage(f'[2/4] {protocol}: detections of '
                       f'{osp.basename(args.det_config) if protocol not in det_roots else det_roots[protocol]}',
                       console):
                detections[protocol] = get_detections(args, ctx, det_roots, checkpoints, console)
        results[protocol] = run_members(args, ctx, members, detections[protocol] or None, '[3/4]', console, order)
        if args.linker is not None:
            with Stage(f'[3/4] {protocol}: global linking of every tracker\'s results', console):
                linked[protocol] = link_runs(ctx, results[protocol], args.linker)
    out = report(args, detections, results, console, linked if args.linker is not None else None)
    out['seconds'] = time.perf_counter() - start
    console.print(f'zoo benchmark finished in {out["seconds"]:.0f} s')
    return out
