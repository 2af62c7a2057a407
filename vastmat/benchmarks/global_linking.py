"""What global linking adds, measured (``tools/benchmark/global_linking.py``).

Quality: on AnimalTrack-10fps-sim at 10 FPS and at 5 FPS (every other frame, :mod:`vastmat.datasets.strided_copy`),
ByteTrack, TrackTrack and the SORT plugin, each with its official settings (without and with the linker of its
linked preset), its tuned preset and its linked preset (``*_tuned-linked-*.py``: tuned by ``tools/tune.py`` on the
tuning half, docs/linking.md), beside the oracle association of the same detections. The videos split in
two halves by name (``sorted(videos)[0::2]`` tunes, ``[1::2]`` reports, as docs/tuning.md); every number here is
on the report half. Per video: HOTA with and without linking (the worst change), the identities against the truth's.

Speed: simulated videos (``simulated_tracks``: animals moving for ``frames`` frames, their tracks broken into
tracklets by hidden spells) linked on one core, the seconds against the number of tracklets, for both solvers.
"""
from __future__ import annotations

import os
import os.path as osp
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .shipped_configs import REPO

METRICS = ('HOTA', 'DetA', 'AssA', 'IDF1', 'IDSW')


@dataclass(frozen=True)
class LinkedTracker:
    """A tracker of the benchmark: its official config (with the options that make it run on the cached
    detections alone), its tuned preset and the linked variant of that preset."""

    name: str
    official: str
    tuned: str
    linked: str
    official_options: dict = field(default_factory=dict)


def _configs(folder: str, stem: str) -> tuple[str, str, str]:
    return tuple(osp.join(REPO, folder, f'{stem}{suffix}.py') for suffix in (
        '', '_tuned-animaltrack-10fps-sim', '_tuned-linked-animaltrack-10fps-sim'))


TRACKERS = (
    LinkedTracker('ByteTrack', *_configs('configs/bytetrack', 'bytetrack_cached-dets')),
    # the cached detections carry no nms95 set and no camera warps; AFLink is the linker's to replace
    LinkedTracker('TrackTrack', *_configs('configs/tracktrack', 'tracktrack_cached-dets'),
                  official_options={'model.tracker.deleted_dets': None, 'model.tracker.camera_motion': None,
                                    'model.post_processors': []}),
    LinkedTracker('SORT', *_configs('plugins/vastmat-sort/configs', 'sort_cached-dets')),
)


def halves(videos: list[str]) -> tuple[list[str], list[str]]:
    """The tuning half (``sorted(videos)[0::2]``) and the report half (``[1::2]``)."""
    ordered = sorted(videos)
    return ordered[0::2], ordered[1::2]


def linker_of(config: str) -> dict:
    """The ``GlobalLinker`` entry of a linked preset's post-processors."""
    from mmengine.config import Config

    from vastmat.engine.linking_options import linker_index
    processors = Config.fromfile(config).model.get('post_processors')
    index = linker_index(processors)
    if index is None:
        raise ValueError(f'{config}: no GlobalLinker in model.post_processors')
    return dict(processors[index])


def truth_counts(data_root: str, videos: list[str]) -> dict[str, dict[str, int]]:
    """Per video: the truth's identities, the most present in one frame, and whether every animal is there from
    the first frame to the last (the animals stay in view)."""
    from vastmat.datasets.sequences import load_sequence
    out = {}
    for video in videos:
        sequence = load_sequence(data_root, video)
        gt = sequence.gt.select(sequence.gt.valid == 1)
        ids = np.unique(gt.ids)
        spans = [(gt.frames[gt.ids == i].min(), gt.frames[gt.ids == i].max()) for i in ids]
        out[video] = dict(identities=len(ids), most_in_a_frame=int(np.bincount(gt.frames).max()) if len(gt) else 0,
                          stay_in_view=all(a == 1 and b == sequence.length for a, b in spans))
    return out


def _score_folder(data_root: str, folder: str, videos: list[str]) -> dict:
    from vastmat.evaluation.mot_eval import evaluate, sequence_specs
    specs, _ = sequence_specs(data_root, folder, videos)
    return evaluate(specs)


def _score(data_root: str, tracks: dict[str, np.ndarray], folder: str, videos: list[str]) -> dict:
    """Write ``tracks`` as ``folder/<video>.txt`` and score them."""
    from vastmat.apis import write_results_folder
    write_results_folder(tracks, folder)
    return _score_folder(data_root, folder, videos)


def _summary(metrics: dict, tracks: dict[str, np.ndarray]) -> dict:
    return dict({m: metrics['COMBINED'][m] for m in METRICS},
                per_video={v: metrics[v]['HOTA'] for v in tracks},
                identities={v: int(len(np.unique(rows[:, 1]))) for v, rows in tracks.items()})


