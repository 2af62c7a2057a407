"""Association measured apart from detection (``tools/analysis/association_split.py``).

A tracker's output boxes are scored three ways on the same boxes:

* its own identities (its results as written);
* ByteTrack on those boxes: the result boxes, with their scores, become detections of the official BYTETracker
  (``track_thresh`` 0.3 by default): how a Kalman filter with IoU associates the same boxes;
* truth identities on those boxes: each box gets the id of the ground-truth box it overlaps at IoU 0.5 or more (one
  to one per frame, the Hungarian assignment on IoU), the rest are dropped: the HOTA that perfect association on
  these boxes reaches (:mod:`vastmat.evaluation.oracle_association`), so that ``own / truth`` AssA is the share of the reachable association the tracker gets.

The gap between the first and the third is the association's; the third's DetA is the detection's.
"""
from __future__ import annotations

import os.path as osp

import numpy as np

from vastmat.datasets.formats import Detections, TrackResults, read_gt, read_results, write_detections, \
    write_results
from vastmat.datasets.sequences import load_sequence
from vastmat.evaluation.oracle_association import truth_identities

BYTETRACK_THRESH = 0.3  # track_thresh of the ByteTrack run on a tracker's boxes (its boxes' scores are low)
WAYS = ('own', 'bytetrack', 'truth')


def results_as_detections(results: TrackResults) -> Detections:
    """A result file's boxes and scores as a det.txt's detections (identities dropped)."""
    return Detections(results.frames, results.boxes, results.scores, np.zeros((len(results), 0)),
                      results.line_numbers, results.path)


def split_inputs(data_root: str, results_dir: str, videos: list[str], out_dir: str) -> dict[str, str]:
    """Write the inputs of the other two ways for every video: ``out_dir/dets/<video>.txt`` (the boxes as
    detections) and ``out_dir/truth/results/<video>.txt`` (truth identities). Returns their folders."""
    folders = dict(dets=osp.join(out_dir, 'dets'), truth=osp.join(out_dir, 'truth', 'results'))
    for video in videos:
        sequence = load_sequence(data_root, video, with_gt=False)
        path = osp.join(results_dir, f'{video}.txt')
        if not osp.isfile(path):
            raise FileNotFoundError(f'{path}: the tracker wrote no results for {video}')
        results = read_results(path, sequence.length)
        gt = read_gt(osp.join(sequence.directory, 'gt', 'gt.txt'), sequence.length)
        write_detections(osp.join(folders['dets'], f'{video}.txt'), results_as_detections(results), decimals=3)
        write_results(osp.join(folders['truth'], f'{video}.txt'),
                      truth_identities(results, gt), decimals=3)
    return folders


def association_split(data_root: str, results_dir: str, videos: list[str], out_dir: str, preset: str = 'vastmat',
                      track_thresh: float = BYTETRACK_THRESH) -> dict[str, dict]:
    """The three ways of one tracker's results folder: ``{way: COMBINED metrics}`` (``own``, ``bytetrack``,
    ``truth``); the runs are written under ``out_dir``."""
    from mmengine.config import Config

    from vastmat.apis import init_model, track_and_score
    from vastmat.evaluation.mot_eval import evaluate, sequence_specs
    from vastmat.models.trackers.zoo import config_path
    from vastmat.utils.io import write_json_atomic
    folders = split_inputs(data_root, results_dir, videos, out_dir)
    out = {}
    for way, folder in (('own', results_dir), ('truth', folders['truth'])):
        specs, _ = sequence_specs(data_root, folder, videos)
        out[way] = evaluate(specs, preset)
        write_json_atomic(out[way], osp.join(osp.dirname(folder) if way == 'truth' else out_dir,
                                             'metrics.json' if way == 'truth' else 'own_metrics.json'))
    cfg = Config.fromfile(config_path('_base_/tracking_cached-dets.py'))
    cfg.model.tracker = dict(type='BYTETracker', track_thresh=track_thresh)
    out['bytetrack'], _ = track_and_score(init_model(cfg), data_root, folders['dets'], videos,
                                          osp.join(out_dir, 'bytetrack'), preset)
    return {way: out[way]['COMBINED'] for way in WAYS}


def zoo_results_dirs(ctx, members: list) -> dict[str, str]:
    """``{tracker: results folder}`` of the zoo's test of every joint or end-to-end member (``members``: zoo
    trackers) at its last checkpoint with its own association: the runs of
    :func:`vastmat.experiments.zoo.run_model_member`, reused where the zoo ran them, else trained and tested now."""
    from vastmat.experiments.zoo import run_model_member
    by_name = {m.name: m for m in members}
    out = {}
    for member in members:
        owner = by_name.get(member.checkpoint_of) if member.checkpoint_of else member
        if owner is None or not owner.demo_config:
            continue
        out[member.name] = run_model_member(ctx, member, ['original'], by_name)['runs']['original']['results']
    return out
