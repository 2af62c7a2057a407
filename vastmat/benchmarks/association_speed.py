"""The association benchmark: frames per second of tracker updates alone on cached detections, VastMAT's trackers per
matcher beside mmdet's ByteTracker (and BoxMOT's ByteTrack and the SORT plugin when installed), and beside the
trackers of other projects installed in another Python environment (``peer_python``: the official ByteTrack code
from a checkout, Roboflow ``trackers``), timed there by :mod:`.peer_trackers` in the same run.

Only the runner's ``run`` is timed: each runner's ``prepare`` converts a video's detections to its inputs before.
Every runner runs every video ``repeats`` times, interleaved video by video so that drift of the machine's speed
affects all alike; per video the best time counts. The peers run in rounds of their own between ours (ours, the
peers, ours, the peers, ...), so that a drift of the machine's speed during the run reaches both sides of a ratio.
"""
from __future__ import annotations

import copy
import importlib.util
import inspect
import json
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from rich.table import Table
from tqdm import tqdm

from vastmat.datasets.detections import VideoDetections, detection_file
from vastmat.datasets.sequences import list_sequences, load_sequence
from vastmat.structures.tracking import TrackingFrame, TrackOutput
from vastmat.utils.errors import UserInputError

DEFAULT_MATCHERS = ('iou', 'diou', 'cda_fixed', 'cda_adaptive')
DEFAULT_TRACKERS = ('bytetrack', 'tracktrack')
MMDET = 'mmdet ByteTracker'
IOU_BASELINE = 'BYTETracker (iou)'
# the runners every other one is compared with, where they ran: (name, column of the table)
REFERENCES = ((MMDET, 'x mmdet'), ('official ByteTrack', 'x official ByteTrack'),
              ('Roboflow ByteTrackTracker', 'x Roboflow ByteTrack'))
# each port's official code, timed by peer_trackers where given: a column of its own
OFFICIAL = {'BYTETracker': 'official ByteTrack', 'JDETracker': 'official JDETracker',
            'TrackTrackTracker': 'official TrackTrack'}
PEER_SCRIPT = Path(__file__).with_name('peer_trackers.py')

Prepare = Callable[[dict], Any]
Run = Callable[[dict, Any], list]
Runner = tuple[Run, Prepare | None]  # (run a video's prepared inputs, prepare a video's inputs or None: the raw video)


def load_videos(data_root: str, det_root: str | None, limit: int | None) -> list[dict]:
    """Per video (the first ``limit``): name, frame rate, image size and, per frame, (boxes xyxy, scores)."""
    videos = []
    for name in list_sequences(data_root)[:limit]:
        sequence = load_sequence(data_root, name, with_gt=False)
        dets = VideoDetections(detection_file(det_root or data_root, name), sequence.length)
        frames = [(d.bboxes, d.scores) for d in map(dets.get, range(1, sequence.length + 1))]
        videos.append(dict(name=name, frame_rate=float(sequence.frame_rate or 30), image_size=sequence.image_size,
                           frames=frames))
    if not videos:
        raise UserInputError(f'{data_root}: no videos (a MOTChallenge split folder or a VastMAT root)')
    return videos


def vastmat_prepare(video: dict) -> list[TrackingFrame]:
    """A video's frames as VastMAT tracker inputs."""
    return [TrackingFrame.from_arrays(boxes, scores, i + 1, video_name=video['name'], frame_rate=video['frame_rate'])
            for i, (boxes, scores) in enumerate(video['frames'])]


def random_features(video: dict, dim: int) -> list[np.ndarray]:
    """``dim`` random unit appearance features per detection of each frame (seeded per video)."""
    rng = np.random.default_rng(len(video['name']))
    features = []
    for _, scores in video['frames']:
        frame_features = rng.standard_normal((len(scores), dim))
        frame_features /= np.linalg.norm(frame_features, axis=1, keepdims=True)
        features.append(frame_features)
    return features


def features_prepare(dim: int) -> Prepare:
    """Like :func:`vastmat_prepare`, with :func:`random_features` (0: none)."""
    def prepare(video: dict) -> list[TrackingFrame]:
        features = random_features(video, dim) if dim else [None] * len(video['frames'])
        return [TrackingFrame.from_arrays(boxes, scores, i + 1, video_name=video['name'],
                                          frame_rate=video['frame_rate'], features=frame_features,
                                          image_size=video['image_size'])
                for i, ((boxes, scores), frame_features) in enumerate(zip(video['frames'], features))]
    return prepare


