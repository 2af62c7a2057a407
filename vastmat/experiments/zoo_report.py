"""The model zoo's report: the paper's Table 5 (trackers) and Table 8 (trackers x matchers) layouts, what each
tracker learned, the plots (HOTA by tracker, HOTA against training minutes, per-video HOTA CDF) and zoo.json."""
from __future__ import annotations

import os
import os.path as osp
from typing import Any

import numpy as np
from rich.console import Console

PROTOCOL_LABEL = dict(protocol1='P1 (Seen)', protocol2='P2 (Unseen)')
# Table 5's columns (TrackEval names) and Table 8's
TABLE5_METRICS = ('HOTA', 'MOTA', 'IDF1', 'DetA', 'AssA', 'MT', 'ML', 'CLR_FP', 'CLR_FN', 'IDSW', 'Frag')
TABLE8_METRICS = ('HOTA', 'DetA', 'AssA', 'IDF1', 'MOTA', 'CLR_FP', 'CLR_FN', 'IDSW')
# Table 5's columns after global linking (the zoo's --no-link leaves them out)
LINKED_METRICS = ('HOTA', 'IDSW')


def make_console() -> Console:
    """A rich console, wide enough for Table 5 when the output is a log file rather than a terminal."""
    return Console(width=None if Console().is_terminal else 200)


def runs_of(results: dict, protocol: str) -> dict:
    """``{(tracker, matcher): run}`` of one protocol's finished runs (skipped ones left out)."""
    return {(tracker, matcher): run for tracker, member in results[protocol].items()
            for matcher, run in member['runs'].items() if 'skipped' not in run}


def table5(results: dict, protocols: list[str], linked: dict | None = None) -> tuple[dict, list]:
    """Table 5 layout: one row per tracker (its original association), the metrics of each protocol; with
    ``linked`` (``{protocol: {tracker: dict(metrics=...)}}``, :func:`~.zoo_scoring.link_runs`), its HOTA and IDSW
    after global linking beside them."""
    rows: dict[str, dict] = {}
    columns = []
    for protocol in protocols:
        short = "P1" if protocol == "protocol1" else "P2"
        for metric in TABLE5_METRICS:
            columns.append((f'{protocol}/{metric}', f'{short} {metric.replace("CLR_", "")}', metric))
            if linked is not None and metric in LINKED_METRICS:  # beside the tracker's own
                columns.append((f'{protocol}/linked/{metric}', f'{short} {metric} linked', metric))
        for (tracker, matcher), run in runs_of(results, protocol).items():
            if matcher == 'original':
                rows.setdefault(tracker, {}).update({f'{protocol}/{m}': run['metrics']['COMBINED'][m]
                                                     for m in TABLE5_METRICS})
        if linked is not None:
            for tracker, run in linked.get(protocol, {}).items():
                if tracker in rows:
                    rows[tracker].update({f'{protocol}/linked/{m}': run['metrics']['COMBINED'][m]
                                          for m in LINKED_METRICS})
    rows = {name: row for name, row in rows.items() if len(row) == len(columns)}
    return rows, columns


def training_rows(results: dict, detections: dict, protocol: str) -> dict:
    """What each tracker learned: the trained part, its iterations and minutes, HOTA at the first and last kept
    checkpoint (the detector's training for the trackers on its boxes), and the calibration grid point of the
    official thresholds its test took (``thresholds``, its label, and ``threshold_scales``, its scales; None where
    it calibrated none)."""
    rows = {}
    detector = detections.get('training')
    for tracker, member in results[protocol].items():
        training = member.get('training') or detector
        curve = member.get('curve') or []
        run = member['runs'].get('original', {})
        if 'metrics' not in run:
            continue
        rows[tracker] = dict(
            learned=(training or {}).get('kind', 'given detections'),
            config=(training or {}).get('config'),
            checkpoint=(training or {}).get('checkpoint') or (detections.get('checkpoint') if training is detector
                                                               else None),
            iterations=(training or {}).get('iterations'),
            minutes=(training or {}).get('seconds', float('nan')) / 60,
            reused=(training or {}).get('reused'),
            thresholds=(member.get('thresholds') or {}).get('label'),
            threshold_scales=(member.get('thresholds') or {}).get('scales'),
            HOTA_first=curve[0]['HOTA'] if curve else float('nan'),
            first_iteration=curve[0]['iteration'] if curve else None,
            HOTA=run['metrics']['COMBINED']['HOTA'])
    return rows


