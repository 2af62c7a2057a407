"""The motion-matcher study's table: rows and HOTA gains over IoU, bootstrap intervals, the candidate's targets,
per-video rows, and how they are printed, saved and plotted."""
from __future__ import annotations

import math

import numpy as np

from vastmat.utils.io import atomic_write, save_figure_atomic

from .runs import run_seconds, subset_metrics
from .settings import BASELINE, CDA_REFERENCES, COLUMNS, DENSE_ROW, MARKERS, SUBSETS

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
    """The targets of ``candidate``, one row per tracker, setting and video set: the margin of its HOTA
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
