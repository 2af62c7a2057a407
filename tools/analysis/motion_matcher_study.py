#!/usr/bin/env python
"""Matchers against IoU where animals are many and slow and where they are few and fast (issue 16, item 3).

    python tools/analysis/motion_matcher_study.py --work-dir W [--trackers bytetrack tracktrack diffmot]
        [--settings 10fps 5fps 3fps] [--matchers iou cda-fixed cda-adaptive cda-motion-adaptive]
        [--d2mp-checkpoint D2MP_CKPT] [--videos V ...] [--workers N] [--match-setting official|paper]
        [--pixels plus-one|plain] [--sim-seed 1] [--cfg-options [TRACKER:]KEY=VALUE ...]

Every tracker runs with every matcher on every setting's videos, on cached detections:
* ``10fps`` (dense): ../shared/data/AnimalTrack-10fps-sim (``--dense-root``): AnimalTrack train at 10 FPS with its
  own simulated detections;
* ``5fps`` and ``3fps`` (sparse / fast): AnimalTrack train (``--animaltrack-root``, 30 FPS) strided by 6 and 10,
  detections simulated by tools/data/simulate_detections.py (seed ``--sim-seed``), made once into
  W/data/AnimalTrack-<fps>fps-sim and reused while its simulation.json (source, stride, seed) matches.
In each setting the table also scores the sparsest third of the videos (the ``round(n / 3)`` videos with the fewest
animals per frame, ties by name) from the same tracks (tracking is per video, so the subset's tracks are the
full run's; only the scoring is redone, over the subset, and cached in the run's folder).

A run is one tracker, matcher and setting: the tracker's config per matcher and its options are matcher_table.py's
(``config_for``, ``run_options``: the same ``--match-setting``, default ``official``, ByteTrack's match_thresh 0.9, and
the same pixel convention for every matcher and gate); it runs with sweep.py's machinery (``execute_run``: results and
metrics.json, per video and COMBINED, the same numbers as tools/test.py's metrics_per_video.json) in
W/runs/<id>/, the id a hash of the config (path and content), options, roots, videos and preset. A run whose
metrics.json exists is reused, so a study resumes where it stopped; ``--workers`` runs several at a time (processes).
A matcher without a configs/<tracker>/<tracker>_cached-dets_<matcher>.py gets one generated in W/configs/ from the
tracker's plain config and configs/matchers/<matcher>.py (the template of the repository's per-matcher configs).
Per tracker: TrackTrack runs on boxes alone (``model.tracker.deleted_dets=None``, ``camera_motion=None``,
``post_processors=[]``, as the README's matcher table); DiffMOT needs ``--d2mp-checkpoint`` (it sets
``model.tracker.motion.checkpoint``). ``--cfg-options`` go to every run, or with a ``TRACKER:`` prefix to that
tracker's runs only.

Per video, from the setting's ground truth (valid rows; the strided frames of a sparse setting):
* animals per frame: the number of ground-truth boxes over the number of frames of the video (seqLength);
* normalised displacement: the median, over every pair of boxes of one identity in consecutive frames (frame gap 1
  in the setting's frames; an identity's gaps are skipped), of the centre distance divided by the mean of the two
  boxes' diagonals (vastmat.datasets.statistics.normalized_displacement: the paper's target motion, per frame of
  the setting).

Outputs in W: table.csv and table.json (one row per tracker, setting, video set and matcher: HOTA, AssA, IDF1 and
the HOTA gain over the IoU row of the same tracker, setting and video set, as fractions; table.json adds the
settings, the per-video statistics, the per-video HOTA and gain of every run, and each run's folder and seconds),
the table printed in percent, and gain.png: the per-video HOTA gain over IoU against animals per frame (left) and
against normalised displacement (right), one marker per matcher, one colour per setting (one tracker) or per
tracker (several).

    python tools/analysis/motion_matcher_study.py --trackers bytetrack --matchers iou cda-fixed cda-adaptive \\
        --work-dir work_dirs/motion_matcher_study --workers 2
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import os.path as osp
import shutil
import sys
import time
from typing import Any

import numpy as np

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
SHARED_DATA = osp.join(osp.dirname(REPO), 'shared', 'data')
sys.path.insert(0, osp.join(REPO, 'tools', 'analysis'))

import matcher_table  # noqa: E402
import sweep  # noqa: E402
from vastmat.utils.io import atomic_write, save_figure_atomic, write_json_atomic  # noqa: E402

TRACKERS = ('bytetrack', 'tracktrack', 'diffmot')
# name: (stride of AnimalTrack train, None: the shared 10 FPS set as it is)
SETTINGS = {'10fps': None, '5fps': 6, '3fps': 10}
DEFAULT_MATCHERS = ('iou', 'cda-fixed', 'cda-adaptive', 'cda-motion-adaptive')
BASELINE = 'iou'
# TrackTrack on boxes alone: the simulated sets have no features, no NMS-0.95 set, no camera motion, no AFLink
TRACKER_OPTIONS = dict(tracktrack=['model.tracker.deleted_dets=None', 'model.tracker.camera_motion=None',
                                   'model.post_processors=[]'])
# runs start slowest first, so that a pool's last minutes are not one DiffMOT run alone
TRACKER_COST = dict(diffmot=3, tracktrack=2, bytetrack=1)
SUBSETS = ('all', 'sparsest third')
COLUMNS = ('HOTA', 'AssA', 'IDF1')
# issue 16's targets for the candidate matcher: on the dense setting (all its videos) at least IoU's HOTA; on every
# other row (the sparse / fast settings and each setting's sparsest third) at least the better CDA's
DENSE_ROW = ('10fps', 'all')
CDA_REFERENCES = ('cda-fixed', 'cda-adaptive')
CANDIDATE = 'cda-motion-adaptive'
MARKERS = ('o', 's', '^', 'D', 'v', 'P', 'X', '*')


# ------------------------------------------------------------------------------------------------------ data

def simulated_setting(source: str, out: str, stride: int, seed: int) -> str:
    """``out``: ``source`` strided by ``stride`` with detections simulated by tools/data/simulate_detections.py
    (``seed``), made unless ``out/simulation.json`` records the same source, stride and seed (a different record is
    an error: another work dir, or remove ``out``). Made in a temporary folder and renamed: never half-written."""
    stamp = dict(source=osp.realpath(source), stride=stride, seed=seed, tool='tools/data/simulate_detections.py')
    record = osp.join(out, 'simulation.json')
    if osp.isfile(record):
        with open(record, encoding='utf-8') as f:
            found = json.load(f)
        if found != stamp:
            raise sweep._user_error(f'{out} was simulated with {found}, not {stamp}: use another --work-dir or '
                                    f'remove {out}')
        return out
    if osp.exists(out):
        raise sweep._user_error(f'{out} exists without simulation.json (an interrupted simulation?): remove it')
    tmp = f'{out}.tmp{os.getpid()}'
    shutil.rmtree(tmp, ignore_errors=True)
    simulate_tool().main(['--data-root', source, '--out', tmp, '--stride', str(stride), '--seed', str(seed)])
    write_json_atomic(stamp, osp.join(tmp, 'simulation.json'))
    os.replace(tmp, out)
    return out


def simulate_tool() -> Any:
    import importlib.util
    spec = importlib.util.spec_from_file_location('vastmat_tools_simulate_detections',
                                                  osp.join(REPO, 'tools', 'data', 'simulate_detections.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def setting_roots(args: argparse.Namespace) -> dict[str, dict]:
    """Each chosen setting's data root (ground truth), detection root and description; simulates what is missing."""
    roots = {}
    for name in args.settings:
        stride = SETTINGS[name]
        if stride is None:
            gt, dets = osp.join(args.dense_root, 'gt'), osp.join(args.dense_root, 'dets')
            roots[name] = dict(data_root=gt, det_root=dets, source=args.dense_root, stride=None,
                               description='AnimalTrack train at 10 FPS, the shared simulated detections')
        else:
            out = osp.join(args.work_dir, 'data', f'AnimalTrack-{name}-sim')
            simulated_setting(args.animaltrack_root, out, stride, args.sim_seed)
            roots[name] = dict(data_root=out, det_root=out, source=args.animaltrack_root, stride=stride,
                               seed=args.sim_seed, description=f'AnimalTrack train strided by {stride}, detections '
                               f'simulated (seed {args.sim_seed})')
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

