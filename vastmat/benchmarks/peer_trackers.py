"""Times other projects' trackers on the association benchmark's videos, in the Python environment they are
installed in (a scratch environment outside this project): the official ByteTrack, FairMOT and TrackTrack trackers
from checkouts of their repositories, and Roboflow ``trackers``' ByteTrackTracker and SORTTracker where
``import trackers`` works.

    PEER_PYTHON vastmat/benchmarks/peer_trackers.py --videos VIDEOS.npz --out TIMES.json [--repeats R]
        [--official-bytetrack DIR] [--official-fairmot DIR] [--official-tracktrack DIR]

A script run by its path in that environment: it needs numpy only (and what each peer imports: the official code
needs lap, cython_bbox, scipy and opencv), never vastmat. ``vastmat.benchmarks.association_speed`` writes the videos
(``write_peer_videos``), runs it with the ``--peer-python`` of tools/benchmark/association_speed.py and reads the
times back. As there, only ``update`` is timed
(detections are converted to each peer's input before), each video ``--repeats`` times, the peers interleaved
video by video, and the best time per video counts.

The official ByteTrack is loaded from ``DIR/yolox/tracker`` (its ``BYTETracker`` with the official defaults
``track_thresh 0.6, track_buffer 30, match_thresh 0.9, mot20 False``, ``frame_rate=30`` as its evaluator), without
``yolox/__init__.py`` (which imports torch for the detector); nothing of it is copied. Its 2022 code uses
``np.float``, which numpy 1.24 removed: the alias is restored to ``float`` (the same dtype) before the import (and
``np.float_`` for TrackTrack); where torch is not installed, the torch modules the tracker files import but never
call on numpy input are empty modules.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np


def read_videos(path: str) -> list[dict]:
    """The videos written by ``write_peer_videos``: name, frame rate, per frame (boxes xyxy, scores) and, where
    written, per frame appearance features."""
    data = np.load(path)
    videos = []
    for v, name in enumerate(data['names']):
        counts = data[f'counts_{v}']
        bounds = np.concatenate([[0], np.cumsum(counts)])
        boxes, scores = data[f'boxes_{v}'], data[f'scores_{v}']
        rate = data[f'frame_rate_{v}'] if f'frame_rate_{v}' in data else 30.0
        video = dict(name=str(name), frame_rate=float(rate),
                     frames=[(boxes[a:b], scores[a:b]) for a, b in zip(bounds[:-1], bounds[1:])])
        if f'features_{v}' in data:
            features = data[f'features_{v}']
            video['features'] = [features[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        videos.append(video)
    return videos


def _package(name: str, folder: Path) -> None:
    """``name`` as a package of ``folder``'s modules without running its ``__init__.py`` (which imports the
    detector's dependencies) and ahead of an installed package of the same name."""
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    sys.modules[name] = package


def _empty_modules(**modules: dict) -> None:
    """Modules that the official tracker files import for their network part, which the timed part never calls."""
    for name, attributes in modules.items():
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        module.__path__ = []
        sys.modules.setdefault(name, module)


def _old_numpy_names() -> None:
    """The aliases the official code of 2021-2022 uses and numpy removed (1.24: ``np.float``, 2.0: ``np.float_``),
    as the same types."""
    for name, value in (('float', float), ('float_', np.float64)):
        if not hasattr(np, name):
            setattr(np, name, value)


