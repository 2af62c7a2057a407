"""How long the zoo benchmark is expected to take, laid out as the run lays it out. With more than one worker, each
tracker is a task (its own trainings, then its tests), pulled by the workers longest first; the first task is the
detector, its detections and the trainings several trackers start from
(:func:`vastmat.experiments.zoo_training_order.shared_sources`), and the trackers that need them wait for it while
the others start beside it (no core idles while the detector trains); a tracker whose checkpoint another tests
(MOTIP, for TCEI) is trained as a task of its own, after which both test it side by side. With one worker everything
runs here, one after another, the detector first.

Every training's pace is its config's ``zoo_seconds_per_iter`` (seconds an iteration at one thread in a worker with
another worker beside it on 2 cores, measured by ``make demo`` on the build machine) times this machine's factor
for that config (:mod:`.zoo_pace`: a few timed iterations here against the build machine's). With one worker,
trainings run at ``--threads`` (2) alone, :data:`TWO_THREADS_SPEEDUP` times faster. The tests take the build
machine's seconds below times their model's factor (a ReID model's for its feature dumps), the rest times the median
factor.
"""
from __future__ import annotations

import os.path as osp
from dataclasses import dataclass

from mmengine.config import Config

from vastmat.models.trackers.zoo import ZooTracker

from .zoo_calibration import calibration_grid
from .zoo_context import ZooContext
from .zoo_pace import MachinePace
from .zoo_scoring import SCORED_CHECKPOINTS
from .zoo_training import expected_seconds, find_training, read_config, set_schedule
from .zoo_training_order import (NUM_CHECKPOINTS, SHARED_TASK, checkpoint_sources, needs_shared_task, shared_sources,
                                  task_trainings, training_config, training_plan, training_task)

# Measured on the build machine (2-core AMD EPYC, AVX-512): the demo YOLOX's iteration at 1 thread against 2 threads
# alone (0.125 s and 0.118 s over 120 iterations); the small models gain little from a second thread.
TWO_THREADS_SPEEDUP = 1.06
# Seconds of one test of a joint or end-to-end model (the runner built and its checkpoint loaded, then each frame
# tracked, and TrackEval), of one tracker run on cached detections, and of one checkpoint's ReID feature dumps (the
# boxes after NMS 0.95; those after the detector's NMS are among them and take their features), each a fixed part
# plus a part a frame; measured by make demo on the demo's dev (80 frames: 1.1 to 1.8 s a calibration run of
# FairMOT, QDTrack, TransTrack and MOTIP) and test videos (360 frames: about 4.5 s; a feature dump 20 to 21 s).
MODEL_TEST_SECONDS = (0.5, 0.011)
CACHED_RUN_SECONDS = (0.2, 0.002)
FEATURE_DUMP_SECONDS = (3.0, 0.05)
# the share of a calibration point's time that a model keeping its frames' outputs saves (MOTIP: its DETR, 1.10 s
# of a 1.99 s test of the dev videos, profiled on the build machine)
KEPT_OUTPUTS_SAVING = 0.55
DETECTIONS_SECONDS = 5.0  # the detector's two test passes and box dumps
REPORT_SECONDS = 8.0  # the start (imports, the plan) and the report (tables, plots, the HTML page)


@dataclass
class TaskPlan:
    """One tracker's task: what it trains ``[(label, seconds)]``, its tests' seconds, and the tracker it waits for."""

    name: str
    trainings: list[tuple[str, float]]
    test_seconds: float
    after: str | None = None

    @property
    def seconds(self) -> float:
        return sum(s for _, s in self.trainings) + self.test_seconds


def split_frames(ctx: ZooContext, split: str | None) -> int:
    """Frames of the protocol's ``split`` videos (None: the test videos the zoo tracks, ``ctx.videos``)."""
    from vastmat.datasets.formats import read_seqinfo
    from vastmat.datasets.sequences import read_split
    videos = ctx.videos if split is None else read_split(ctx.data_root, ctx.protocol, split)
    return sum(int(read_seqinfo(osp.join(ctx.data_root, 'videos', v, 'seqinfo.ini'))['seqLength']) for v in videos)


def _seconds(cost: tuple[float, float], frames: int) -> float:
    return cost[0] + cost[1] * frames


def test_seconds(ctx: ZooContext, member: ZooTracker, matchers: list[str], test: int, dev: int,
                 pace: MachinePace | None = None) -> float:
    """Expected seconds of a tracker's tests: its calibration on the dev videos (``dev`` frames), one test per
    scored checkpoint and one per further matcher on the test videos (``test`` frames), each at this machine's pace
    (``pace``): a model's tests and a ReID model's feature dumps at that config's factor, the rest at the median."""
    pace = pace or MachinePace()
    extra = len(matchers) - 1 if member.takes_matcher else 0
    if not member.on_cached_detections:
        from vastmat.registry import MODELS
        cfg = read_config(member.demo_config)
        calibrations = len(calibration_grid(cfg, ctx.calibration_split, ctx.threshold_scales,
                                            ctx.own_threshold_grids))
        point = _seconds(MODEL_TEST_SECONDS, dev)
        # a model that keeps its frames' outputs while a calibration tests it (frame_outputs.py) runs its network
        # on the first point only
        later_point = point * (1 - KEPT_OUTPUTS_SAVING) if getattr(
            MODELS.get(cfg.model.type), 'keeps_frame_outputs', False) else point
        return pace.of(member.demo_config) * ((point + (calibrations - 1) * later_point if calibrations else 0.0)
                                              + (SCORED_CHECKPOINTS + extra) * _seconds(MODEL_TEST_SECONDS, test))
    runs = (SCORED_CHECKPOINTS if member.demo_parts else 1) + extra
    seconds = runs * _seconds(CACHED_RUN_SECONDS, test) * pace.typical
    if 'features' in member.demo_parts:
        seconds += SCORED_CHECKPOINTS * _seconds(FEATURE_DUMP_SECONDS, test) * pace.of(member.demo_parts['features'])
    return seconds