def fragment_of(matcher: str) -> str | None:
    """The configs/matchers/ fragment of a matcher name (``-`` and ``_`` alike), or None."""
    folder = osp.join(REPO, 'configs', 'matchers')
    key = matcher.replace('_', '-')
    for name in sorted(os.listdir(folder)):
        if name.endswith('.py') and name[:-3].replace('_', '-') == key:
            return osp.join(folder, name)
    return None


def matcher_config(matcher: str, tracker: str, work_dir: str) -> str:
    """matcher_table's config of ``matcher`` for ``tracker``; without one, a config generated in
    ``work_dir/configs/`` from the tracker's plain config and the matcher's fragment."""
    try:
        return matcher_table.config_for(matcher, tracker)
    except FileNotFoundError:
        fragment = fragment_of(matcher)
        if fragment is None:
            raise
    plain = matcher_table.config_for(matcher_table.OWN_MATCHER[tracker], tracker)
    text = (f'# {tracker} on cached detections with the matcher of configs/matchers/{osp.basename(fragment)}\n'
            f'# (generated by tools/analysis/motion_matcher_study.py: the repository has no\n'
            f'# configs/{tracker}/{tracker}_cached-dets_{matcher}.py)\n'
            f'_base_ = [{plain!r}, {fragment!r}]\n\n'
            'model = dict(tracker=dict(matcher=dict(_delete_=True, **_base_.matcher)))\n')
    path = osp.join(osp.abspath(work_dir), 'configs', tracker, f'{tracker}_cached-dets_{matcher}.py')
    if not osp.isfile(path) or open(path, encoding='utf-8').read() != text:
        with atomic_write(path) as f:
            f.write(text)
    print(f'note: no configs/{tracker}/{tracker}_cached-dets_{matcher}.py in the repository; using {path}',
          flush=True)
    return path


