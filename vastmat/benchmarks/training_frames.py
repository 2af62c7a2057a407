"""How many labelled frames of one's own video the detector needs: AP50 and tracking quality against the number of
training frames, on a real video (the SLEAP fly video of ``../shared/data/sleap-centered-pair``).

For each count N: the labels of frames 1..N are imported as the train sequence and a fixed later range (default
601-1100) as the test sequence (:func:`vastmat.datasets.importers.import_labels`); the own-video YOLOX config trains
on the N frames (the zoo's training cache: a second run with the same settings reuses it), is tested on the test
frames (COCO AP, AP50; frames it never saw) and dumps its boxes; ByteTrack (its official config) tracks them, and
the GlobalLinker with the video's number of animals links its tracks. Both are scored against the labels' tracks.
"""
from __future__ import annotations

import os.path as osp
import time
from typing import Any

import numpy as np

from .shipped_configs import CONFIG_ROOT, REPO

FLY_DATA = osp.join(osp.dirname(REPO), 'shared', 'data', 'sleap-centered-pair')  # ../shared/data beside the clone
FLY_LABELS = osp.join(FLY_DATA, 'centered_pair_predictions.slp')
FLY_VIDEO = osp.join(FLY_DATA, 'centered_pair_low_quality.mp4')
DETECTOR = osp.join(CONFIG_ROOT, 'yolox', 'yolox_tiny_1xb8-600it_own-video.py')
TRACKER = osp.join(CONFIG_ROOT, 'bytetrack', 'bytetrack_cached-dets.py')
TRACK_METRICS = ('HOTA', 'DetA', 'AssA', 'IDF1', 'IDSW')
FLY_CATEGORY = 312  # 'Fly' in the VastMAT categories


def _track_summary(data_root: str, folder: str, video: str) -> dict[str, Any]:
    from vastmat.apis import read_track_rows
    from vastmat.evaluation.mot_eval import evaluate, sequence_specs
    specs, _ = sequence_specs(data_root, folder, [video])
    combined = evaluate(specs)['COMBINED']
    rows = read_track_rows(osp.join(folder, f'{video}.txt'))
    return dict({m: float(combined[m]) for m in TRACK_METRICS}, identities=int(len(np.unique(rows[:, 1]))))


def import_point(num_frames: int, work_dir: str, labels: str = FLY_LABELS, video: str = FLY_VIDEO,
                 test_first: int = 601, test_last: int = 1100, name: str = 'fly') -> str:
    """The VastMAT root of one count (frames 1..``num_frames`` to train on, ``test_first..test_last`` to test on),
    imported unless a root of the same labels, video and frames is there; returns its path. Call it before points
    of the same count run in parallel (they share the root)."""
    import json

    from vastmat.datasets.importers import FrameRange, import_labels
    data_root = osp.join(work_dir, f'train{num_frames}', 'data')
    train, test = FrameRange(1, num_frames), FrameRange(test_first, test_last)
    report = osp.join(data_root, 'import.json')
    if osp.isfile(report):
        saved = json.load(open(report, encoding='utf-8'))
        if (saved['labels'], saved['video'], saved['options']['train_frames'], saved['options']['test_frames']) == (
                osp.abspath(labels), osp.abspath(video), str(train), str(test)):
            return data_root
    import_labels(labels, data_root, video=video, name=name, train=train, test=test, category=FLY_CATEGORY,
                  overwrite=True, progress=False)
    return data_root


def frames_point(num_frames: int, work_dir: str, labels: str = FLY_LABELS, video: str = FLY_VIDEO,
                 test_first: int = 601, test_last: int = 1100, iters: int | None = None,
                 checkpoint: str | None = None, num_animals: int = 2, name: str = 'fly', seed: int | None = None
                 ) -> dict[str, Any]:
    """Import, train on frames 1..``num_frames`` (``seed``: the training's, None: the config's), test on
    ``test_first..test_last``, track and link; returns the numbers of one row of the table."""
    from vastmat.apis import init_model, track_and_score
    from vastmat.apis.linking import link_results_folder
    from vastmat.experiments.zoo_testing import detect
    from vastmat.experiments.zoo_training import train_once, zoo_config
    from vastmat.utils.io import write_json_atomic
    if not 0 < num_frames < test_first:
        raise ValueError(f'{num_frames} training frames: give 1..{test_first - 1} (the test range starts at '
                         f'{test_first})')
    point_dir = osp.join(work_dir, f'train{num_frames}', 'runs' if seed is None else f'seed{seed}')
    data_root = import_point(num_frames, work_dir, labels, video, test_first, test_last, name)
    cfg = zoo_config(DETECTOR, data_root, 'protocol1', osp.join(work_dir, 'training'), f'detector, {num_frames} frames',
                     seed=seed)
    if checkpoint:
        cfg.load_from = checkpoint
    training = train_once(cfg, iters)
    checkpoint_path = training.checkpoints[-1][1]
    dets = osp.join(point_dir, 'dets')
    start = time.perf_counter()
    det = detect(DETECTOR, checkpoint_path, data_root, 'protocol1', osp.join(point_dir, 'detect'), out_dir=dets)
    detect_seconds = time.perf_counter() - start
    test_video = f'{name}-test'
    tracks_dir = osp.join(point_dir, 'bytetrack')
    track_and_score(init_model(TRACKER), data_root, dets, [test_video], tracks_dir)
    tracked = _track_summary(data_root, osp.join(tracks_dir, 'results'), test_video)
    linked_dir = osp.join(point_dir, 'bytetrack_linked')
    link_results_folder(osp.join(tracks_dir, 'results'), linked_dir, [test_video],
                        linker=dict(type='GlobalLinker', num_animals=num_animals))
    linked = _track_summary(data_root, linked_dir, test_video)
    row = dict(train_frames=num_frames, train_seconds=training.seconds, iters=training.max_iters,
               reused=training.reused, detect_seconds=detect_seconds, AP=float(det.get('det/AP', np.nan)),
               AP50=float(det.get('det/AP50', np.nan)), bytetrack=tracked, linked=linked,
               checkpoint=checkpoint_path, started_from=checkpoint, seed=seed)
    write_json_atomic(row, osp.join(point_dir, 'row.json'))
    return row


def truth_summary(work_dir: str, num_frames: int, name: str = 'fly') -> dict[str, int]:
    """The test sequence's labelled identities and boxes (what the HOTA is measured against)."""
    from vastmat.datasets.sequences import load_sequence
    sequence = load_sequence(osp.join(work_dir, f'train{num_frames}', 'data'), f'{name}-test')
    return dict(identities=int(len(np.unique(sequence.gt.ids))), boxes=int(len(sequence.gt)))


def training_frames_benchmark(work_dir: str, counts: tuple[int, ...] = (50, 100, 200, 500), **options: Any
                              ) -> dict[str, Any]:
    """:func:`frames_point` for every count; returns ``{'rows': [...], 'truth': {...}}``."""
    rows = [frames_point(n, work_dir, **options) for n in counts]
    return dict(rows=rows, truth=truth_summary(work_dir, counts[0], options.get('name', 'fly')))
