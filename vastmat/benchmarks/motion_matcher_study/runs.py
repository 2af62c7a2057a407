"""The motion-matcher study's data and runs: each setting's videos (the sparse ones simulated once), per-video
statistics and the sparsest third, and one sweep run per tracker, matcher and setting, scored per subset."""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import os.path as osp
import shutil

import numpy as np

from vastmat.experiments.matcher_study import StudyTracker, matcher_config, run_options, study_trackers
from vastmat.utils.errors import UserInputError
from vastmat.utils.io import write_json_atomic

from .settings import SETTINGS, SIMULATOR, StudySettings

def simulate_folder(source: str, out: str, stride: int, seed: int) -> None:
    """``out/<video>/``: every video of ``source`` at ``stride`` with detections simulated from its ground truth
    (default :class:`SimulationConfig`, one generator per video seeded by ``seed`` and the name), as
    ``tools/data/simulate_detections.py --data-root SOURCE --out OUT --stride STRIDE --seed SEED``."""
    from vastmat.datasets.detection_simulator import simulate_video_folder
    from vastmat.datasets.sequences import select_videos
    for name in select_videos(source, None, None):
        simulate_video_folder(source, name, out, stride, seed)


def simulated_setting(source: str, out: str, stride: int, seed: int) -> str:
    """``out``: ``source`` strided by ``stride`` with simulated detections (``seed``), made unless
    ``out/simulation.json`` records the same source, stride and seed (a different record is an error: another work
    dir, or remove ``out``). Made in a temporary folder and renamed: never half-written."""
    stamp = dict(source=osp.realpath(source), stride=stride, seed=seed, tool=SIMULATOR)
    record = osp.join(out, 'simulation.json')
    if osp.isfile(record):
        with open(record, encoding='utf-8') as f:
            found = json.load(f)
        if found != stamp:
            raise UserInputError(f'{out} was simulated with {found}, not {stamp}: use another --work-dir or '
                                 f'remove {out}')
        return out
    if osp.exists(out):
        raise UserInputError(f'{out} exists without simulation.json (an interrupted simulation?): remove it')
    tmp = f'{out}.tmp{os.getpid()}'
    shutil.rmtree(tmp, ignore_errors=True)
    print(f'simulating detections: {source} at stride {stride} (seed {seed}) into {out}', flush=True)
    simulate_folder(source, tmp, stride, seed)
    write_json_atomic(stamp, osp.join(tmp, 'simulation.json'))
    os.replace(tmp, out)
    return out


def setting_roots(study: StudySettings) -> dict[str, dict]:
    """Each chosen setting's data root (ground truth), detection root and description; simulates what is missing."""
    roots = {}
    for name in study.settings:
        stride = SETTINGS[name]
        if stride is None:
            gt, dets = osp.join(study.dense_root, 'gt'), osp.join(study.dense_root, 'dets')
            roots[name] = dict(data_root=gt, det_root=dets, source=study.dense_root, stride=None,
                               description='AnimalTrack train at 10 FPS, the shared simulated detections')
        else:
            out = osp.join(study.work_dir, 'data', f'AnimalTrack-{name}-sim')
            simulated_setting(study.animaltrack_root, out, stride, study.sim_seed)
            roots[name] = dict(data_root=out, det_root=out, source=study.animaltrack_root, stride=stride,
                               seed=study.sim_seed, description=f'AnimalTrack train strided by {stride}, detections '
                               f'simulated (seed {study.sim_seed})')
        for key in ('data_root', 'det_root'):
            if not osp.isdir(roots[name][key]):
                raise FileNotFoundError(f'{roots[name][key]}: not found (the {name} setting\'s {key})')
    return roots


def video_statistics(data_root: str, videos: list[str]) -> dict[str, dict]:
    """Per video: ``animals_per_frame`` (valid ground-truth boxes / frames), ``displacement`` (median normalised
    displacement over same-identity pairs in consecutive frames; NaN without any), ``frames``, ``boxes``, ``pairs``
    and ``frame_rate``."""
    from vastmat.datasets.sequences import load_sequence
    from vastmat.datasets.statistics import next_observation_pairs, normalized_displacement
    stats = {}
    for name in videos:
        sequence = load_sequence(data_root, name)
        if sequence.gt is None:
            raise FileNotFoundError(f'{sequence.directory}/gt/gt.txt: missing (the statistics need ground truth)')
        gt = sequence.gt
        i, j, _ = next_observation_pairs(gt, max_gap=1)
        displacement = normalized_displacement(gt.boxes[i], gt.boxes[j])
        boxes = int((gt.valid == 1).sum())
        stats[name] = dict(animals_per_frame=boxes / sequence.length if sequence.length else math.nan,
                           displacement=float(np.median(displacement)) if len(displacement) else math.nan,
                           frames=int(sequence.length), boxes=boxes, pairs=int(len(i)),
                           frame_rate=sequence.frame_rate)
    return stats