def tracker_options(args: argparse.Namespace, tracker: str) -> list[str]:
    """TRACKER_OPTIONS, the D2MP checkpoint, then ``--cfg-options`` (unprefixed or ``tracker:``-prefixed)."""
    options = list(TRACKER_OPTIONS.get(tracker, []))
    if tracker == 'diffmot' and args.d2mp_checkpoint:
        options.append(f'model.tracker.motion.checkpoint={args.d2mp_checkpoint}')
    for text in args.cfg_options:
        prefix, sep, rest = text.partition(':')
        if sep and prefix in TRACKERS and '=' not in prefix:
            if prefix == tracker:
                options.append(rest)
        else:
            options.append(text)
    return options


def option_pairs(texts: list[str]) -> list[tuple[str, Any]]:
    """``KEY=VALUE`` texts as sweep.py's (key, value) pairs (values read as Python literals)."""
    pairs = []
    for text in texts:
        key, values = sweep.parse_assignment(text, '--cfg-options')
        pairs.append((key, values[0] if len(values) == 1 else values))
    return pairs


def make_runs(args: argparse.Namespace, roots: dict[str, dict], videos: dict[str, list[str]]) -> list[dict]:
    """One sweep.py run spec per tracker, setting and matcher, in that order, with ``tracker``, ``setting`` and
    ``matcher`` added."""
    runs = []
    plus_one = args.pixels == 'plus-one'
    for tracker in args.trackers:
        configs = {m: matcher_config(m, tracker, args.work_dir) for m in args.matchers}
        for setting in args.settings:
            for matcher in args.matchers:
                config = configs[matcher]
                options = matcher_table.run_options(config, tracker, args.match_setting, plus_one,
                                                    tracker_options(args, tracker))
                spec = argparse.Namespace(config=config, preset=args.preset, **{
                    k: roots[setting][k] for k in ('data_root', 'det_root')})
                run, = sweep.make_runs(spec, option_pairs(options), [], videos[setting], args.work_dir)
                run.update(tracker=tracker, setting=setting, matcher=matcher, label=f'{tracker} {setting} {matcher}',
                           cfg_options=options)
                runs.append(run)
    return runs