def score_tracker(tracker: LinkedTracker, data_root: str, det_root: str, videos: list[str], work_dir: str,
                  counts: dict[str, int] | None = None) -> dict:
    """One tracker at one frame rate: ``{variant: summary}`` for ``official``, ``official+linker`` (the official
    tracker's tracks and the linked preset's linker), ``tuned`` (the tuned preset), ``linked`` (the linked preset:
    its tracker, then its linker), ``linker off`` (the linked preset's tracker alone) and, with ``counts`` (the
    truth's), ``linked+N``: the linked preset told each video's number of animals. A tracker runs once; linking
    runs on its rows."""
    from vastmat.apis import init_model, track_cached
    from vastmat.apis.linking import build_linker
    linker_cfg = linker_of(tracker.linked)
    # the linked preset's tracker alone: its post-processors (the linker) left out
    runs = (('official', tracker.official, tracker.official_options, {'official+linker': dict(linker_cfg)}),
            ('tuned', tracker.tuned, {}, {}),
            ('linker off', tracker.linked, {'model.post_processors': []},
             {'linked': dict(linker_cfg), **({'linked+N': dict(linker_cfg, num_animals=counts)} if counts else {})}))
    out = {}
    for variant, config, options, linkers in runs:
        tracks = track_cached(init_model(config, cfg_options=options or None, detector=False), data_root, det_root,
                              videos)
        out[variant] = _summary(_score(data_root, tracks, osp.join(work_dir, variant.replace(' ', '_')), videos),
                                tracks)
        for name, cfg in linkers.items():
            linker = build_linker(cfg)
            linked = {v: linker(rows, video_name=v) for v, rows in tracks.items()}
            out[name] = _summary(_score(data_root, linked, osp.join(work_dir, name), videos), linked)
            out[name]['forced_out_detections'] = {v: r.forced_out_detections for v, r in linker.reports.items()}
    return out


def registered(tracker: LinkedTracker) -> bool:
    """Whether the tracker's class is registered (the SORT plugin must be installed: its entry point)."""
    from mmengine.config import Config

    from vastmat.registry import MODELS
    return MODELS.get(Config.fromfile(tracker.official).model.tracker.type) is not None


def quality_benchmark(data_root: str, det_root: str, work_dir: str, strides: tuple[int, ...] = (1, 2),
                      trackers: tuple[LinkedTracker, ...] = TRACKERS, videos: list[str] | None = None,
                      log: Callable[[str], Any] = print) -> dict:
    """The quality table's numbers: ``{frame rate label: dict(oracle, trackers={name: score_tracker(...)},
    truth)}`` on the report half (or the given ``videos`` of it), at each stride of the 10 FPS data."""
    from vastmat.apis import video_list
    from vastmat.datasets.strided_copy import write_strided_copy
    from vastmat.evaluation.oracle_association import write_oracle_folder
    _, report = halves(video_list(data_root))
    if videos:
        unknown = sorted(set(videos) - set(report))
        if unknown:
            raise ValueError(f'videos {unknown} are not in the report half ({", ".join(report)})')
        report = [v for v in report if v in videos]
    out = {}
    for stride in strides:
        label = f'{10 // stride} FPS'
        gt_root, dets = data_root, det_root
        if stride > 1:
            gt_root, dets = write_strided_copy(data_root, det_root, stride, osp.join(work_dir, f'stride{stride}'),
                                               report)
        run_dir = osp.join(work_dir, label.replace(' ', ''))
        truth = truth_counts(gt_root, report)
        oracle_dir = write_oracle_folder(gt_root, dets, report, osp.join(run_dir, 'oracle'))
        oracle = _score_folder(gt_root, oracle_dir, report)
        entry = dict(oracle={m: oracle['COMBINED'][m] for m in METRICS}, truth=truth, trackers={})
        for tracker in trackers:
            if not registered(tracker):
                log(f'{tracker.name}: not registered (pip install plugins/vastmat-sort), left out')
                continue
            start = time.perf_counter()
            entry['trackers'][tracker.name] = score_tracker(
                tracker, gt_root, dets, report, osp.join(run_dir, tracker.name),
                {v: t['identities'] for v, t in truth.items()})
            log(f'{label} {tracker.name}: {time.perf_counter() - start:.0f} s')
        out[label] = entry
    return out


