"""Where the wall time of one ``tools/test.py`` run on cached detections goes (start-up, data, tracking, writing,
scoring, other), beside the tracker's own time on the same detections, and the run's peak memory.

The run is :func:`vastmat.apis.run_tracking_test` in this process, with the functions of each part wrapped by
:class:`Timers` for its duration (nothing is changed on disk).
"""
from __future__ import annotations

import functools
import os
import os.path as osp
import resource
import tempfile
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from vastmat.utils.errors import UserInputError

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
DEFAULT_CONFIG = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py')
PARTS = ('start-up', 'data', 'tracking', 'writing', 'scoring', 'other')
GOAL_WALL_S, GOAL_OTHER_MS_PER_FRAME = 20.0, 1.0


def process_age() -> float:
    """Seconds since this process started (the interpreter's own start-up included), from /proc."""
    with open('/proc/self/stat') as f:
        start_ticks = int(f.read().rsplit(')', 1)[1].split()[19])
    with open('/proc/uptime') as f:
        uptime = float(f.read().split()[0])
    return uptime - start_ticks / os.sysconf('SC_CLK_TCK')


def peak_rss_mb() -> float:
    """This process's peak resident set so far (VmHWM), MB."""
    with open('/proc/self/status') as f:
        line = next(line for line in f if line.startswith('VmHWM:'))
    return int(line.split()[1]) / 1024


class Timers:
    """Seconds spent in wrapped functions, per part (a call inside another timed call counts once, in the outer)."""

    def __init__(self) -> None:
        self.seconds = {part: 0.0 for part in PARTS}
        self.first_item: float | None = None
        self.rss_at_first_item: float | None = None
        self._depth = 0
        self._originals: list[tuple[Any, str, Any]] = []

    def wrap(self, owner: Any, name: str, part: str) -> None:
        """Time ``owner.name`` (a class's method or a module's function) as ``part``; the first ``data`` call marks
        the end of the start-up."""
        original = getattr(owner, name)
        self._originals.append((owner, name, owner.__dict__.get(name) if isinstance(owner, type) else original))

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if part == 'data' and self.first_item is None:
                self.first_item = time.perf_counter()
                self.rss_at_first_item = peak_rss_mb()
            if self._depth:
                return original(*args, **kwargs)
            self._depth += 1
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[part] += time.perf_counter() - start
                self._depth -= 1
        setattr(owner, name, timed)

    def restore(self) -> None:
        """Undo every :meth:`wrap` (an inherited method becomes inherited again)."""
        for owner, name, original in reversed(self._originals):
            if original is None:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        self._originals.clear()


def instrument(timers: Timers, config: str) -> None:
    """Wrap the functions of each part (in this process only)."""
    from mmengine.config import Config

    import vastmat.datasets  # noqa: F401
    import vastmat.evaluation.metrics.track_metric as track_metric
    import vastmat.models  # noqa: F401  (registers the trackers)
    from vastmat.datasets import VastMATDataset
    from vastmat.registry import MODELS
    timers.wrap(VastMATDataset, 'prepare_data', 'data')
    tracker_type = Config.fromfile(config).model.tracker.type
    timers.wrap(MODELS.get(tracker_type), 'update', 'tracking')
    timers.wrap(track_metric, 'write_results', 'writing')
    timers.wrap(track_metric, 'write_gt', 'writing')
    timers.wrap(track_metric.VastMATMetric, 'evaluate', 'scoring')


def tracker_alone(config: str, data_root: str, det_root: str, repeats: int) -> tuple[float, int]:
    """The config's tracker on the same detections, ``tracker.update`` alone: (best seconds, frames)."""
    from vastmat.apis import init_model, video_list
    from vastmat.apis.inference import cached_video_frames
    if repeats < 1:
        raise UserInputError(f'--repeats {repeats}: at least 1')
    tracker = init_model(config, detector=False).tracker
    prepared = [list(cached_video_frames(data_root, det_root, name)) for name in video_list(data_root)]
    best = float('inf')
    for _ in range(repeats):
        start = time.perf_counter()
        for frames in prepared:
            tracker.reset()
            for frame in frames:
                tracker.update(frame)
        best = min(best, time.perf_counter() - start)
    return best, sum(len(frames) for frames in prepared)