def execute(runs: list[dict], workers: int) -> tuple[int, int]:
    """Every model built first, then the runs not done yet (slowest trackers first); (computed, reused)."""
    from vastmat.utils.errors import UserInputError
    for run in runs:
        try:
            sweep.check_runs([run], {})
        except UserInputError as exc:
            raise UserInputError(f'{run["label"]} ({run["config"]}): {exc}') from exc
    todo = sorted((run for run in runs if not sweep.is_done(run)), key=lambda r: -TRACKER_COST.get(r['tracker'], 0))
    print(f'{len(runs) - len(todo)} runs done before, {len(todo)} to run', flush=True)
    sweep.execute_todo(todo, argparse.Namespace(launcher='local', workers=workers))
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


# ----------------------------------------------------------------------------------------------------- table

def make_rows(runs: list[dict], metrics: dict[str, dict], subsets: dict[str, list[str]]) -> list[dict]:
    """One row per tracker, setting, video set and matcher (fractions), with the HOTA gain over the IoU row;
    ``metrics``: each run's metrics.json by run id."""
    rows = []
    for run in runs:
        for subset in SUBSETS:
            if subset == 'all':
                videos, combined = run['videos'], metrics[run['id']]['COMBINED']
            else:
                videos = subsets[run['setting']]
                combined = subset_metrics(run, videos)
            rows.append(dict(tracker=run['tracker'], setting=run['setting'], videos=subset, num_videos=len(videos),
                             matcher=run['matcher'], **{k: combined[k] for k in COLUMNS}, run_id=run['id']))
    base = {(r['tracker'], r['setting'], r['videos']): r['HOTA'] for r in rows if r['matcher'] == BASELINE}
    for row in rows:
        row['HOTA_gain'] = row['HOTA'] - base[row['tracker'], row['setting'], row['videos']]
    # the runs' order (tracker, setting, matcher), the video sets grouped within a setting (a stable sort)
    groups = list(dict.fromkeys((r['tracker'], r['setting']) for r in rows))
    rows.sort(key=lambda r: (groups.index((r['tracker'], r['setting'])), SUBSETS.index(r['videos'])))
    return rows


def bootstrap_groups(runs: list[dict], metrics: dict[str, dict], subsets: dict[str, list[str]], samples: int,
                     seed: int) -> dict[tuple[str, str, str], dict[str, np.ndarray]]:
    """Per tracker, setting and video set: every matcher's COMBINED HOTA on ``samples`` resamples of the set's
    videos (the same resamples for every matcher of the group: paired; vastmat.evaluation.analysis.bootstrap_hota)."""
    from vastmat.evaluation.analysis import bootstrap_hota
    by_group: dict[tuple[str, str], list[dict]] = {}
    for run in runs:
        by_group.setdefault((run['tracker'], run['setting']), []).append(run)
    draws = {}
    for (tracker, setting), group in by_group.items():
        per_matcher = {run['matcher']: metrics[run['id']] for run in group}
        for subset in SUBSETS:
            names = group[0]['videos'] if subset == 'all' else subsets[setting]
            draws[tracker, setting, subset] = bootstrap_hota(per_matcher, list(names), samples, seed)
    return draws


def add_intervals(rows: list[dict], draws: dict | None, level: float) -> None:
    """Each row's ``HOTA_gain_low`` / ``HOTA_gain_high``: the ``level`` interval of its gain over IoU over the
    resamples (None for IoU's rows and without ``draws``)."""
    from vastmat.evaluation.analysis import interval
    for row in rows:
        low = high = None
        if draws is not None and row['matcher'] != BASELINE:
            group = draws[row['tracker'], row['setting'], row['videos']]
            low, high = interval(group[row['matcher']] - group[BASELINE], level)
        row['HOTA_gain_low'], row['HOTA_gain_high'] = low, high


