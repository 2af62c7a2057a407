"""Tracking metrics through TrackEval (HOTA, CLEAR, Identity, Count), per video and combined.

TrackEval's own code does the scoring: its ``MotChallenge2DBox`` preprocessing and its metric classes. VastMAT only
replaces the file loading (:class:`VastMATBoxDataset`): files are read with :mod:`vastmat.datasets.formats` (float
boxes, errors with file and line, a missing result file is an empty tracker output) and the sequences come from any
list of (gt file, result file, length) instead of TrackEval's folder layout.

Presets:
* ``vastmat``: one class; valid=0 ground truth is *ignored*: a tracker box matched to it (IoU >= 0.5, Hungarian,
  as TrackEval matches distractors) is removed, then the row itself;
* ``mot15``: MOTChallenge 2015 rules (no preprocessing, zero-marked rows removed);
* ``mot17`` / ``mot20``: MOTChallenge rules (distractor classes, pedestrians only), as the official numbers.
"""
from __future__ import annotations

import logging
import os.path as osp
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
from trackeval import metrics as te_metrics
from trackeval.datasets import MotChallenge2DBox
from trackeval.datasets._base_dataset import _BaseDataset

from mmengine.logging import print_log

from vastmat.datasets.formats import read_gt, read_results
from vastmat.datasets.sequences import list_sequences, load_sequence, sequence_root

PRESETS = ('vastmat', 'mot15', 'mot17', 'mot20')
_BENCHMARK = dict(vastmat='MOT17', mot15='MOT15', mot17='MOT17', mot20='MOT20')
PEDESTRIAN, DISTRACTOR = 1, 8  # TrackEval's MOTChallenge class ids
SUMMARY_KEYS = ('HOTA', 'DetA', 'AssA', 'LocA', 'DetRe', 'DetPr', 'AssRe', 'AssPr', 'MOTA', 'MOTP', 'IDF1', 'IDP',
                'IDR', 'MT', 'PT', 'ML', 'CLR_FP', 'CLR_FN', 'IDSW', 'Frag')
COUNT_KEYS = {'CLR_TP', 'CLR_FN', 'CLR_FP', 'IDSW', 'MT', 'PT', 'ML', 'Frag', 'IDTP', 'IDFN', 'IDFP', 'Dets',
              'GT_Dets', 'IDs', 'GT_IDs', 'CLR_Frames'}


@dataclass(frozen=True)
class SequenceSpec:
    """One video to evaluate."""

    name: str
    gt_path: str
    result_path: str  # may not exist: then the tracker output is empty
    length: int