def speed_trackers() -> dict[str, tuple[str, type]]:
    """The trackers of this benchmark, from the registry: ``{experiment_name: (registered type, class)}`` of every
    class declaring ``speed_options`` (its keys beside the defaults; ``speed_features``: it gets random appearance
    features)."""
    from vastmat.registry import MODELS
    MODELS.get('BYTETracker')  # the first lookup loads the plugins (vastmat.plugins entry points)
    return {cls.experiment_name: (name, cls) for name, cls in MODELS.module_dict.items()
            if inspect.isclass(cls) and getattr(cls, 'experiment_name', None)
            and getattr(cls, 'speed_options', None) is not None}


def check_trackers(names: Sequence[str], checkpoint: str | None) -> dict[str, tuple[str, type]]:
    """:func:`speed_trackers` after checking that each of ``names`` is one and has the motion checkpoint it needs."""
    trackers = speed_trackers()
    unknown = [t for t in names if t not in trackers]
    if unknown:
        raise UserInputError(f'--trackers {" ".join(unknown)}: not in this benchmark (known: {", ".join(trackers)})')
    for name in names:
        if trackers[name][1].motion_checkpoint_key and not checkpoint:
            raise UserInputError(f'--trackers {name} needs --d2mp-checkpoint (a trained D2MP: configs/d2mp/)')
    return trackers


def tracker_config(type_name: str, cls: type, matcher: str, checkpoint: str | None = None) -> dict:
    """The tracker's benchmark config with ``matcher`` swapped in (and a trained motion model's ``checkpoint``)."""
    from mmengine.config import Config

    from vastmat.apis import swap_matcher
    cfg = Config(dict(model=dict(tracker=dict(type=type_name, **copy.deepcopy(cls.speed_options)))))
    if cls.motion_checkpoint_key and checkpoint:
        cfg.merge_from_dict({f'model.tracker.{cls.motion_checkpoint_key}': checkpoint})
    return swap_matcher(cfg, matcher).model.tracker.to_dict()


def vastmat_runner(tracker: dict | Any, prepare: Prepare = vastmat_prepare) -> Runner:
    """Runs a VastMAT tracker (a config, or a tracker object) over a video's prepared frames."""
    if isinstance(tracker, dict):
        from vastmat.registry import MODELS
        tracker = MODELS.build(tracker)

    def run(video: dict, frames: list[TrackingFrame]) -> list[TrackOutput]:
        tracker.reset()
        return [tracker.update(frame) for frame in frames]
    return run, prepare


def mmdet_prepare(video: dict) -> list:
    """A video's frames as mmdet ``DetDataSample``s."""
    import torch
    from mmdet.structures import DetDataSample
    from mmengine.structures import InstanceData
    samples = []
    for i, (boxes, scores) in enumerate(video['frames']):
        sample = DetDataSample(metainfo=dict(frame_id=i))
        sample.pred_instances = InstanceData(bboxes=torch.from_numpy(boxes).float(),
                                             scores=torch.from_numpy(scores).float(),
                                             labels=torch.zeros(len(scores), dtype=torch.long))
        samples.append(sample)
    return samples


def mmdet_runner() -> Runner:
    """mmdet's ByteTracker with its configs/bytetrack settings (reference/trackers.md 1)."""
    from mmdet.registry import MODELS as MMDET_MODELS
    from mmdet.utils import register_all_modules
    register_all_modules(init_default_scope=False)
    tracker = MMDET_MODELS.build(dict(
        type='ByteTracker', motion=dict(type='KalmanFilter'), obj_score_thrs=dict(high=0.6, low=0.1),
        init_track_thr=0.7, weight_iou_with_det_scores=True, match_iou_thrs=dict(high=0.1, low=0.5, tentative=0.3),
        num_frames_retain=30))

    def run(video: dict, samples: list) -> list:
        tracker.reset()
        return [tracker.track(sample) for sample in samples]
    return run, mmdet_prepare