def _torch_or_empty() -> None:
    """Where torch is not installed: empty torch modules (the official tracker files import torch and
    torch.nn.functional but never call them on numpy input; ``torch.device`` names the CPU)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        _empty_modules(**{'torch': dict(device=lambda name: name), 'torch.nn': {}, 'torch.nn.functional': {}})


def official_bytetrack(root: str):
    """``(prepare, run)`` of the official BYTETracker of a ByteTrack checkout."""
    tracker_dir = Path(root) / 'yolox' / 'tracker'
    if not (tracker_dir / 'byte_tracker.py').is_file():
        raise SystemExit(f'--official-bytetrack {root}: no yolox/tracker/byte_tracker.py (a checkout of '
                         'ifzhang/ByteTrack)')
    _package('yolox', tracker_dir.parent)
    _package('yolox.tracker', tracker_dir)
    _old_numpy_names()
    _torch_or_empty()
    from yolox.tracker.basetrack import BaseTrack
    from yolox.tracker.byte_tracker import BYTETracker
    args = types.SimpleNamespace(track_thresh=0.6, track_buffer=30, match_thresh=0.9, mot20=False)

    def prepare(video: dict) -> list:
        return [np.column_stack([boxes, scores]).astype(np.float64) for boxes, scores in video['frames']]

    def run(video: dict, frames: list) -> list:
        BaseTrack._count = 0  # ids from 1 in every video (a class-level counter)
        tracker = BYTETracker(args, frame_rate=30)
        # img_info equal to img_size: no rescaling (update divides the boxes by 1.0 in place)
        return [tracker.update(dets, (1, 1), (1, 1)) for dets in frames]
    return prepare, run


# the edit that makes the official FairMOT tracker take decoded detections (as tests/fixtures/jde_official was made):
# the signature, and the lines from the first to the last of these removed (image meta, network forward, decoding)
FAIRMOT_SIGNATURE = ('def update(self, im_blob, img0):', 'def update(self, dets, id_feature):')
FAIRMOT_NETWORK_LINES = ('width = img0.shape[1]', 'dets = self.merge_outputs([dets])[1]')


def official_fairmot(root: str):
    """``(prepare, run)`` of the official FairMOT ``JDETracker`` of a checkout, edited as tests/fixtures/jde_official
    says: ``update(dets, id_feature)`` without the network forward and decoding (everything from the score filter
    on is the official code); the network-side modules it imports are empty modules, its per-frame debug log is
    not written (the ``'root'`` logger at WARNING)."""
    lib = Path(root) / 'src' / 'lib'
    source_file = lib / 'tracker' / 'multitracker.py'
    if not source_file.is_file():
        raise SystemExit(f'--official-fairmot {root}: no src/lib/tracker/multitracker.py (a checkout of ifzhang/FairMOT)')
    lines = source_file.read_text().splitlines()
    text = '\n'.join(lines)
    first = next((i for i, line in enumerate(lines) if line.strip() == FAIRMOT_NETWORK_LINES[0]), None)
    last = next((i for i, line in enumerate(lines) if line.strip() == FAIRMOT_NETWORK_LINES[1]), None)
    if FAIRMOT_SIGNATURE[0] not in text or first is None or last is None or last < first:
        raise SystemExit(f'{source_file}: not the multitracker.py this edit was written for (FairMOT 4aa6297)')
    edited = '\n'.join(lines[:first] + lines[last + 1:]).replace(*FAIRMOT_SIGNATURE)
    _old_numpy_names()
    _torch_or_empty()

    class NoModel:
        def to(self, device):
            return self

        def eval(self):
            return self
    _empty_modules(**{'models': {}, 'models.decode': dict(mot_decode=None),
                      'models.model': dict(create_model=lambda *args: NoModel(), load_model=lambda model, path: model),
                      'models.utils': dict(_tranpose_and_gather_feat=None), 'utils': {},
                      'utils.image': dict(get_affine_transform=None),
                      'utils.post_process': dict(ctdet_post_process=None), 'tracking_utils.utils': {}})
    _package('tracker', lib / 'tracker')
    _package('tracking_utils', lib / 'tracking_utils')
    import logging
    module = types.ModuleType('tracker.multitracker')
    module.__package__, module.__file__ = 'tracker', str(source_file)
    sys.modules['tracker.multitracker'] = module
    exec(compile(edited, str(source_file), 'exec'), module.__dict__)
    logging.getLogger('root').setLevel(logging.WARNING)
    from tracker.basetrack import BaseTrack
    opt = types.SimpleNamespace(gpus=[-1], conf_thres=0.4, track_buffer=30, K=500, mean=[0.408, 0.447, 0.470],
                                std=[0.289, 0.274, 0.278], down_ratio=4, num_classes=1, ltrb=True, reg_offset=True,
                                min_box_area=100, arch='dla_34', heads={}, head_conv=256, load_model='')

    def prepare(video: dict) -> list:
        return [(np.column_stack([boxes, scores]).astype(np.float64), features)
                for (boxes, scores), features in zip(video['frames'], video['features'])]

    def run(video: dict, frames: list) -> list:
        BaseTrack._count = 0
        tracker = module.JDETracker(opt, frame_rate=video['frame_rate'])
        return [tracker.update(dets, features) for dets, features in frames]
    return prepare, run


def official_tracktrack(root: str):
    """``(prepare, run)`` of the official TrackTrack ``Tracker`` of a checkout (``3. Tracker/trackers``), unedited:
    its DanceTrack-test settings (``det_thr = init_thr = match_thr = 0.6``, ``tai_thr 0.55``, penalties 0.2 / 0.4,
    ``reduce_step 0.05``, ``min_len 3``, ``max_time_lost`` twice the 10 FPS rate), the detection rows ``[x1, y1,
    x2, y2, score, 0, features]`` as its own pickles hold them, the same rows as its NMS-0.95 set (no deleted
    detections) and identity camera motion (its GMC files, written for each video). Its package is named
    ``trackers``, as Roboflow's: it is imported under that name and then taken out of ``sys.modules`` again (its
    modules import everything when loaded)."""
    folder = Path(root) / '3. Tracker'
    if not (folder / 'trackers' / 'tracker.py').is_file():
        raise SystemExit(f'--official-tracktrack {root}: no "3. Tracker/trackers/tracker.py" (a checkout of '
                         'kamkyu94/TrackTrack)')
    _old_numpy_names()
    others = {name: module for name, module in sys.modules.items() if name == 'trackers' or
              name.startswith('trackers.')}
    for name in others:
        del sys.modules[name]
    _package('trackers', folder / 'trackers')
    try:
        from trackers.tracker import Tracker
    finally:
        for name in [n for n in sys.modules if n == 'trackers' or n.startswith('trackers.')]:
            del sys.modules[name]
        sys.modules.update(others)
    args = types.SimpleNamespace(det_thr=0.6, init_thr=0.6, match_thr=0.6, min_len=3, min_box_area=100,
                                 penalty_p=0.2, penalty_q=0.4, reduce_step=0.05, tai_thr=0.55, max_time_lost=20,
                                 data_path='')
    gmc_folder = Path(tempfile.mkdtemp(prefix='peer_gmc_'))
    (gmc_folder / 'trackers' / 'cmc').mkdir(parents=True)

    def prepare(video: dict) -> list:
        lines = ''.join(f'{i}\t1.0\t0.0\t0.0\t0.0\t1.0\t0.0\n' for i in range(len(video['frames'])))
        (gmc_folder / 'trackers' / 'cmc' / f'GMC-{video["name"]}.txt').write_text(lines)
        return [np.column_stack([boxes, scores, np.zeros(len(scores)), features]).astype(np.float64)
                if len(scores) else None for (boxes, scores), features in zip(video['frames'], video['features'])]

    def run(video: dict, frames: list) -> list:
        here = os.getcwd()
        os.chdir(gmc_folder)  # the tracker opens ./trackers/cmc/GMC-<video>.txt
        try:
            tracker = Tracker(args, video['name'])
        finally:
            os.chdir(here)
        return [tracker.update(rows, rows) if rows is not None else tracker.update_without_detections()
                for rows in frames]
    return prepare, run


def roboflow(tracker_class):
    """``(prepare, run)`` of a Roboflow ``trackers`` tracker with its defaults."""
    import supervision as sv

    def prepare(video: dict) -> list:
        return [sv.Detections(xyxy=boxes.astype(np.float32), confidence=scores.astype(np.float32),
                              class_id=np.zeros(len(scores), int)) if len(scores) else sv.Detections.empty()
                for boxes, scores in video['frames']]

    def run(video: dict, frames: list) -> list:
        tracker = tracker_class()
        return [tracker.update(dets) for dets in frames]
    return prepare, run


def peers(official_root: str | None, fairmot_root: str | None = None, tracktrack_root: str | None = None) -> dict:
    found = {}
    if official_root:
        found['official ByteTrack'] = official_bytetrack(official_root)
    if fairmot_root:
        found['official JDETracker'] = official_fairmot(fairmot_root)
    if tracktrack_root:
        found['official TrackTrack'] = official_tracktrack(tracktrack_root)
    try:
        from trackers import ByteTrackTracker, SORTTracker
    except ImportError:
        pass
    else:
        found['Roboflow ByteTrackTracker'] = roboflow(ByteTrackTracker)
        found['Roboflow SORTTracker'] = roboflow(SORTTracker)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--videos', required=True)
    parser.add_argument('--out', required=True)
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--official-bytetrack', help='a checkout of ifzhang/ByteTrack')
    parser.add_argument('--official-fairmot', help='a checkout of ifzhang/FairMOT (needs features in --videos)')
    parser.add_argument('--official-tracktrack', help='a checkout of kamkyu94/TrackTrack (needs features)')
    args = parser.parse_args()
    videos = read_videos(args.videos)
    runners = peers(args.official_bytetrack, args.official_fairmot, args.official_tracktrack)
    prepared = {name: [prepare(v) for v in videos] for name, (prepare, _) in runners.items()}
    best = {name: [float('inf')] * len(videos) for name in runners}
    for _ in range(args.repeats):
        for v, video in enumerate(videos):
            for name, (_, run) in runners.items():
                start = time.perf_counter()
                run(video, prepared[name][v])
                best[name][v] = min(best[name][v], time.perf_counter() - start)
    result = dict(python=sys.version.split()[0], numpy=np.__version__,
                  seconds={name: sum(times) for name, times in best.items()}, video_seconds=best)
    temporary = f'{args.out}.tmp'
    with open(temporary, 'w') as f:
        json.dump(result, f, indent=1)
    os.replace(temporary, args.out)


if __name__ == '__main__':
    main()