class VastMATBoxDataset(MotChallenge2DBox):
    """TrackEval's MOTChallenge 2D box dataset with VastMAT's file loading (see the module docstring)."""

    def __init__(self, sequences: Iterable[SequenceSpec], preset: str = 'vastmat') -> None:
        if preset not in PRESETS:
            raise KeyError(f'unknown preset {preset!r}; presets are {", ".join(PRESETS)}')
        _BaseDataset.__init__(self)
        self.preset = preset
        self.benchmark = _BENCHMARK[preset]
        self.do_preproc = preset != 'mot15'
        self.config = dict(self.get_default_dataset_config(), BENCHMARK=self.benchmark, DO_PREPROC=self.do_preproc,
                           PRINT_CONFIG=False)
        self.sequences = {s.name: s for s in sequences}
        self.seq_list = list(self.sequences)
        self.seq_lengths = {s.name: s.length for s in self.sequences.values()}
        self.tracker_list = ['tracker']
        self.class_list = ['pedestrian']
        self.should_classes_combine = False
        self.use_super_categories = False
        self.data_is_zipped = False
        self.class_name_to_class_id = {'pedestrian': 1, 'person_on_vehicle': 2, 'car': 3, 'bicycle': 4,
                                       'motorbike': 5, 'non_mot_vehicle': 6, 'static_person': 7, 'distractor': 8,
                                       'occluder': 9, 'occluder_on_ground': 10, 'occluder_full': 11,
                                       'reflection': 12, 'crowd': 13}
        self.valid_class_numbers = list(self.class_name_to_class_id.values())

    def _load_raw_file(self, tracker: str, seq: str, is_gt: bool) -> dict:
        spec = self.sequences[seq]
        n = spec.length
        if is_gt:
            gt = read_gt(spec.gt_path, seq_length=n)
            frames, ids, boxes = gt.frames, gt.ids, gt.boxes
            if self.preset == 'vastmat':  # one class; valid=0 rows become distractors (ignored)
                classes = np.where(gt.valid == 1, PEDESTRIAN, DISTRACTOR)
                zero_marked = np.ones(len(gt), np.int64)
            else:  # MOTChallenge: column 7 is the consider flag, column 8 the class
                classes, zero_marked = gt.categories, gt.valid
            extra = [zero_marked]
        else:
            if osp.isfile(spec.result_path):
                res = read_results(spec.result_path, seq_length=n)
                frames, ids, boxes, scores = res.frames, res.ids, res.boxes, res.scores
            else:
                frames, ids, boxes, scores = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 4)),
                                              np.zeros(0))
            classes = np.ones(len(frames), np.int64)
            extra = [scores]
        order = np.argsort(frames, kind='stable')
        starts = np.searchsorted(frames[order], np.arange(1, n + 2))
        raw: dict[str, Any] = {}
        per_t = [order[starts[t]:starts[t + 1]] for t in range(n)]
        prefix = 'gt' if is_gt else 'tracker'
        raw[f'{prefix}_ids'] = [ids[rows].astype(int) for rows in per_t]
        raw[f'{prefix}_classes'] = [classes[rows].astype(int) for rows in per_t]
        raw[f'{prefix}_dets'] = [np.atleast_2d(boxes[rows]).reshape(-1, 4) for rows in per_t]
        if is_gt:
            raw['gt_crowd_ignore_regions'] = [np.empty((0, 4)) for _ in range(n)]
            raw['gt_extras'] = [{'zero_marked': extra[0][rows].astype(int)} for rows in per_t]
        else:
            raw['tracker_confidences'] = [extra[0][rows] for rows in per_t]
        raw['num_timesteps'] = n
        raw['seq'] = seq
        return raw


def _metric_objects() -> list:
    return [te_metrics.HOTA(), te_metrics.CLEAR(dict(THRESHOLD=0.5, PRINT_CONFIG=False)),
            te_metrics.Identity(dict(THRESHOLD=0.5, PRINT_CONFIG=False)), te_metrics.Count()]


def evaluate_sequence(spec: SequenceSpec, preset: str) -> dict:
    """TrackEval's per-sequence results ``{metric name: {field: value}}`` for one video."""
    dataset = VastMATBoxDataset([spec], preset)
    raw = dataset.get_raw_seq_data('tracker', spec.name)
    data = dataset.get_preprocessed_seq_data(raw, 'pedestrian')
    return {metric.get_name(): metric.eval_sequence(data) for metric in _metric_objects()}


def _flatten(results: dict) -> dict:
    """TrackEval's nested results as one ``{name: value}`` dict; per-alpha arrays as ``<name>_per_alpha``."""
    flat: dict[str, Any] = {}
    for fields in results.values():
        for key, value in fields.items():
            array = np.asarray(value)
            if array.ndim == 1 and len(array) > 1:
                flat[key] = float(array.mean())
                flat[f'{key}_per_alpha'] = array.astype(float).tolist()
            elif key in COUNT_KEYS:
                flat[key] = int(round(float(array)))
            else:
                flat[key] = float(array)
    return flat


def evaluate_raw(sequences: list[SequenceSpec], preset: str = 'vastmat', workers: int = 1,
                 progress: bool = False) -> dict:
    """TrackEval's per-sequence results of every video, computed in ``workers`` processes (order kept)."""
    if not sequences:
        raise ValueError('no sequences to evaluate')
    names = [s.name for s in sequences]
    if len(set(names)) != len(names):
        raise ValueError('a sequence name appears twice')
    if workers > 1 and len(sequences) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(evaluate_sequence, s, preset) for s in sequences]
            return {spec.name: future.result()
                    for spec, future in _progress(zip(sequences, futures), len(sequences), progress)}
    return {s.name: evaluate_sequence(s, preset) for s in _progress(sequences, len(sequences), progress)}


def combine(per_seq: dict, names: list[str] | None = None) -> dict:
    """Combine the per-sequence results of ``names`` (default: all) as TrackEval does; flattened."""
    names = list(per_seq) if names is None else names
    combined = {}
    for metric in _metric_objects():
        name = metric.get_name()
        combined[name] = metric.combine_sequences({seq: per_seq[seq][name] for seq in names})
    return _flatten(combined)