def print_training_table(rows: dict, protocol: str, console: Console) -> None:
    from rich.table import Table

    from .zoo_calibration import grid_text
    table = Table(title=f'What each tracker learned ({PROTOCOL_LABEL.get(protocol, protocol)}): HOTA at the first '
                  'kept checkpoint and at the last')
    for header in ('tracker', 'learned', 'iterations', 'train min', 'thresholds', 'HOTA 1st ckpt (iter)', 'HOTA'):
        table.add_column(header, justify='left' if header in ('tracker', 'learned') else 'right')
    for name, row in rows.items():
        first = '-' if row['first_iteration'] is None else f'{100 * row["HOTA_first"]:.1f} ({row["first_iteration"]})'
        point = row.get('threshold_scales')
        table.add_row(name, row['learned'], str(row['iterations'] or '-'),
                      '-' if row['minutes'] != row['minutes'] else f'{row["minutes"]:.1f}',
                      '-' if point is None else f'{grid_text(point)} official', first, f'{100 * row["HOTA"]:.1f}')
    console.print(table)


def table8(results: dict, protocol: str) -> tuple[dict, list]:
    """Table 8 layout: one row per tracker and matcher on one protocol."""
    rows = {f'{tracker} + {matcher}': {m: run['metrics']['COMBINED'][m] for m in TABLE8_METRICS}
            for (tracker, matcher), run in runs_of(results, protocol).items()}
    return rows, [(m, m.replace('CLR_', ''), m) for m in TABLE8_METRICS]


def plot_hota_by_tracker(results: dict, protocol: str, path: str) -> None:
    """Grouped bars: HOTA of each tracker (groups) and matcher (bars)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from vastmat.utils.io import save_figure_atomic
    runs = runs_of(results, protocol)
    trackers = sorted({t for t, _ in runs})
    matchers = list(dict.fromkeys(m for _, m in runs))
    width = 0.8 / max(len(matchers), 1)
    fig, ax = plt.subplots(figsize=(max(5.5, 1.8 * len(trackers) + 3.5), 3.8))
    for k, matcher in enumerate(matchers):
        values = [100 * runs.get((t, matcher), {}).get('metrics', {}).get('COMBINED', {}).get('HOTA', np.nan)
                  for t in trackers]
        bars = ax.bar(np.arange(len(trackers)) + (k - (len(matchers) - 1) / 2) * width, values, width,
                      label=matcher)
        ax.bar_label(bars, fmt='%.1f', fontsize=7)
    ax.set_xticks(np.arange(len(trackers)), trackers)
    ax.set_ylabel('HOTA')
    ax.set_title(f'HOTA by tracker and matcher ({PROTOCOL_LABEL.get(protocol, protocol)})')
    ax.legend(fontsize=8, loc='upper left', bbox_to_anchor=(1.0, 1.0), title='matcher')
    ax.grid(axis='y', alpha=0.3)
    fig.tight_layout()
    save_figure_atomic(fig, path)


def plot_learning(results: dict, protocol: str, path: str) -> bool:
    """HOTA against training minutes of every tracker that learned (one point per kept checkpoint)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from vastmat.utils.io import save_figure_atomic
    curves = {t: m['curve'] for t, m in results[protocol].items() if m.get('curve')}
    if not curves:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for tracker, curve in sorted(curves.items()):
        ax.plot([p['minutes'] for p in curve], [100 * p['HOTA'] for p in curve], marker='o', label=tracker)
    ax.axhline(20, color='grey', linestyle=':', linewidth=1)
    ax.set_xlabel('training minutes (2 cores)')
    ax.set_ylabel('HOTA')
    ax.set_title(f'HOTA against training time, test videos ({PROTOCOL_LABEL.get(protocol, protocol)})')
    ax.legend(fontsize=8, loc='upper left', bbox_to_anchor=(1.0, 1.0))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure_atomic(fig, path)
    return True


