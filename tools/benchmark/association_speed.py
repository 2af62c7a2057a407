#!/usr/bin/env python
"""Benchmark: frames per second of the association alone (tracker updates on cached detections), per tracker and
matcher, side by side with mmdet's ByteTracker on the same detections (and BoxMOT's ByteTrack when installed).

    python tools/benchmark/association_speed.py --data-root DIR [--det-root DIR] [--videos N] [--repeats R]
        [--matchers iou diou cda_fixed cda_adaptive] [--trackers bytetrack tracktrack [diffmot] [fairmot]]
        [--d2mp-checkpoint CKPT] [--feature-dim 128] [--out FILE.json]

TrackTrack, DiffMOT and FairMOT (JDETracker) get ``--feature-dim`` random unit appearance features per detection
(their appearance terms cost a matrix product; 0: none), TrackTrack runs without the NMS-0.95 set and camera
motion. DiffMOT's D2MP
runs on the CPU with the current torch threads; its time grows with the number of tracks it predicts (tracked and
lost ones), which depends on the weights: give a trained one with ``--d2mp-checkpoint`` (untrained weights scatter
the predictions, tracks get lost and the pool grows, so DiffMOT is timed only with a trained D2MP).

``--data-root`` is a MOTChallenge split folder (``<video>/seqinfo.ini``) or a VastMAT root; detections come from
``<video>/det/det.txt`` or ``--det-root``. AnimalTrack train at 10 FPS with simulated detections:

    python tools/data/simulate_detections.py --data-root ../shared/data/AnimalTrack/train --out /tmp/at10 --stride 3
    python tools/benchmark/association_speed.py --data-root /tmp/at10

Only ``tracker.update`` is timed: detections are read and converted (to mmdet's data samples for mmdet) before.
Each tracker runs every video ``--repeats`` times; the best total counts (interleaved, so drift of the machine's
speed affects all alike). Goals (issue 6): BYTETracker >= 5x mmdet's ByteTracker frames/s; CDA adds <= 5% to the
tracking time over IoU; the optimised BYTETracker's tracks identical to the line-by-line port
(tools/benchmark/byte_tracker_reference.py, checked here too).
"""
import argparse
import copy
import importlib.util
import os.path as osp
import sys
import time
from typing import Callable

import numpy as np
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from vastmat.datasets.detections import VideoDetections, detection_file
from vastmat.datasets.sequences import list_sequences, load_sequence
from vastmat.structures.tracking import TrackingFrame
from vastmat.utils.io import write_json_atomic

sys.path.insert(0, osp.dirname(osp.abspath(__file__)))  # byte_tracker_reference.py beside this script


def load_videos(data_root: str, det_root: str | None, limit: int | None) -> list[dict]:
    """Per video: frame rate, image size and, per frame, (boxes xyxy, scores)."""
    videos = []
    for name in list_sequences(data_root)[:limit]:
        sequence = load_sequence(data_root, name, with_gt=False)
        dets = VideoDetections(detection_file(det_root or data_root, name), sequence.length)
        frames = [(d.bboxes, d.scores) for d in map(dets.get, range(1, sequence.length + 1))]
        videos.append(dict(name=name, frame_rate=float(sequence.frame_rate or 30), image_size=sequence.image_size,
                           frames=frames))
    return videos


def vastmat_prepare(video: dict) -> list[TrackingFrame]:
    return [TrackingFrame.from_arrays(boxes, scores, i + 1, video_name=video['name'], frame_rate=video['frame_rate'])
            for i, (boxes, scores) in enumerate(video['frames'])]


def features_prepare(dim: int) -> Callable:
    """Like :func:`vastmat_prepare`, with ``dim`` random unit features per detection (seeded per video)."""
    def prepare(video: dict) -> list[TrackingFrame]:
        rng = np.random.default_rng(len(video['name']))
        frames = []
        for i, (boxes, scores) in enumerate(video['frames']):
            features = rng.standard_normal((len(scores), dim)) if dim else None
            if features is not None:
                features /= np.linalg.norm(features, axis=1, keepdims=True)
            frames.append(TrackingFrame.from_arrays(boxes, scores, i + 1, video_name=video['name'],
                                                    frame_rate=video['frame_rate'], features=features,
                                                    image_size=video['image_size']))
        return frames
    return prepare


