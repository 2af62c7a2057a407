#!/usr/bin/env python
"""Benchmark: where the wall time of one ``tools/test.py`` run on cached detections goes, beside the tracker's own
time on the same detections (the association benchmark's measure).

    python tools/benchmark/test_path.py [CONFIG] --data-root DIR --det-root DIR [--workers N] [--repeats R]
        [--work-dir W] [--out FILE.json]

CONFIG defaults to configs/bytetrack/bytetrack_cached-dets.py. The run is ``tools/test.py CONFIG --data-root DIR
--det-root DIR --work-dir W [--workers N]``'s steps in this process (vastmat.apis.run_tracking_test), its wall time
split into:

* start-up: process start to the test loop's first dataset item (interpreter, imports, config, runner, dataset);
* data: the dataset items (reading each video's detection files, building its tracker inputs);
* tracking: the tracker's ``update`` calls;
* writing: the results files (and the ground truth of the tracked frames of a strided dataset);
* scoring: the metric's ``evaluate``, i.e. waiting for the videos still being scored after the last one was tracked,
  and combining (the videos scored in worker processes alongside the tracking cost no wall time here);
* other: the rest of the test loop (runner and hooks, collating, the model's per-frame bookkeeping, the metric's),
  the metrics table and metrics.json.

Beside it: the same tracker on the same detections with nothing else (``tracker.update`` over prepared frames, the
best of ``--repeats`` passes, as tools/benchmark/association_speed.py times it). Memory: the peak resident set of
this process at the first dataset item (imports and runner: the floor of any run) and at the end, and of the
scoring processes. Goals (issue 18) on ../shared/data/AnimalTrack-10fps-sim, 2 cores: under 20 s wall in all, and
data + writing + other under 1 ms per frame.

    python tools/benchmark/test_path.py --data-root ../shared/data/AnimalTrack-10fps-sim/gt \\
        --det-root ../shared/data/AnimalTrack-10fps-sim/dets --out work_dirs/test_path.json
"""
import time

SCRIPT_START = time.perf_counter()  # before the heavy imports: they are part of the start-up

import argparse  # noqa: E402
import functools  # noqa: E402
import os  # noqa: E402
import os.path as osp  # noqa: E402
import resource  # noqa: E402
import tempfile  # noqa: E402
from typing import Any  # noqa: E402

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


def tracker_alone(config: str, data_root: str, det_root: str, repeats: int) -> tuple[float, int]:
    """The config's tracker on the same detections, ``tracker.update`` alone: (best seconds, frames)."""
    from vastmat.apis import init_model, video_list
    from vastmat.apis.inference import cached_video_frames
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


def instrument(timers: Timers, config: str) -> None:
    """Wrap the functions of each part (in this process only; nothing is changed on disk)."""
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


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('config', nargs='?', default=DEFAULT_CONFIG)
    parser.add_argument('--data-root', required=True)
    parser.add_argument('--det-root', required=True)
    parser.add_argument('--workers', type=int, help='tools/test.py --workers (default: the config\'s)')
    parser.add_argument('--repeats', type=int, default=3, help='passes of the tracker-alone measure (best counts)')
    parser.add_argument('--work-dir', help='tools/test.py --work-dir (default: a temporary folder)')
    parser.add_argument('--out', help='JSON file for the split')
    args = parser.parse_args(argv)

    start_age = process_age() - (time.perf_counter() - SCRIPT_START)  # the interpreter's start before this script
    timers = Timers()
    try:
        instrument(timers, args.config)
        from vastmat.apis import run_tracking_test
        with tempfile.TemporaryDirectory() as tmp:
            metrics = run_tracking_test(args.config, args.data_root, args.det_root, args.work_dir or tmp,
                                        workers=args.workers)
            end = time.perf_counter()
    finally:
        timers.restore()
    peak_end = peak_rss_mb()
    children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if timers.first_item is None:
        raise RuntimeError('the test loop read no dataset item')
    wall = start_age + end - SCRIPT_START
    seconds = dict(timers.seconds)
    seconds['start-up'] = start_age + timers.first_item - SCRIPT_START
    seconds['other'] = end - timers.first_item - sum(seconds[p] for p in ('data', 'tracking', 'writing', 'scoring'))
    alone, frames = tracker_alone(args.config, args.data_root, args.det_root, args.repeats)
    outside = seconds['data'] + seconds['writing'] + seconds['other']
    result = dict(config=args.config, data_root=args.data_root, det_root=args.det_root, frames=frames,
                  wall_s=wall, seconds=seconds, tracker_alone_s=alone,
                  outside_ms_per_frame=1000 * outside / frames,
                  peak_rss_mb=dict(at_first_item=timers.rss_at_first_item, end=peak_end,
                                   scoring_processes=children_peak),
                  HOTA=metrics.get('vastmat/HOTA'),
                  goals=dict(wall_s=GOAL_WALL_S, outside_ms_per_frame=GOAL_OTHER_MS_PER_FRAME,
                             wall_met=wall < GOAL_WALL_S,
                             outside_met=1000 * outside / frames < GOAL_OTHER_MS_PER_FRAME))
    print_split(result)
    if args.out:
        from vastmat.utils.io import write_json_atomic
        write_json_atomic(result, args.out)
    return result


def print_split(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table
    frames, wall = result['frames'], result['wall_s']
    table = Table(title=f'tools/test.py on {result["frames"]} frames: {wall:.2f} s wall')
    for column in ('part', 'seconds', 'share', 'ms / frame'):
        table.add_column(column, justify='left' if column == 'part' else 'right')
    for part in PARTS:
        value = result['seconds'][part]
        table.add_row(part, f'{value:.2f}', f'{value / wall:.0%}', f'{1000 * value / frames:.3f}')
    table.add_row('tracker alone (same detections)', f'{result["tracker_alone_s"]:.2f}', '',
                  f'{1000 * result["tracker_alone_s"] / frames:.3f}')
    console = Console()
    console.print(table)
    rss = result['peak_rss_mb']
    goals = result['goals']
    console.print(f'data + writing + other: {result["outside_ms_per_frame"]:.3f} ms per frame (goal < '
                  f'{goals["outside_ms_per_frame"]} ms: {"met" if goals["outside_met"] else "NOT met"}); wall '
                  f'{wall:.2f} s (goal < {goals["wall_s"]:.0f} s: {"met" if goals["wall_met"] else "NOT met"})')
    console.print(f'peak resident set: {rss["at_first_item"]:.0f} MB after start-up (imports, runner), '
                  f'{rss["end"]:.0f} MB at the end; scoring processes {rss["scoring_processes"]:.0f} MB')


if __name__ == '__main__':
    main()
