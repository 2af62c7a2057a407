"""Matchers against IoU where animals are many and slow and where they are few and fast (issue 16, item 3): the
motion-matcher study (``tools/analysis/motion_matcher_study.py`` is its command line).

Every tracker of the matcher studies (:func:`~vastmat.experiments.matcher_study.study_trackers`) runs with every
matcher on every setting's videos, on cached detections:

* ``10fps`` (dense): AnimalTrack train at 10 FPS with its own simulated detections (a folder with gt/ and dets/);
* ``5fps`` and ``3fps`` (sparse / fast): AnimalTrack train (30 FPS) strided by 6 and 10, detections simulated
  (:func:`simulated_setting`) once into W/data/AnimalTrack-<fps>fps-sim and reused while its simulation.json (source,
  stride, seed) matches.

In each setting the table also scores the sparsest third of the videos (the ``round(n / 3)`` videos with the fewest
animals per frame, ties by name) from the same tracks (only the scoring is redone, over the subset, and cached in the
run's folder). A run is one tracker, matcher and setting: the tracker's study config with the matcher swapped in
(:func:`vastmat.apis.swap_matcher`) and the matcher table's options (:func:`~.matcher_study.run_options`), run as a
sweep's run (:mod:`vastmat.experiments.sweep`: W/runs/<id>/, reused when its metrics.json exists). Per tracker: its
``study_options`` and, for a tracker with ``motion_checkpoint_key`` (DiffMOT), the trained motion model.

Per video, from the setting's ground truth (valid rows; the strided frames of a sparse setting): animals per frame
(ground-truth boxes over frames) and the normalised displacement (the median, over same-identity pairs of boxes in
consecutive frames, of the centre distance over the mean of the two boxes' diagonals;
:func:`vastmat.datasets.statistics.normalized_displacement`). Outputs in W: table.csv, targets.csv, table.json and
gain.png (per-video HOTA gain over IoU against animals per frame and against normalised displacement).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import os.path as osp
import shutil
import time
from dataclasses import dataclass, field

import numpy as np

from vastmat.utils.errors import UserInputError
from vastmat.utils.io import atomic_write, save_figure_atomic, write_json_atomic

from .matcher_study import StudyTracker, matcher_config, run_options, study_trackers

# name: (stride of AnimalTrack train, None: the 10 FPS set as it is)
SETTINGS = {'10fps': None, '5fps': 6, '3fps': 10}
DEFAULT_MATCHERS = ('iou', 'cda-fixed', 'cda-adaptive', 'cda-motion-adaptive')
BASELINE = 'iou'
SUBSETS = ('all', 'sparsest third')
COLUMNS = ('HOTA', 'AssA', 'IDF1')
# issue 16's targets for the candidate matcher: on the dense setting (all its videos) at least IoU's HOTA; on every
# other row (the sparse / fast settings and each setting's sparsest third) at least the better CDA's
DENSE_ROW = ('10fps', 'all')
CDA_REFERENCES = ('cda-fixed', 'cda-adaptive')
CANDIDATE = 'cda-motion-adaptive'
MARKERS = ('o', 's', '^', 'D', 'v', 'P', 'X', '*')
# the match setting (paper / official) is named by ByteTrack's first-stage threshold, stated in the title
SETTING_TRACKER = 'bytetrack'
# what the sparse settings' simulation.json records as their maker (the same simulation as that tool's)
SIMULATOR = 'tools/data/simulate_detections.py'


@dataclass
class StudySettings:
    """The study as the command line gives it (``tools/analysis/motion_matcher_study.py``'s flags)."""

    work_dir: str
    dense_root: str
    animaltrack_root: str
    trackers: list[str] | None = None  # None: every study tracker
    settings: list[str] = field(default_factory=lambda: list(SETTINGS))
    matchers: list[str] = field(default_factory=lambda: list(DEFAULT_MATCHERS))
    videos: list[str] | None = None
    d2mp_checkpoint: str | None = None
    workers: int = 1
    match_setting: str = 'official'
    pixels: str = 'plus-one'
    preset: str = 'vastmat'
    sim_seed: int = 1
    color_by: str | None = None
    cfg_options: list[str] = field(default_factory=list)
    bootstrap: int = 1000
    level: float = 0.9
    seed: int = 0
    candidate: str | None = None

    def check(self) -> None:
        """Every setting valid (one :class:`UserInputError` naming the flag), defaults filled in."""
        known = study_trackers()
        self.trackers = list(self.trackers or known)
        unknown = [t for t in self.trackers if t not in known]
        if unknown:
            raise UserInputError(f'--trackers {" ".join(unknown)}: not a study tracker (known: {", ".join(known)})')
        if self.bootstrap < 0:
            raise UserInputError('--bootstrap must be >= 0')
        if not 0.0 < self.level < 1.0:
            raise UserInputError('--level must lie in (0, 1)')
        if self.candidate is None:
            self.candidate = CANDIDATE if CANDIDATE in self.matchers else None
        elif self.candidate not in self.matchers:
            raise UserInputError(f'--candidate {self.candidate} is not among --matchers')
        if self.workers < 1:
            raise UserInputError('--workers must be at least 1')
        if BASELINE not in self.matchers:
            raise UserInputError(f'--matchers must include {BASELINE} (the gains are over it)')
        if len(set(self.matchers)) != len(self.matchers):
            raise UserInputError('--matchers: a matcher is given twice')
        for name in self.trackers:
            key = known[name].motion_checkpoint_key
            if key and not self.d2mp_checkpoint and not any(f'model.tracker.{key}=' in t for t in self.cfg_options):
                raise UserInputError(f'{name} needs a trained motion model: --d2mp-checkpoint FILE (configs/d2mp/ '
                                     'trains one)')
        if self.d2mp_checkpoint and not osp.isfile(self.d2mp_checkpoint):
            raise UserInputError(f'--d2mp-checkpoint {self.d2mp_checkpoint}: no such file')
        self.color_by = self.color_by or ('setting' if len(self.trackers) == 1 else 'tracker')


# ------------------------------------------------------------------------------------------------------ data

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
    from rich.table import Table

    from vastmat.experiments.sweep.report import wide_console
    console = wide_console()
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
    from rich.table import Table

    from vastmat.experiments.sweep.report import wide_console
    console = wide_console()
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



# ------------------------------------------------------------------------------------------------------ the study

def run_study(study: StudySettings) -> dict:
    """Run the study (checked first); returns the rows, the targets, the per-video rows, the statistics, how many
    runs were computed and reused, and the seconds it took."""
    from vastmat.experiments.sweep.runs import resolve_videos
    start = time.perf_counter()
    study.check()
    roots = setting_roots(study)
    videos, stats, subsets = {}, {}, {}
    for setting, root in roots.items():
        videos[setting] = resolve_videos(argparse.Namespace(split=None, videos=study.videos, **{
            k: root[k] for k in ('data_root', 'det_root')}))
        stats[setting] = video_statistics(root['data_root'], videos[setting])
        subsets[setting] = sparsest_third(stats[setting])
    runs = make_runs(study, roots, videos)
    computed, reused = execute(runs, study.workers)
    metrics = {run['id']: run_metrics(run) for run in runs}  # each run's metrics.json, read once
    rows = make_rows(runs, metrics, subsets)
    draws = bootstrap_groups(runs, metrics, subsets, study.bootstrap, study.seed) if study.bootstrap else None
    add_intervals(rows, draws, study.level)
    targets = target_rows(rows, draws, study.candidate, study.level) if study.candidate else []
    per_video = per_video_rows(runs, metrics, stats)
    threshold = study_trackers()[SETTING_TRACKER].threshold(study.match_setting)
    title = (f'HOTA gain over IoU ({study.match_setting} setting: ByteTrack match_thresh {threshold}; '
             f'{"+1 pixel" if study.pixels == "plus-one" else "no +1 pixel"} convention; preset {study.preset})')
    print_table(rows, title, study.level)
    if targets:
        print_targets(targets, study.candidate, study.level, study.bootstrap)
    seconds = print_times(runs)
    settings = dict(trackers=study.trackers, settings={s: dict(roots[s], fps=stats[s][videos[s][0]]['frame_rate'])
                                                       for s in study.settings},
                    matchers=study.matchers, match_setting=study.match_setting, match_thresh=threshold,
                    pixels=study.pixels, preset=study.preset, cfg_options=study.cfg_options,
                    d2mp_checkpoint=study.d2mp_checkpoint, videos=study.videos, bootstrap=study.bootstrap,
                    level=study.level, seed=study.seed, candidate=study.candidate)
    write_csv(rows, osp.join(study.work_dir, 'table.csv'))
    if targets:
        write_csv(targets, osp.join(study.work_dir, 'targets.csv'))
    report = dict(settings=settings, title=title, rows=rows, targets=targets, per_video=per_video, statistics=stats,
                  sparsest_third=subsets, seconds=seconds,
                  runs=[dict(tracker=r['tracker'], setting=r['setting'], matcher=r['matcher'], id=r['id'],
                             run_dir=r['run_dir'], config=r['config'], cfg_options=r['cfg_options'],
                             seconds=run_seconds(r)) for r in runs])
    write_json_atomic(report, osp.join(study.work_dir, 'table.json'))
    plot_gains(per_video, study.matchers, study.color_by, osp.join(study.work_dir, 'gain.png'),
               f'{title}\n{", ".join(study.trackers)} on {", ".join(study.settings)}; colour: {study.color_by}')
    print(f'table: {osp.join(study.work_dir, "table.csv")}, {osp.join(study.work_dir, "table.json")}; '
          f'plot: {osp.join(study.work_dir, "gain.png")}', flush=True)
    return dict(rows=rows, targets=targets, per_video=per_video, statistics=stats, sparsest_third=subsets,
                computed=computed, reused=reused, seconds=time.perf_counter() - start)