def gap_closed(entry: dict) -> dict:
    """At one frame rate: the best tuned preset without linking, the best linked preset, the oracle, the share of
    the gap the linked preset closes, and the video that lost most to linking (the best linked preset against its
    own tracker with the linker off)."""
    unlinked = {t: r['tuned'] for t, r in entry['trackers'].items()}
    linked = {t: r['linked'] for t, r in entry['trackers'].items()}
    best = max(unlinked, key=lambda k: unlinked[k]['HOTA'])
    best_linked = max(linked, key=lambda k: linked[k]['HOTA'])
    own = entry['trackers'][best_linked]['linker off']['per_video']
    change = {v: linked[best_linked]['per_video'][v] - own[v] for v in own}
    worst = min(change, key=change.get)
    oracle = entry['oracle']['HOTA']
    return dict(best=f'{best} tuned', best_HOTA=unlinked[best]['HOTA'], best_linked=f'{best_linked} linked',
                best_linked_HOTA=linked[best_linked]['HOTA'], oracle_HOTA=oracle,
                gap_closed=(linked[best_linked]['HOTA'] - unlinked[best]['HOTA'])
                / max(oracle - unlinked[best]['HOTA'], 1e-9),
                worst_video=worst, worst_change=change[worst],
                videos_losing_over_1=sorted(v for v, c in change.items() if c < -0.01))


# ------------------------------------------------------------------------------------------------------ speed
def simulated_tracks(frames: int, animals: int, mean_length: int, max_hidden: int, seed: int = 0) -> np.ndarray:
    """Tracker-like rows of ``animals`` animals moving for ``frames`` frames (a smooth random walk in a 2000 px
    square), each animal's track broken every ``mean_length / 2 .. 3 mean_length / 2`` frames by a hidden spell of
    1 to ``max_hidden`` frames, after which it comes back under a new id."""
    rng = np.random.default_rng(seed)
    rows, next_id = [], 1
    for _ in range(animals):
        position, velocity, size = rng.uniform(100, 1900, 2), rng.normal(0, 3, 2), rng.uniform(40, 120)
        frame, track = 1, next_id
        next_id += 1
        breaks_at = frame + rng.integers(mean_length // 2, mean_length * 3 // 2 + 1)
        while frame <= frames:
            if frame == breaks_at:
                hidden = int(rng.integers(1, max_hidden + 1))
                for _ in range(hidden):
                    velocity = 0.95 * velocity + rng.normal(0, 0.5, 2)
                    position = np.clip(position + velocity, 0, 2000)
                frame += hidden
                track, next_id = next_id, next_id + 1
                breaks_at = frame + rng.integers(mean_length // 2, mean_length * 3 // 2 + 1)
                continue
            velocity = 0.95 * velocity + rng.normal(0, 0.5, 2)
            position = np.clip(position + velocity, 0, 2000)
            rows.append([frame, track, *(position - size / 2), *(position + size / 2), 0.9])
            frame += 1
    rows = np.asarray(rows)
    return rows[np.lexsort((rows[:, 1], rows[:, 0]))]


def speed_benchmark(frames: int = 10_000, animals: int = 50, lengths: tuple[int, ...] = (400, 200, 100, 50),
                    repeats: int = 3, networkx_max_tracklets: int = 2500, one_core: bool = True,
                    log: Callable[[str], Any] = print) -> list[dict]:
    """Seconds to link one simulated video (best of ``repeats``, the spread beside it) against its number of
    tracklets, for the HiGHS solver without a count and with ``num_animals``, and networkx's network simplex up to
    ``networkx_max_tracklets`` tracklets (it is slower). ``one_core`` pins the process to one CPU."""
    if not (one_core and hasattr(os, 'sched_setaffinity')):
        return _time_linking(frames, animals, lengths, repeats, networkx_max_tracklets, log)
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cpus)})
    try:
        return _time_linking(frames, animals, lengths, repeats, networkx_max_tracklets, log)
    finally:  # the caller's process (a test worker, say) gets its cores back
        os.sched_setaffinity(0, cpus)


def _time_linking(frames: int, animals: int, lengths: tuple[int, ...], repeats: int, networkx_max_tracklets: int,
                  log: Callable[[str], Any]) -> list[dict]:
    from vastmat.models.post import GlobalLinker
    out = []
    for mean_length in lengths:
        rows = simulated_tracks(frames, animals, mean_length, max_hidden=15)
        for solver, options in (('highs', {}), ('highs', dict(num_animals=animals)), ('networkx', {})):
            linker = GlobalLinker(solver=solver, **options)
            tracklets = len(np.unique(rows[:, 1]))
            if solver == 'networkx' and tracklets > networkx_max_tracklets:
                continue
            seconds = []
            for _ in range(repeats):
                start = time.perf_counter()
                linked = linker(rows, 'simulated')
                seconds.append(time.perf_counter() - start)
            report = linker.reports['simulated']
            out.append(dict(frames=frames, animals=animals, rows=len(rows), tracklets=tracklets, solver=solver,
                            num_animals=options.get('num_animals'), seconds=min(seconds), seconds_max=max(seconds),
                            identities=report.identities, links=report.links, rows_out=len(linked)))
            log(f'{tracklets} tracklets, {solver}{" N=" + str(animals) if options else ""}: {min(seconds):.2f} s')
    return out