def configs_to_train(ctx: ZooContext, members: list[ZooTracker], detector: str | None = None) -> dict[str, Config]:
    """``{config path: its training config}`` of every training the run will do (``detector`` first where it is not
    trained yet), for :func:`~.zoo_pace.measure_pace`."""
    out = {}
    if detector is not None:
        cfg = training_config(ctx, detector, 'detector')
        set_schedule(cfg, ctx.train_iters, NUM_CHECKPOINTS)
        if find_training(cfg) is None:
            out[detector] = cfg
    for label, config, seconds in training_plan(ctx, members):
        if seconds is not None and config not in out:
            out[config] = training_config(ctx, config, label)
            set_schedule(out[config], ctx.train_iters, NUM_CHECKPOINTS)
    return out


def task_plans(ctx: ZooContext, members: list[ZooTracker], by_name: dict[str, ZooTracker], matchers: list[str],
               workers: int, detector: str | None = None,
               pace: MachinePace | None = None) -> tuple[list[tuple[str, float]], list[TaskPlan]]:
    """``(what runs first here [(label, seconds)], the TaskPlans)``, untrained trainings only, each at the pace of
    where it runs and of this machine (``pace``; None: the build machine's). ``workers`` 1: everything here, at 2
    threads, the detector first; more: in the workers, the detector, its detections and the trainings several
    trackers start from as the first task (:data:`SHARED_TASK`), which the trackers that need it wait for.
    ``detector``: the config whose boxes the trackers on cached detections read (None: given boxes). A tracker's
    tests count where something they test is trained anew; else the run reads its saved scores back."""
    pace = pace or MachinePace()
    selected = {m.name for m in members}
    pooled = workers > 1
    shared = set(shared_sources(members, by_name)) if pooled else set()
    task_pace = 1.0 if pooled else 1 / TWO_THREADS_SPEEDUP
    shared_plan = TaskPlan(SHARED_TASK, [], 0.0)
    first, tasks, planned = [], [], set()
    frames = dict(test=split_frames(ctx, None),
                  dev=split_frames(ctx, ctx.calibration_split) if ctx.calibration_split is not None else 0)
    owners = [by_name[m.checkpoint_of] for m in members if m.checkpoint_of in by_name]
    untrained = configs_to_train(ctx, members + owners, detector)
    if detector is not None:
        if detector in untrained:
            (shared_plan.trainings if pooled else first).append((
                f'detector: {osp.basename(detector)}',
                expected_seconds(untrained[detector], ctx.train_iters) * task_pace * pace.of(detector)))
        if pooled:
            shared_plan.test_seconds = DETECTIONS_SECONDS * pace.typical
        else:
            first.append(('its detections', DETECTIONS_SECONDS * pace.typical))
        planned.add(detector)
    with_shared_task = pooled and (detector is not None or bool(shared))
    sources = checkpoint_sources(members)
    for member in members:
        chain = task_trainings(member, by_name, selected)
        trainings = []
        for label, config, seconds in training_plan(ctx, [member]):
            if seconds is None or config not in chain or config in planned:
                continue
            planned.add(config)
            seconds *= pace.of(config) * task_pace
            (shared_plan.trainings if config in shared else trainings).append((label, seconds))
        after = training_task(member.checkpoint_of) if member.checkpoint_of in selected and pooled else (
            member.checkpoint_of if member.checkpoint_of in selected else None)
        if after is None and with_shared_task and needs_shared_task(member, members, by_name):
            after = SHARED_TASK
        # a tracker's tests run again where something it tests is trained anew (else its scores are read back)
        retrained = untrained.keys() & set(task_trainings(member, by_name, set())) or (
            member.on_cached_detections and detector in untrained)
        tests = test_seconds(ctx, member, matchers, **frames, pace=pace) * task_pace if retrained else 0.0
        if pooled and member.name in sources:  # trained as a task of its own, then tested
            tasks.append(TaskPlan(training_task(member.name), trainings, 0.0, after))
            tasks.append(TaskPlan(member.name, [], tests, training_task(member.name)))
        else:
            tasks.append(TaskPlan(member.name, trainings, tests, after))
    return first, ([shared_plan] if with_shared_task else []) + tasks


def longest_first(tasks: list[TaskPlan]) -> list[TaskPlan]:
    """The order in which the workers pull the tasks: the longest chain first (a task with the ones that wait for
    it), so that the last task to start is a short one."""
    chain = {t.name: t.seconds + sum(o.seconds for o in tasks if o.after == t.name) for t in tasks}
    return sorted(tasks, key=lambda t: -chain[t.name])


def makespan(tasks: list[TaskPlan], workers: int) -> float:
    """Seconds until the last task ends when ``workers`` pull ``tasks`` in order, each the first one ready (a task
    waits for the one it names in ``after``)."""
    free = [0.0] * max(1, workers)
    ended: dict[str, float] = {}
    waiting = list(tasks)
    while waiting:
        worker = min(range(len(free)), key=free.__getitem__)
        now = free[worker]
        ready = [t for t in waiting if t.after is None or t.after not in {w.name for w in waiting}
                 and ended.get(t.after, 0.0) <= now]
        if not ready:  # every waiting task waits for one still running: this worker idles until the first ends
            free[worker] = min(ended[t.after] for t in waiting if t.after in ended)
            continue
        task = ready[0]
        waiting.remove(task)
        free[worker] = ended[task.name] = now + task.seconds
    return max(free)