def target_rows(rows: list[dict], draws: dict | None, candidate: str, level: float) -> list[dict]:
    """Issue 16's targets for ``candidate``, one row per tracker, setting and video set: the margin of its HOTA
    over the reference (IoU on the dense row, else the better of the CDA rows present), its ``level`` interval and
    the share of resamples where the margin is >= 0, and a verdict: ``met`` (margin >= 0), ``within noise`` (below
    0, the interval reaching 0) or ``missed`` (the whole interval below 0)."""
    from vastmat.evaluation.analysis import interval
    hota = {(r['tracker'], r['setting'], r['videos'], r['matcher']): r['HOTA'] for r in rows}
    out = []
    for tracker, setting, subset in dict.fromkeys((r['tracker'], r['setting'], r['videos']) for r in rows):
        if (tracker, setting, subset, candidate) not in hota:
            continue
        dense = (setting, subset) == DENSE_ROW
        references = [BASELINE] if dense else [m for m in CDA_REFERENCES if (tracker, setting, subset, m) in hota]
        if not references:
            continue
        margin = hota[tracker, setting, subset, candidate] - max(hota[tracker, setting, subset, m]
                                                                 for m in references)
        row = dict(tracker=tracker, setting=setting, videos=subset,
                   target='>= IoU' if dense else f'>= better of {" / ".join(references)}', margin=margin,
                   margin_low=None, margin_high=None, share_met=None)
        if draws is not None:
            group = draws[tracker, setting, subset]
            margins = group[candidate] - np.max([group[m] for m in references], axis=0)
            row['margin_low'], row['margin_high'] = interval(margins, level)
            row['share_met'] = float((margins >= 0).mean())
        if margin >= 0:
            row['verdict'] = 'met'
        elif row['margin_high'] is not None and row['margin_high'] >= 0:
            row['verdict'] = 'within noise'
        else:
            row['verdict'] = 'missed'
        out.append(row)
    return out


def per_video_rows(runs: list[dict], metrics: dict[str, dict], stats: dict[str, dict]) -> list[dict]:
    """Per run and video: HOTA, AssA, IDF1, the HOTA gain over the IoU run of its tracker and setting, and the
    video's statistics."""
    base = {(r['tracker'], r['setting']): metrics[r['id']] for r in runs if r['matcher'] == BASELINE}
    out = []
    for run in runs:
        reference = base[run['tracker'], run['setting']]
        for video in run['videos']:
            m = metrics[run['id']][video]
            out.append(dict(tracker=run['tracker'], setting=run['setting'], matcher=run['matcher'], video=video,
                            **{k: m[k] for k in COLUMNS}, HOTA_gain=m['HOTA'] - reference[video]['HOTA'],
                            animals_per_frame=stats[run['setting']][video]['animals_per_frame'],
                            displacement=stats[run['setting']][video]['displacement']))
    return out


def write_csv(rows: list[dict], path: str) -> None:
    import csv
    fields = list(rows[0]) if rows else []
    with atomic_write(path) as f:
        writer = csv.writer(f)
        writer.writerow(fields)
        for row in rows:
            writer.writerow(['' if row[k] is None else row[k] for k in fields])


def print_table(rows: list[dict], title: str, level: float) -> None:
    from rich.console import Console
    from rich.table import Table
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, sweep.CONSOLE_WIDTH))
    table = Table(title=title)
    for name in ('tracker', 'setting', 'videos', 'matcher'):
        table.add_column(name)
    for name in (*COLUMNS, 'HOTA gain over IoU', f'{level:.0%} interval'):
        table.add_column(name, justify='right')
    for i, row in enumerate(rows):
        last = i + 1 == len(rows) or (rows[i + 1]['tracker'], rows[i + 1]['setting'], rows[i + 1]['videos']) != (
            row['tracker'], row['setting'], row['videos'])
        gain = 100 * row['HOTA_gain']
        table.add_row(row['tracker'], row['setting'], f'{row["videos"]} ({row["num_videos"]})', row['matcher'],
                      *(f'{100 * row[k]:.2f}' for k in COLUMNS),
                      '-' if row['matcher'] == BASELINE else f'[{"green" if gain > 0 else "red"}]{gain:+.2f}[/]',
                      _points_interval(row['HOTA_gain_low'], row['HOTA_gain_high']), end_section=last)
    console.print(table)