def boxmot_runner() -> Runner | None:
    """BoxMOT's ByteTrack with the official defaults, or None where BoxMOT is not installed."""
    if importlib.util.find_spec('boxmot') is None:
        return None
    from boxmot import ByteTrack  # optional (checked with BoxMOT 25)

    def run(video: dict, prepared: None) -> list:
        # the official ByteTrack defaults (BoxMOT's own are 0.45 / 0.8 / 25)
        tracker = ByteTrack(min_conf=0.1, track_thresh=0.6, match_thresh=0.9, track_buffer=30,
                            frame_rate=30)  # lost tracks kept 30 frames, as the official evaluator
        image = np.zeros((8, 8, 3), np.uint8)
        return [tracker.update(np.column_stack([b, s, np.zeros(len(s))]), image) for b, s in video['frames']]
    return run, None


def speed_runners(tracker_names: Sequence[str], matchers: Sequence[str], feature_dim: int = 128,
                  checkpoint: str | None = None, log: Callable[[str], Any] = print) -> dict[str, Runner]:
    """The benchmark's runners by name: each tracker of ``tracker_names`` per matcher, mmdet's ByteTracker, and the
    SORT plugin and BoxMOT's ByteTrack where installed."""
    trackers = check_trackers(tracker_names, checkpoint)
    runners: dict[str, Runner] = {}
    for matcher in matchers:
        for name in tracker_names:
            type_name, cls = trackers[name]
            prepare = features_prepare(feature_dim) if cls.speed_features else vastmat_prepare
            runners[f'{type_name} ({matcher})'] = vastmat_runner(tracker_config(type_name, cls, matcher, checkpoint),
                                                                 prepare)
    runners[MMDET] = mmdet_runner()
    from vastmat.registry import MODELS
    if MODELS.get('SORT') is not None:  # the SORT plugin (plugins/vastmat-sort), when installed
        runners['SORT (plugin)'] = vastmat_runner(dict(type='SORT'))
    else:
        log('SORT not timed: its plugin is not installed (pip install -e plugins/vastmat-sort)')
    boxmot = boxmot_runner()
    if boxmot is not None:
        runners['BoxMOT ByteTrack'] = boxmot
    return runners


def time_runners(runners: dict[str, Runner], videos: list[dict], repeats: int,
                 after_round: Callable[[], Any] | None = None) -> tuple[dict[str, float], dict[str, list]]:
    """Each runner's total over ``videos`` of its best of ``repeats`` per video (the runners interleaved video by
    video), and its outputs (``{name: [per video: per frame output]}``); ``after_round`` is called after each
    round of ``repeats`` (the peers' rounds)."""
    if repeats < 1:
        raise UserInputError(f'--repeats {repeats}: at least 1')
    prepared = {name: [prep(v) if prep else None for v in videos] for name, (_, prep) in runners.items()}
    best = {name: [float('inf')] * len(videos) for name in runners}
    outputs: dict[str, list] = {name: [None] * len(videos) for name in runners}
    for _ in tqdm(range(repeats), desc='repeats'):
        for v, video in enumerate(videos):
            for name, (run, _) in runners.items():
                start = time.perf_counter()
                outputs[name][v] = run(video, prepared[name][v])
                best[name][v] = min(best[name][v], time.perf_counter() - start)
        if after_round is not None:
            after_round()
    return {name: sum(times) for name, times in best.items()}, outputs


def write_peer_videos(videos: list[dict], path: str | Path, feature_dim: int = 0) -> None:
    """The loaded videos as one ``.npz`` that :mod:`.peer_trackers` reads (numpy only, any numpy version), with the
    benchmark's :func:`random_features` where ``feature_dim`` is given."""
    arrays = dict(names=np.array([v['name'] for v in videos]))
    for v, video in enumerate(videos):
        boxes, scores = zip(*video['frames']) if video['frames'] else ((), ())
        arrays[f'counts_{v}'] = np.array([len(s) for s in scores], np.int64)
        arrays[f'boxes_{v}'] = np.concatenate(boxes).reshape(-1, 4) if boxes else np.zeros((0, 4))
        arrays[f'scores_{v}'] = np.concatenate(scores) if scores else np.zeros(0)
        arrays[f'frame_rate_{v}'] = np.array(video.get('frame_rate', 30.0))
        if feature_dim:
            features = random_features(video, feature_dim)
            arrays[f'features_{v}'] = np.concatenate(features) if features else np.zeros((0, feature_dim))
    np.savez(path, **arrays)