def evaluate(sequences: list[SequenceSpec], preset: str = 'vastmat', workers: int = 1,
             progress: bool = False) -> dict:
    """Evaluate every video (in ``workers`` processes) and combine them as TrackEval does.

    Returns:
        ``{'COMBINED': {...}, '<video>': {...}, ...}`` with TrackEval's field names (fractions for ratios,
        integers for counts) and ``<field>_per_alpha`` lists for the HOTA family.
    """
    return summarize(evaluate_raw(sequences, preset, workers, progress))


# the per-alpha fields TrackEval's HOTA.combine_sequences reads (sums of the counts, HOTA_TP-weighted averages)
HOTA_COMBINE_FIELDS = ('HOTA_TP', 'HOTA_FN', 'HOTA_FP', 'AssRe', 'AssPr', 'AssA', 'LocA')


def combined_hota(per_video: dict, names: Iterable[str]) -> float:
    """The COMBINED HOTA of the videos ``names`` (a name given twice counts twice: a bootstrap resample) from
    flattened per-video results (the entries of :func:`evaluate`'s output or of a metrics_per_video.json), combined by
    TrackEval's own ``HOTA.combine_sequences``; equals the COMBINED HOTA of :func:`evaluate` on those videos."""
    rebuilt = {}
    for i, name in enumerate(names):
        flat = per_video[name]
        rebuilt[f'{i}:{name}'] = {key: np.asarray(flat[f'{key}_per_alpha'], dtype=float)
                                  for key in HOTA_COMBINE_FIELDS}
    if not rebuilt:
        raise ValueError('combined_hota: no videos')
    return float(np.mean(te_metrics.HOTA().combine_sequences(rebuilt)['HOTA']))


def summarize(per_seq: dict) -> dict:
    """``{'COMBINED': {...}, '<video>': {...}}`` from TrackEval's per-sequence results."""
    out = {'COMBINED': combine(per_seq)}
    out.update({seq: _flatten(results) for seq, results in per_seq.items()})
    return out


def _progress(iterable, total: int, enabled: bool):
    if not enabled:
        return iterable
    from tqdm import tqdm
    return tqdm(iterable, total=total, desc='evaluating videos')


def read_seqmap(path: str) -> list[str]:
    """A MOTChallenge seqmap: a header line ``name`` then one sequence a line."""
    with open(path, encoding='utf-8') as f:
        lines = [line.strip() for line in f if line.strip()]
    if not lines or lines[0] != 'name':
        raise ValueError(f'{path}:1: a seqmap starts with the header "name"')
    return lines[1:]


def sequence_specs(gt_root: str, results: str, names: list[str]) -> tuple[list[SequenceSpec], list[str]]:
    """The videos to evaluate and the names of those without a result file."""
    known = set(list_sequences(gt_root))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise KeyError(f'{len(unknown)} video(s) are not under {sequence_root(gt_root)}: {unknown[:5]}')
    specs, missing = [], []
    for name in names:
        sequence = load_sequence(gt_root, name, with_gt=False)
        gt_path = osp.join(sequence.directory, 'gt', 'gt.txt')
        if not osp.isfile(gt_path):
            raise FileNotFoundError(f'{gt_path}: missing')
        result_path = osp.join(results, f'{name}.txt')
        if not osp.isfile(result_path):
            missing.append(name)
        specs.append(SequenceSpec(name, gt_path, result_path, sequence.length))
    return specs, missing


def evaluate_folder(gt_root: str, results: str, names: list[str], preset: str, workers: int = 1) -> tuple:
    """Per-video and combined metrics, the raw per-video TrackEval results and the missing result files."""
    specs, missing = sequence_specs(gt_root, results, names)
    if not osp.isdir(results):
        raise FileNotFoundError(f'{results}: no such results folder')
    if specs and len(missing) == len(specs):
        raise FileNotFoundError(f'{results}: none of the {len(specs)} video(s) has a result file <video>.txt '
                                f'(e.g. {specs[0].name}.txt); is this the folder of the tracker\'s results?')
    if missing:
        print_log(f'{len(missing)} result file(s) missing in {results}, scored as empty tracker output: '
                  f'{", ".join(missing)}', 'current', level=logging.WARNING)
    raw = evaluate_raw(specs, preset, workers, progress=True)
    return summarize(raw), raw, specs, missing