def _points_interval(low: float | None, high: float | None) -> str:
    return '-' if low is None else f'{100 * low:+.2f} .. {100 * high:+.2f}'


def print_targets(targets: list[dict], candidate: str, level: float, samples: int) -> None:
    from rich.console import Console
    from rich.table import Table
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, sweep.CONSOLE_WIDTH))
    resampled = f'; interval and share over {samples} resamples of the videos' if samples else ''
    table = Table(title=f'Targets of {candidate} (HOTA points{resampled})')
    for name in ('tracker', 'setting', 'videos', 'target'):
        table.add_column(name)
    for name in ('margin', f'{level:.0%} interval', 'share >= 0', 'verdict'):
        table.add_column(name, justify='right')
    colour = {'met': 'green', 'within noise': 'yellow', 'missed': 'red'}
    for row in targets:
        table.add_row(row['tracker'], row['setting'], row['videos'], row['target'], f'{100 * row["margin"]:+.2f}',
                      _points_interval(row['margin_low'], row['margin_high']),
                      '-' if row['share_met'] is None else f'{row["share_met"]:.0%}',
                      f'[{colour[row["verdict"]]}]{row["verdict"]}[/]')
    console.print(table)


def print_times(runs: list[dict]) -> dict:
    """Seconds per tracker and setting (all matchers), tracking and total; returned as {tracker: {setting: ...}}."""
    from rich.console import Console
    from rich.table import Table
    out: dict[str, dict] = {}
    for run in runs:
        seconds = run_seconds(run)
        entry = out.setdefault(run['tracker'], {}).setdefault(run['setting'], dict(tracking=0.0, total=0.0))
        for key in entry:
            entry[key] += seconds.get(key, math.nan)
    table = Table(title='run seconds per tracker and setting (all matchers; when each run was computed)')
    for name in ('tracker', 'setting', 'tracking s', 'total s'):
        table.add_column(name, justify='left' if name in ('tracker', 'setting') else 'right')
    for tracker, settings in out.items():
        for setting, entry in settings.items():
            table.add_row(tracker, setting, f'{entry["tracking"]:.1f}', f'{entry["total"]:.1f}')
    Console().print(table)
    return out