def sparsest_third(stats: dict[str, dict]) -> list[str]:
    """The ``max(1, round(n / 3))`` videos with the fewest animals per frame (ties by name), in that order."""
    order = sorted(stats, key=lambda v: (stats[v]['animals_per_frame'], v))
    return order[:max(1, round(len(order) / 3))]


# ------------------------------------------------------------------------------------------------------ runs

def tracker_options(study: StudySettings, tracker: StudyTracker) -> list[str]:
    """The tracker's ``study_options``, its trained motion model, then ``--cfg-options`` (unprefixed or
    ``tracker:``-prefixed)."""
    options = list(tracker.options)
    if tracker.motion_checkpoint_key and study.d2mp_checkpoint:
        options.append(f'model.tracker.{tracker.motion_checkpoint_key}={study.d2mp_checkpoint}')
    for text in study.cfg_options:
        prefix, sep, rest = text.partition(':')
        if sep and prefix in study_trackers() and '=' not in prefix:
            if prefix == tracker.name:
                options.append(rest)
        else:
            options.append(text)
    return options


def make_runs(study: StudySettings, roots: dict[str, dict], videos: dict[str, list[str]]) -> list[dict]:
    """One sweep run spec per tracker, setting and matcher, in that order, with ``tracker``, ``setting``,
    ``matcher`` and ``cfg_options`` added. A run is the tracker's study config with ``model.tracker.matcher`` set to
    the swapped-in matcher (none for its own), then its options."""
    from vastmat.experiments.sweep import runs as sweep_runs
    from vastmat.utils.options import parse_option
    trackers = study_trackers()
    plus_one = study.pixels == 'plus-one'
    runs = []
    for name in study.trackers:
        tracker = trackers[name]
        for setting in study.settings:
            for matcher in study.matchers:
                cfg = matcher_config(tracker, matcher)
                options = run_options(cfg, tracker, study.match_setting, plus_one, tracker_options(study, tracker))
                swapped = cfg.model.tracker.matcher.to_dict()
                pairs = [] if tracker.is_own(matcher) else [('model.tracker.matcher', swapped)]
                pairs += [parse_option(text, '--cfg-options') for text in options]
                spec = argparse.Namespace(config=tracker.config, preset=study.preset, **{
                    k: roots[setting][k] for k in ('data_root', 'det_root')})
                run, = sweep_runs.make_runs(spec, pairs, [], videos[setting], study.work_dir)
                run.update(tracker=name, setting=setting, matcher=matcher, label=f'{name} {setting} {matcher}',
                           cfg_options=options)
                runs.append(run)
    return runs


def execute(runs: list[dict], workers: int) -> tuple[int, int]:
    """Every model built first, then the runs not done yet (slowest trackers first); (computed, reused)."""
    from vastmat.experiments.sweep.runs import check_runs, execute_todo, is_done
    for run in runs:
        try:
            check_runs([run], {})
        except UserInputError as exc:
            raise UserInputError(f'{run["label"]} ({run["config"]}): {exc}') from exc
    cost = {name: tracker.cost for name, tracker in study_trackers().items()}
    todo = sorted((run for run in runs if not is_done(run)), key=lambda r: -cost.get(r['tracker'], 0))
    print(f'{len(runs) - len(todo)} runs done before, {len(todo)} to run', flush=True)
    execute_todo(todo, argparse.Namespace(launcher='local', workers=workers))
    return len(todo), len(runs) - len(todo)


def run_metrics(run: dict) -> dict:
    with open(osp.join(run['run_dir'], 'metrics.json'), encoding='utf-8') as f:
        return json.load(f)


def run_seconds(run: dict) -> dict:
    path = osp.join(run['run_dir'], 'settings.json')
    with open(path, encoding='utf-8') as f:
        return json.load(f).get('seconds') or {}


def subset_metrics(run: dict, videos: list[str]) -> dict:
    """The run's COMBINED metrics over ``videos`` only (its result files scored again), cached in its folder."""
    from vastmat.evaluation.mot_eval import evaluate, sequence_specs
    digest = hashlib.sha1(json.dumps(sorted(videos)).encode()).hexdigest()[:12]
    path = osp.join(run['run_dir'], f'subset_{digest}.json')
    if osp.isfile(path):
        with open(path, encoding='utf-8') as f:
            saved = json.load(f)
        if saved['videos'] == sorted(videos):
            return saved['COMBINED']
    specs, _ = sequence_specs(run['data_root'], osp.join(run['run_dir'], 'results'), videos)
    combined = evaluate(specs, run['preset'])['COMBINED']
    write_json_atomic(dict(videos=sorted(videos), COMBINED=combined), path)
    return combined