def speed_trackers() -> dict[str, tuple[str, type]]:
    """The trackers of this benchmark, from the registry: ``{experiment_name: (registered type, class)}`` of every
    class declaring ``speed_options`` (its keys beside the defaults here; ``speed_features``: it gets random
    appearance features)."""
    import inspect

    from vastmat.registry import MODELS
    MODELS.get('BYTETracker')  # the first lookup loads the plugins (vastmat.plugins entry points)
    return {cls.experiment_name: (name, cls) for name, cls in MODELS.module_dict.items()
            if inspect.isclass(cls) and getattr(cls, 'experiment_name', None)
            and getattr(cls, 'speed_options', None) is not None}


def tracker_config(type_name: str, cls: type, matcher: str, checkpoint: str | None) -> dict:
    """The tracker's benchmark config with ``matcher`` swapped in (and a trained motion model's ``checkpoint``)."""
    from mmengine.config import Config

    from vastmat.apis import swap_matcher
    cfg = Config(dict(model=dict(tracker=dict(type=type_name, **copy.deepcopy(cls.speed_options)))))
    if cls.motion_checkpoint_key and checkpoint:
        cfg.merge_from_dict({f'model.tracker.{cls.motion_checkpoint_key}': checkpoint})
    return swap_matcher(cfg, matcher).model.tracker.to_dict()


def vastmat_runner(tracker: dict | object) -> tuple[Callable, Callable]:
    """Runs a VastMAT tracker (a config, or a tracker object) over a video's prepared frames."""
    if isinstance(tracker, dict):
        from vastmat.registry import MODELS
        tracker = MODELS.build(tracker)

    def run(video: dict, frames: list[TrackingFrame]) -> list:
        tracker.reset()
        return [tracker.update(frame) for frame in frames]
    return run, vastmat_prepare


def mmdet_prepare(video: dict) -> list:
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


def mmdet_runner() -> Callable:
    from mmdet.registry import MODELS as MMDET_MODELS
    from mmdet.utils import register_all_modules
    register_all_modules(init_default_scope=False)
    # mmdet's configs/bytetrack settings (reference/trackers.md 1)
    tracker = MMDET_MODELS.build(dict(
        type='ByteTracker', motion=dict(type='KalmanFilter'), obj_score_thrs=dict(high=0.6, low=0.1),
        init_track_thr=0.7, weight_iou_with_det_scores=True, match_iou_thrs=dict(high=0.1, low=0.5, tentative=0.3),
        num_frames_retain=30))

    def run(video: dict, samples: list) -> list:
        tracker.reset()
        return [tracker.track(sample) for sample in samples]
    return run