def plot_gains(per_video: list[dict], matchers: list[str], color_by: str, path: str, title: str) -> None:
    """Two panels of per-video HOTA gain over IoU (points): against animals per frame and against normalised
    displacement; a marker per matcher, a colour per ``color_by`` (tracker or setting)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, NullFormatter
    shown = [m for m in matchers if m != BASELINE]
    groups = list(dict.fromkeys(p[color_by] for p in per_video))
    marker = {m: MARKERS[i % len(MARKERS)] for i, m in enumerate(shown)}
    color = {g: f'C{i % 10}' for i, g in enumerate(groups)}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
    for ax, key, label in ((axes[0], 'animals_per_frame', 'animals per frame (ground truth)'),
                           (axes[1], 'displacement', 'normalised displacement per frame (median)')):
        for m in shown:
            for g in groups:
                points = [p for p in per_video if p['matcher'] == m and p[color_by] == g]
                if points:
                    ax.scatter([p[key] for p in points], [100 * p['HOTA_gain'] for p in points], s=22,
                               marker=marker[m], facecolors='none', edgecolors=color[g], linewidths=1.0)
        ax.axhline(0.0, color='0.5', linewidth=0.8)
        ax.set_xscale('log')
        plain = FuncFormatter(lambda value, _: f'{value:g}')
        ax.xaxis.set_major_formatter(plain)
        low, high = ax.get_xlim()
        # minor ticks labelled only over about a decade (more would overlap)
        ax.xaxis.set_minor_formatter(plain if high < 15 * low else NullFormatter())
        ax.tick_params(axis='x', which='minor', labelsize=7)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3, which='both')
    axes[0].set_ylabel('HOTA gain over IoU (points)')
    handles = [Line2D([], [], linestyle='', marker=marker[m], color='0.2', markerfacecolor='none', label=m)
               for m in shown]
    handles += [Line2D([], [], linestyle='', marker='o', color=color[g], label=g) for g in groups]
    axes[1].legend(handles=handles, fontsize=8, loc='best')
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=120)


# ------------------------------------------------------------------------------------------------------ main

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from vastmat.evaluation.mot_eval import PRESETS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--work-dir', required=True)
    parser.add_argument('--trackers', nargs='+', choices=TRACKERS, default=list(TRACKERS))
    parser.add_argument('--settings', nargs='+', choices=list(SETTINGS), default=list(SETTINGS))
    parser.add_argument('--matchers', nargs='+', default=list(DEFAULT_MATCHERS),
                        help=f'matcher_table.py names (configs/matchers/ fragments); must include {BASELINE}')
    parser.add_argument('--videos', nargs='+', help='only these videos (every setting)')
    parser.add_argument('--d2mp-checkpoint', help='DiffMOT\'s D2MP weights (model.tracker.motion.checkpoint)')
    parser.add_argument('--workers', type=int, default=1, help='runs at the same time (processes)')
    parser.add_argument('--match-setting', choices=('official', 'paper'), default='official',
                        help="matcher_table.py's --setting: ByteTrack's first-stage match_thresh 0.9 (official, "
                        'default) or 0.6 (paper)')
    parser.add_argument('--pixels', choices=('plus-one', 'plain'), default='plus-one',
                        help='pixel convention of every matcher and gate')
    parser.add_argument('--preset', choices=PRESETS, default='vastmat', help='evaluation preset')
    parser.add_argument('--sim-seed', type=int, default=1, help='seed of the simulated detections (5fps, 3fps)')
    parser.add_argument('--dense-root', default=osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim'),
                        help='the 10fps setting: a folder with gt/ and dets/')
    parser.add_argument('--animaltrack-root', default=osp.join(SHARED_DATA, 'AnimalTrack', 'train'),
                        help='AnimalTrack train at 30 FPS (the sparse settings are strided from it)')
    parser.add_argument('--color-by', choices=('tracker', 'setting'),
                        help='the plot\'s colours (default: setting for one tracker, tracker for several)')
    parser.add_argument('--cfg-options', nargs='+', default=[], metavar='[TRACKER:]KEY=VALUE',
                        help='passed to every run (with a TRACKER: prefix, to that tracker\'s runs)')
    parser.add_argument('--bootstrap', type=int, default=1000, metavar='N',
                        help='resamples of the videos for the intervals (paired bootstrap; 0: no intervals)')
    parser.add_argument('--level', type=float, default=0.9, help='coverage of the intervals (default 0.9)')
    parser.add_argument('--seed', type=int, default=0, help='seed of the resampling')
    parser.add_argument('--candidate', help=f'the matcher whose targets are checked (default {CANDIDATE} when '
                        'among --matchers, else none)')
    args = parser.parse_args(argv)
    if args.bootstrap < 0:
        parser.error('--bootstrap must be >= 0')
    if not 0.0 < args.level < 1.0:
        parser.error('--level must lie in (0, 1)')
    if args.candidate is None:
        args.candidate = CANDIDATE if CANDIDATE in args.matchers else None
    elif args.candidate not in args.matchers:
        parser.error(f'--candidate {args.candidate} is not among --matchers')
    if args.workers < 1:
        parser.error('--workers must be at least 1')
    if BASELINE not in args.matchers:
        parser.error(f'--matchers must include {BASELINE} (the gains are over it)')
    if len(set(args.matchers)) != len(args.matchers):
        parser.error('--matchers: a matcher is given twice')
    if 'diffmot' in args.trackers and not args.d2mp_checkpoint and not any(
            'model.tracker.motion.checkpoint=' in text for text in args.cfg_options):
        parser.error('DiffMOT needs a trained D2MP: --d2mp-checkpoint FILE (configs/d2mp/ trains one)')
    if args.d2mp_checkpoint and not osp.isfile(args.d2mp_checkpoint):
        parser.error(f'--d2mp-checkpoint {args.d2mp_checkpoint}: no such file')
    args.color_by = args.color_by or ('setting' if len(args.trackers) == 1 else 'tracker')
    return args


def main(argv: list[str] | None = None) -> dict:
    """Run the study; returns the rows, the per-video rows, the statistics, how many runs were computed and reused,
    and the seconds it took."""
    start = time.perf_counter()
    args = parse_args(argv)
    roots = setting_roots(args)
    videos, stats, subsets = {}, {}, {}
    for setting, root in roots.items():
        videos[setting] = sweep.resolve_videos(argparse.Namespace(split=None, videos=args.videos, **{
            k: root[k] for k in ('data_root', 'det_root')}))
        stats[setting] = video_statistics(root['data_root'], videos[setting])
        subsets[setting] = sparsest_third(stats[setting])
    runs = make_runs(args, roots, videos)
    computed, reused = execute(runs, args.workers)
    metrics = {run['id']: run_metrics(run) for run in runs}  # each run's metrics.json, read once
    rows = make_rows(runs, metrics, subsets)
    draws = bootstrap_groups(runs, metrics, subsets, args.bootstrap, args.seed) if args.bootstrap else None
    add_intervals(rows, draws, args.level)
    targets = target_rows(rows, draws, args.candidate, args.level) if args.candidate else []
    per_video = per_video_rows(runs, metrics, stats)
    threshold = matcher_table.SETTINGS['bytetrack'][1][args.match_setting]
    title = (f'HOTA gain over IoU ({args.match_setting} setting: ByteTrack match_thresh {threshold}; '
             f'{"+1 pixel" if args.pixels == "plus-one" else "no +1 pixel"} convention; preset {args.preset})')
    print_table(rows, title, args.level)
    if targets:
        print_targets(targets, args.candidate, args.level, args.bootstrap)
    seconds = print_times(runs)
    settings = dict(trackers=args.trackers, settings={s: dict(roots[s], fps=stats[s][videos[s][0]]['frame_rate'])
                                                      for s in args.settings},
                    matchers=args.matchers, match_setting=args.match_setting, match_thresh=threshold,
                    pixels=args.pixels, preset=args.preset, cfg_options=args.cfg_options,
                    d2mp_checkpoint=args.d2mp_checkpoint, videos=args.videos, bootstrap=args.bootstrap,
                    level=args.level, seed=args.seed, candidate=args.candidate)
    write_csv(rows, osp.join(args.work_dir, 'table.csv'))
    if targets:
        write_csv(targets, osp.join(args.work_dir, 'targets.csv'))
    report = dict(settings=settings, title=title, rows=rows, targets=targets, per_video=per_video, statistics=stats,
                  sparsest_third=subsets, seconds=seconds,
                  runs=[dict(tracker=r['tracker'], setting=r['setting'], matcher=r['matcher'], id=r['id'],
                             run_dir=r['run_dir'], config=r['config'], cfg_options=r['cfg_options'],
                             seconds=run_seconds(r)) for r in runs])
    write_json_atomic(report, osp.join(args.work_dir, 'table.json'))
    plot_gains(per_video, args.matchers, args.color_by, osp.join(args.work_dir, 'gain.png'),
               f'{title}\n{", ".join(args.trackers)} on {", ".join(args.settings)}; colour: {args.color_by}')
    print(f'table: {osp.join(args.work_dir, "table.csv")}, {osp.join(args.work_dir, "table.json")}; '
          f'plot: {osp.join(args.work_dir, "gain.png")}', flush=True)
    return dict(rows=rows, targets=targets, per_video=per_video, statistics=stats, sparsest_third=subsets,
                computed=computed, reused=reused, seconds=time.perf_counter() - start)


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