def report(args: Any, detections: dict, results: dict, console: Console, linked: dict | None = None,
           expected: dict | None = None) -> dict:
    """Print Table 5 (with each tracker's HOTA after global linking, ``linked``), the training table and Table 8,
    save them (CSV, JSON) and the plots in ``args.work_dir`` (``args``: the zoo benchmark's options); zoo.json keeps
    the ``expected`` time of each protocol's run too."""
    from vastmat.evaluation.analysis import plot_hota_cdf
    from vastmat.models.trackers import zoo_trackers
    from vastmat.evaluation.report import ranked_table, write_ranked_csv
    from vastmat.utils.io import write_json_atomic
    from vastmat.utils.provenance import code_commit, now_iso

    from .report import write_report
    from .zoo_calibration import THRESHOLD_SCALES

    console.print('[4/4] results')
    skipped = {f'{protocol}/{t}/{m}': run['skipped'] for protocol in args.protocols
               for t, member in results[protocol].items() for m, run in member['runs'].items() if 'skipped' in run}
    for protocol in args.protocols:
        det = detections[protocol]
        if 'AP50' in det:
            console.print(f'  detector on {PROTOCOL_LABEL[protocol]} test videos: AP50 {100 * det["AP50"]:.1f}')
    rows5, columns5 = table5(results, args.protocols, linked)
    saved = ['zoo.json']
    out: dict[str, Any] = dict(settings=dict(data_root=args.data_root, protocols=args.protocols,
                                             matchers=args.matchers, preset=args.preset, trackers=args.trackers,
                                             threshold_scales=None if args.no_calibration else list(
                                                 args.threshold_scales or THRESHOLD_SCALES)),
                               detections=detections, skipped=skipped)
    if linked is not None:
        out['settings']['linker'] = args.linker
        out['linked'] = {protocol: {t: dict(COMBINED=run['metrics']['COMBINED'], reports=run['reports'])
                                    for t, run in linked.get(protocol, {}).items()} for protocol in args.protocols}
    if rows5:
        table, ranks = ranked_table(rows5, columns5, f'Table 5 layout: trackers with their original association '
                                    f'({args.data_root})', row_label='tracker')
        console.print(table)
        write_ranked_csv(rows5, ranks, [c[0] for c in columns5], osp.join(args.work_dir, 'table5.csv'), 'tracker')
        saved.append('table5.csv')
        out['table5'] = rows5
    out['table8'], out['training'], out['curves'] = {}, {}, {}
    for protocol in args.protocols:
        suffix = '' if len(args.protocols) == 1 else f'_{protocol}'
        out['training'][protocol] = training_rows(results, detections[protocol], protocol)
        out['curves'][protocol] = {t: m['curve'] for t, m in results[protocol].items() if m.get('curve')}
        out.setdefault('thresholds', {})[protocol] = {t: m['thresholds'] for t, m in results[protocol].items()
                                                      if m.get('thresholds')}
        if out['training'][protocol]:
            print_training_table(out['training'][protocol], protocol, console)
        learning = osp.join(args.work_dir, f'hota_vs_training{suffix}.png')
        if plot_learning(results, protocol, learning):
            saved.append(osp.basename(learning))
        elif osp.exists(learning):  # an earlier run's plot: it would show other trackers than this run's tables
            os.remove(learning)
        rows8, columns8 = table8(results, protocol)
        if not rows8:
            continue
        table, ranks = ranked_table(rows8, columns8, f'Table 8 layout: trackers x matchers, '
                                    f'{PROTOCOL_LABEL[protocol]}', row_label='tracker + matcher')
        console.print(table)
        without = sorted(m.name for m in zoo_trackers() if m.name in results[protocol] and not m.takes_matcher)
        if without:
            console.print(f'  without a matcher argument (their own association only): {", ".join(without)}')
        write_ranked_csv(rows8, ranks, [c[0] for c in columns8], osp.join(args.work_dir, f'table8{suffix}.csv'),
                         'tracker + matcher')
        out['table8'][protocol] = rows8
        saved += [f'table8{suffix}.csv', f'hota_cdf{suffix}.png', f'hota_by_tracker{suffix}.png']
        plot_hota_cdf({f'{t} + {m}': run['metrics'] for (t, m), run in runs_of(results, protocol).items()},
                      osp.join(args.work_dir, f'hota_cdf{suffix}.png'))
        plot_hota_by_tracker(results, protocol, osp.join(args.work_dir, f'hota_by_tracker{suffix}.png'))
    out['runs'] = {protocol: {f'{t}/{m}': dict(run['metrics'], seconds=run['seconds'])
                              for (t, m), run in runs_of(results, protocol).items()} for protocol in args.protocols}
    out['results_dirs'] = {protocol: {f'{t}/{m}': run['results'] for (t, m), run in runs_of(results, protocol).items()
                                      if run.get('results')} for protocol in args.protocols}
    out['provenance'] = dict(commit=code_commit(), date=now_iso())
    out['expected'] = expected or {}
    write_json_atomic(out, osp.join(args.work_dir, 'zoo.json'))
    page = write_report([args.work_dir], osp.join(args.work_dir, 'report.html'), 'VastMAT zoo benchmark',
                        log=console.print)
    saved.append('report.html')
    console.print(f'saved in {args.work_dir}: {", ".join(saved)}')
    console.print(f'report to browse (offline): {page["path"]} ({page["bytes"] / 1e6:.1f} MB)')
    return out