def run_peer_script(peer_python: str, arguments: list[str], out: Path) -> dict:
    """Run a peer script (``arguments[0]``, by its path) under ``peer_python`` and return the JSON it wrote to
    ``out``; a failure is a :class:`UserInputError` with the end of its stderr."""
    try:
        done = subprocess.run([peer_python, *arguments], capture_output=True, text=True)
    except OSError as error:
        raise UserInputError(f'--peer-python {peer_python}: {error}') from error
    if done.returncode:
        raise UserInputError(f'--peer-python {peer_python}: {Path(arguments[0]).name} ended with exit '
                             f'{done.returncode}:\n{done.stderr[-3000:]}')
    return json.loads(Path(out).read_text())


@contextmanager
def peer_rounds(peer_python: str, videos: list[dict], official_bytetrack: str | None = None,
                official_fairmot: str | None = None, feature_dim: int = 128, official_tracktrack: str | None = None
                ) -> Iterator[Callable[[int], dict[str, list[float]]]]:
    """A function that times the peers of :mod:`.peer_trackers` under ``peer_python`` on ``videos`` (written once)
    for a number of rounds and returns each peer's best time per video (the official FairMOT and TrackTrack
    trackers with the benchmark's random features)."""
    with tempfile.TemporaryDirectory() as tmp:
        videos_file, out = Path(tmp) / 'videos.npz', Path(tmp) / 'times.json'
        write_peer_videos(videos, videos_file, feature_dim if official_fairmot or official_tracktrack else 0)
        command = [str(PEER_SCRIPT), '--videos', str(videos_file), '--out', str(out)]
        if official_bytetrack:
            command += ['--official-bytetrack', str(official_bytetrack)]
        if official_fairmot:
            command += ['--official-fairmot', str(official_fairmot)]
        if official_tracktrack:
            command += ['--official-tracktrack', str(official_tracktrack)]

        def run_rounds(repeats: int) -> dict[str, list[float]]:
            return run_peer_script(peer_python, command + ['--repeats', str(repeats)], out)['video_seconds']
        yield run_rounds


def peer_times(peer_python: str, videos: list[dict], repeats: int, official_bytetrack: str | None = None,
               official_fairmot: str | None = None, feature_dim: int = 128, official_tracktrack: str | None = None,
               log: Callable[[str], Any] = print) -> dict[str, float]:
    """Seconds per peer tracker (best of ``repeats`` per video, summed), :func:`peer_rounds` in one call."""
    with peer_rounds(peer_python, videos, official_bytetrack, official_fairmot, feature_dim,
                     official_tracktrack) as run_rounds:
        log(f'timing the peer trackers under {peer_python}')
        per_video = run_rounds(repeats)
    return peer_seconds(per_video, peer_python, log)


def peer_seconds(per_video: dict[str, list[float]], peer_python: str,
                 log: Callable[[str], Any] = print) -> dict[str, float]:
    """Each peer's per-video best times summed; says so where ``peer_python`` found no peer tracker."""
    if not per_video:
        log(f'{peer_python}: no peer tracker found (no --official-* checkout, Roboflow trackers not installed)')
    return {name: sum(times) for name, times in per_video.items()}


def identical_tracks(a: list[list[TrackOutput]], b: list[list[TrackOutput]]) -> bool:
    """Whether two runs' outputs (per video, per frame) have the same ids and boxes (to 1e-6) in every frame."""
    return len(a) == len(b) and all(
        len(va) == len(vb) and all(np.array_equal(x.ids, y.ids) and np.allclose(x.bboxes, y.bboxes, atol=1e-6)
                                   for x, y in zip(va, vb))
        for va, vb in zip(a, b))


def video_counts(videos: list[dict]) -> dict[str, int]:
    """``videos``, ``frames`` and ``detections`` of the loaded videos."""
    return dict(videos=len(videos), frames=sum(len(v['frames']) for v in videos),
                detections=sum(len(s) for v in videos for _, s in v['frames']))