def split_test_run(config: str, data_root: str, det_root: str, workers: int | None = None, repeats: int = 3,
                    work_dir: str | None = None) -> dict:
    """One instrumented ``tools/test.py`` run (in ``work_dir``, default a temporary folder): its wall time since the
    process started split into :data:`PARTS`, the tracker alone (best of ``repeats``), peak memory, HOTA, goals."""
    from vastmat.apis import run_tracking_test
    reference = time.perf_counter()
    age_at_reference = process_age()  # the process's start (interpreter, imports) before ``reference``
    timers = Timers()
    try:
        instrument(timers, config)
        with tempfile.TemporaryDirectory() as tmp:
            metrics = run_tracking_test(config, data_root, det_root, work_dir or tmp, workers=workers)
            end = time.perf_counter()
    finally:
        timers.restore()
    peak_end = peak_rss_mb()
    children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if timers.first_item is None:
        raise UserInputError(f'{data_root}: the test loop read no dataset item')
    wall = age_at_reference + end - reference
    seconds = dict(timers.seconds)
    seconds['start-up'] = age_at_reference + timers.first_item - reference
    seconds['other'] = end - timers.first_item - sum(seconds[p] for p in ('data', 'tracking', 'writing', 'scoring'))
    alone, frames = tracker_alone(config, data_root, det_root, repeats)
    outside_ms = 1000 * (seconds['data'] + seconds['writing'] + seconds['other']) / frames
    return dict(config=config, data_root=data_root, det_root=det_root, frames=frames, wall_s=wall, seconds=seconds,
                tracker_alone_s=alone, outside_ms_per_frame=outside_ms,
                peak_rss_mb=dict(at_first_item=timers.rss_at_first_item, end=peak_end,
                                 scoring_processes=children_peak),
                HOTA=metrics.get('vastmat/HOTA'),
                goals=dict(wall_s=GOAL_WALL_S, outside_ms_per_frame=GOAL_OTHER_MS_PER_FRAME,
                           wall_met=wall < GOAL_WALL_S, outside_met=outside_ms < GOAL_OTHER_MS_PER_FRAME))


def print_split(result: dict, console: Console | None = None) -> None:
    """The split as a table, then the goals and the peak memory."""
    console = console or Console()
    frames, wall = result['frames'], result['wall_s']
    table = Table(title=f'tools/test.py on {frames} frames: {wall:.2f} s wall')
    for column in ('part', 'seconds', 'share', 'ms / frame'):
        table.add_column(column, justify='left' if column == 'part' else 'right')
    for part in PARTS:
        value = result['seconds'][part]
        table.add_row(part, f'{value:.2f}', f'{value / wall:.0%}', f'{1000 * value / frames:.3f}')
    table.add_row('tracker alone (same detections)', f'{result["tracker_alone_s"]:.2f}', '',
                  f'{1000 * result["tracker_alone_s"] / frames:.3f}')
    console.print(table)
    rss, goals = result['peak_rss_mb'], result['goals']
    console.print(f'data + writing + other: {result["outside_ms_per_frame"]:.3f} ms per frame (goal < '
                  f'{goals["outside_ms_per_frame"]} ms: {"met" if goals["outside_met"] else "NOT met"}); wall '
                  f'{wall:.2f} s (goal < {goals["wall_s"]:.0f} s: {"met" if goals["wall_met"] else "NOT met"})')
    console.print(f'peak resident set: {rss["at_first_item"]:.0f} MB after start-up (imports, runner), '
                  f'{rss["end"]:.0f} MB at the end; scoring processes {rss["scoring_processes"]:.0f} MB')