def boxmot_runner() -> Callable | None:
    if importlib.util.find_spec('boxmot') is None:
        return None
    from boxmot import ByteTrack  # optional (checked with BoxMOT 25)

    def run(video: dict, prepared) -> list:
        # the official ByteTrack defaults (BoxMOT's own are 0.45 / 0.8 / 25)
        tracker = ByteTrack(min_conf=0.1, track_thresh=0.6, match_thresh=0.9, track_buffer=30,
                            frame_rate=30)  # lost tracks kept 30 frames, as the official evaluator
        image = np.zeros((8, 8, 3), np.uint8)
        return [tracker.update(np.column_stack([b, s, np.zeros(len(s))]), image) for b, s in video['frames']]
    return run


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True)
    parser.add_argument('--det-root', help='folder of <video>.txt or MOTChallenge split with <video>/det/det.txt')
    parser.add_argument('--videos', type=int, help='only the first N videos')
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--matchers', nargs='+', default=['iou', 'diou', 'cda_fixed', 'cda_adaptive'],
                        help='names of configs/matchers/*.py')
    parser.add_argument('--trackers', nargs='+', default=['bytetrack', 'tracktrack'],
                        help='VastMAT trackers to time per matcher (those declaring speed_options: bytetrack, '
                        'tracktrack, diffmot, fairmot, ...; diffmot needs --d2mp-checkpoint)')
    parser.add_argument('--feature-dim', type=int, default=128,
                        help='random appearance features per detection for TrackTrack, DiffMOT and FairMOT '
                             '(0: none; FairMOT needs them)')
    parser.add_argument('--d2mp-checkpoint', help="DiffMOT's trained D2MP (default: untrained weights)")
    parser.add_argument('--out', help='JSON file for the results')
    args = parser.parse_args(argv)

    trackers = speed_trackers()
    unknown = [t for t in args.trackers if t not in trackers]
    if unknown:
        parser.error(f'--trackers {" ".join(unknown)}: not in this benchmark (known: {", ".join(trackers)})')
    for name in args.trackers:
        if trackers[name][1].motion_checkpoint_key and not args.d2mp_checkpoint:
            parser.error(f'--trackers {name} needs --d2mp-checkpoint (a trained D2MP: configs/d2mp/)')
    videos = load_videos(args.data_root, args.det_root, args.videos)
    num_frames = sum(len(v['frames']) for v in videos)
    num_dets = sum(len(s) for v in videos for _, s in v['frames'])
    runners: dict[str, tuple[Callable, Callable | None]] = {}
    for matcher in args.matchers:
        for name in args.trackers:
            type_name, cls = trackers[name]
            run, prepare = vastmat_runner(tracker_config(type_name, cls, matcher, args.d2mp_checkpoint))
            runners[f'{type_name} ({matcher})'] = (run, features_prepare(args.feature_dim) if cls.speed_features
                                                   else prepare)
    from byte_tracker_reference import ReferenceByteTracker
    runners['BYTETracker reference (per-track, official structure)'] = vastmat_runner(ReferenceByteTracker())
    runners['mmdet ByteTracker'] = (mmdet_runner(), mmdet_prepare)
    from vastmat.registry import MODELS
    if MODELS.get('SORT') is not None:  # the SORT plugin (plugins/vastmat-sort), when installed
        runners['SORT (plugin)'] = vastmat_runner(dict(type='SORT'))
    else:
        print('SORT not timed: its plugin is not installed (pip install -e plugins/vastmat-sort)')
    boxmot = boxmot_runner()
    if boxmot is not None:
        runners['BoxMOT ByteTrack'] = (boxmot, None)

    prepared = {name: [prep(v) if prep else None for v in videos] for name, (_, prep) in runners.items()}
    # per video, the best of the repeats; the trackers interleaved video by video so that drift of the machine's
    # speed affects them alike
    best = {name: [float('inf')] * len(videos) for name in runners}
    outputs: dict[str, list] = {name: [None] * len(videos) for name in runners}
    for _ in tqdm(range(args.repeats), desc='repeats'):
        for v, video in enumerate(videos):
            for name, (run, _) in runners.items():
                start = time.perf_counter()
                outputs[name][v] = run(video, prepared[name][v])
                best[name][v] = min(best[name][v], time.perf_counter() - start)
    best = {name: sum(times) for name, times in best.items()}

    fast, ref = outputs.get('BYTETracker (iou)'), outputs['BYTETracker reference (per-track, official structure)']
    identical = None
    if fast is not None:
        identical = all(np.array_equal(a.ids, b.ids) and np.allclose(a.bboxes, b.bboxes, atol=1e-6)
                        for va, vb in zip(fast, ref) for a, b in zip(va, vb))
    mmdet_fps = num_frames / best['mmdet ByteTracker']
    results = dict(videos=len(videos), frames=num_frames, detections=num_dets, identical_to_reference=identical,
                   trackers={name: dict(seconds=t, fps=num_frames / t, ratio_to_mmdet=num_frames / t / mmdet_fps)
                             for name, t in best.items()})
    if 'BYTETracker (iou)' in best:
        results['overhead_vs_iou'] = {name: best[name] / best['BYTETracker (iou)'] - 1 for name in best
                                      if name.startswith('BYTETracker (')}

    table = Table(title=f'Association speed: {len(videos)} videos, {num_frames} frames, {num_dets} detections')
    for column in ('tracker', 'seconds', 'frames/s', 'x mmdet ByteTracker', 'time vs IoU'):
        table.add_column(column, justify='left' if column == 'tracker' else 'right')
    for name, row in results['trackers'].items():
        overhead = results.get('overhead_vs_iou', {}).get(name)
        table.add_row(name, f'{row["seconds"]:.3f}', f'{row["fps"]:.0f}', f'{row["ratio_to_mmdet"]:.2f}',
                      '' if overhead is None else f'{overhead:+.1%}')
    console = Console()
    console.print(table)
    console.print(f'BYTETracker (iou) tracks identical to the per-track reference: {identical}')
    if args.out:
        write_json_atomic(results, args.out)
    return results


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