def speed_results(videos: list[dict], best: dict[str, float]) -> dict:
    """The benchmark's results: the counts, per runner seconds, frames/s and its ratio to each reference runner
    that ran (mmdet's ByteTracker, the official ByteTrack, Roboflow's ByteTrack: ``ratios``), and BYTETracker's
    time per matcher relative to IoU."""
    results = video_counts(videos)
    frames = results['frames']
    references = [name for name, _ in REFERENCES if name in best]
    results['trackers'] = {name: dict(seconds=t, fps=frames / t, ratios={r: best[r] / t for r in references})
                           for name, t in best.items()}
    for name, row in results['trackers'].items():
        official = OFFICIAL.get(name.split(' (')[0])
        if official in best:
            row['ratio_to_official'] = best[official] / row['seconds']
    if IOU_BASELINE in best:
        results['overhead_vs_iou'] = {name: best[name] / best[IOU_BASELINE] - 1 for name in best
                                      if name.startswith('BYTETracker (')}
    return results


def association_speed(data_root: str, det_root: str | None = None, videos: int | None = None, repeats: int = 3,
                      matchers: Sequence[str] = DEFAULT_MATCHERS, trackers: Sequence[str] = DEFAULT_TRACKERS,
                      feature_dim: int = 128, checkpoint: str | None = None, peer_python: str | None = None,
                      official_bytetrack: str | None = None, official_fairmot: str | None = None,
                      official_tracktrack: str | None = None, log: Callable[[str], Any] = print) -> dict:
    """The whole benchmark (see the module's docstring): :func:`speed_results` of every runner of
    :func:`speed_runners` on the first ``videos`` videos of ``data_root``, and of the peers of :func:`peer_times`
    under ``peer_python``."""
    if (official_bytetrack or official_fairmot or official_tracktrack) and not peer_python:
        raise UserInputError('--official-* checkouts need --peer-python (the environment the official code runs in)')
    runners = speed_runners(trackers, matchers, feature_dim, checkpoint, log)
    loaded = load_videos(data_root, det_root, videos)
    if not peer_python:
        best, _ = time_runners(runners, loaded, repeats)
        return speed_results(loaded, best)
    peer_best: dict[str, list[float]] = {}
    with peer_rounds(peer_python, loaded, official_bytetrack, official_fairmot, feature_dim,
                     official_tracktrack) as run_rounds:
        def peer_round() -> None:
            for name, times in run_rounds(1).items():
                peer_best[name] = [min(a, b) for a, b in zip(peer_best.get(name, times), times)]
        log(f'timing the peer trackers under {peer_python}: a round of theirs after each round of ours')
        best, _ = time_runners(runners, loaded, repeats, after_round=peer_round)
    best.update(peer_seconds(peer_best, peer_python, log))
    return speed_results(loaded, best)


def speed_table(results: dict) -> Table:
    """The results as a table: seconds, frames/s, the ratio to each reference runner (how many times its speed)
    and time relative to IoU."""
    table = Table(title=f'Association speed: {results["videos"]} videos, {results["frames"]} frames, '
                        f'{results["detections"]} detections')
    references = [(name, column) for name, column in REFERENCES if name in results['trackers']]
    with_official = any('ratio_to_official' in row for row in results['trackers'].values())
    for column in ('tracker', 'seconds', 'frames/s', *(c for _, c in references),
                   *(('x its official code', ) if with_official else ()), 'time vs IoU'):
        table.add_column(column, justify='left' if column == 'tracker' else 'right')
    for name, row in results['trackers'].items():
        overhead = results.get('overhead_vs_iou', {}).get(name)
        official = row.get('ratio_to_official')
        table.add_row(name, f'{row["seconds"]:.3f}', f'{row["fps"]:.0f}',
                      *(f'{row["ratios"][r]:.2f}' for r, _ in references),
                      *((f'{official:.2f}' if official else '', ) if with_official else ()),
                      '' if overhead is None else f'{overhead:+.1%}')
    return table


def add_video_arguments(parser: Any) -> None:
    """The flags of the speed benchmarks (association_speed, byte_tracker_reference): the videos, repeats, output."""
    parser.add_argument('--data-root', required=True)
    parser.add_argument('--det-root', help='folder of <video>.txt or MOTChallenge split with <video>/det/det.txt')
    parser.add_argument('--videos', type=int, help='only the first N videos')
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--out', help='JSON file for the results')
