#!/usr/bin/env python
"""The model-zoo benchmark, the README's main command: every tracker of the zoo trained where it learns and tracking
the test videos, with its original association and with CDA (fixed and adaptive) where it takes a matcher, in the
paper's Table 5 and Table 8 layouts.

    python tools/zoo_benchmark.py [--data-root DIR] [--protocols protocol1 [protocol2]] [--trackers NAME ...]
        [--work-dir W] [--det-root [PROTOCOL=]DIR ...] [--checkpoint [PROTOCOL=]CKPT ...] [--det-config CONFIG]
        [--train-iters N] [--matchers original cda_fixed cda_adaptive] [--preset vastmat] [--threads 2]

Steps, per protocol (the expected time is printed first, each stage's time when it ends):
1. data: ``--data-root`` (default ``data/demo``: the built-in demo dataset, rendered when absent);
2. detections, for the trackers on cached detections: ``--det-root``, or the ``--det-config`` detector (default:
   the demo's small YOLOX) with ``--checkpoint``, or, with neither, that detector trained on the protocol's train
   videos. Its boxes are dumped, once more with NMS 0.95 (TrackTrack's ``nms95`` set);
3. tracking: every zoo tracker the registry lists (:func:`vastmat.models.trackers.zoo_trackers`, plugins
   included), trained as its class declares (:mod:`vastmat.experiments.zoo`): on the cached detections with the
   learned inputs it reads (TrackTrack: a ReID model's features; DiffMOT: a D2MP), or as a whole joint or end-to-end
   model (FairMOT, QDTrack, TransTrack, MOTIP; TCEI on MOTIP's checkpoint). Every training runs once (``--train-iters``
   overrides every length) and is reused by later runs; each learned tracker is scored at every kept checkpoint;
4. evaluation (TrackEval, ``--preset``), the tables printed and saved: W/zoo.json, W/table5.csv, W/table8.csv,
   W/hota_cdf.png (per-video HOTA), W/hota_by_tracker.png, W/hota_vs_training.png; each run's results and metrics
   under W/<protocol>/.

The console shows the steps, progress (plain lines at least every 30 s when it is not a terminal) and the tables;
the runners' full logs stay in their work dirs.
"""
from __future__ import annotations

import argparse
import os.path as osp
import time
from typing import Any

import numpy as np
from rich.console import Console

DEMO_ROOT = 'data/demo'
DEFAULT_MATCHERS = ('original', 'cda_fixed', 'cda_adaptive')
DEFAULT_THREADS = 2  # torch threads while training (measured: see the README's note on shared cores)
TRACKING_SECONDS = 30  # expected tracking, testing and scoring time of one zoo tracker on the demo test videos
PROTOCOL_LABEL = dict(protocol1='P1 (Seen)', protocol2='P2 (Unseen)')
# Table 5's columns (TrackEval names) and Table 8's
TABLE5_METRICS = ('HOTA', 'MOTA', 'IDF1', 'DetA', 'AssA', 'MT', 'ML', 'CLR_FP', 'CLR_FN', 'IDSW', 'Frag')
TABLE8_METRICS = ('HOTA', 'DetA', 'AssA', 'IDF1', 'MOTA', 'CLR_FP', 'CLR_FN', 'IDSW')

# wide enough for Table 5 when the output is a log file rather than a terminal
console = Console(width=None if Console().is_terminal else 200)


def per_protocol(values: list[str] | None, protocols: list[str], flag: str) -> dict[str, str]:
    """``[DIR]`` (one protocol) or ``[protocol1=DIR, protocol2=DIR]`` as ``{protocol: DIR}``."""
    from vastmat.utils.errors import UserInputError
    if not values:
        return {}
    if len(values) == 1 and '=' not in values[0]:
        if len(protocols) > 1:
            raise UserInputError(f'{flag}: give one PROTOCOL=PATH per protocol ({", ".join(protocols)})')
        return {protocols[0]: values[0]}
    out = {}
    for value in values:
        protocol, sep, path = value.partition('=')
        if not sep or protocol not in protocols:
            raise UserInputError(f'{flag} {value}: expected PROTOCOL=PATH with PROTOCOL one of {", ".join(protocols)}')
        out[protocol] = path
    return out


def ensure_data(data_root: str) -> None:
    """Render the demo dataset when the default root is absent; any other missing root is an error."""
    from vastmat.utils.errors import UserInputError
    if osp.isdir(osp.join(data_root, 'videos')):
        return
    if osp.normpath(data_root) != osp.normpath(DEMO_ROOT):
        raise UserInputError(f'{data_root}: not a VastMAT root (no videos/ folder)')
    from vastmat.datasets.demo_data import make_demo_dataset
    start = time.perf_counter()
    with console.status('rendering the demo dataset'):
        make_demo_dataset(data_root)
    console.print(f'[1/4] demo dataset rendered to {data_root} ({time.perf_counter() - start:.0f} s)')


def get_detections(args: argparse.Namespace, ctx: Any, det_roots: dict, checkpoints: dict) -> dict:
    """The protocol's cached detections: given, or from the (given or trained) detector; returns their source."""
    from vastmat.experiments.zoo import detector_boxes, train
    protocol = ctx.protocol
    if protocol in det_roots:
        console.print(f'  {protocol}: cached detections from {det_roots[protocol]}')
        return dict(det_root=det_roots[protocol], source='given')
    work_dir = osp.join(args.work_dir, protocol, 'detector')
    checkpoint = checkpoints.get(protocol)
    out = dict(source='detector')
    if checkpoint is None:
        training = train(ctx, args.det_config, f'{protocol} detector')
        checkpoint = training.checkpoint
        out['training'] = dict(config=args.det_config, seconds=training.seconds, iterations=training.max_iters,
                               reused=training.reused, kind='detector')
    metrics, det_root, extra = detector_boxes(ctx, args.det_config, checkpoint, work_dir)
    nms95_root = extra['nms95']
    scores = {key: metrics.get(f'det/{key}', float('nan')) for key in ('AP50', 'AP75', 'AP')}
    console.print(f'  {protocol}: detector ' + ', '.join(f'{k} {100 * v:.1f}' for k, v in scores.items())
                  + f' on the test videos; boxes in {det_root} (NMS 0.95: {nms95_root})')
    return dict(out, det_root=det_root, checkpoint=checkpoint, extra_det_roots=extra, **scores)


class Stage:
    """Prints a stage's start and, when it ends, its time."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __enter__(self) -> 'Stage':
        self.start = time.perf_counter()
        console.print(self.text)
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is None:
            console.print(f'  ({time.perf_counter() - self.start:.0f} s)')


def run_members(args: argparse.Namespace, ctx: Any, members: list, detections: dict | None, step: str) -> dict:
    """Every selected zoo tracker: ``{tracker: dict(runs={matcher: run}, curve=[...], training=...)}``."""
    from vastmat.experiments.zoo import run_cached_member, run_model_member
    by_name = {m.name: m for m in zoo_members()}
    out = {}
    for member in members:
        matchers = args.matchers if member.takes_matcher else ['original']
        with Stage(f'{step} {ctx.protocol}: {member.name}'):
            if member.on_cached_detections:
                if detections is None:
                    continue
                out[member.name] = run_cached_member(ctx, member, matchers, detections['det_root'],
                                                     detections.get('extra_det_roots') or {})
            else:
                out[member.name] = run_model_member(ctx, member, matchers, by_name)
            for matcher, run in out[member.name]['runs'].items():
                if 'skipped' in run:
                    console.print(f'  {member.name} + {matcher}: skipped, {run["skipped"]}')
            hota = out[member.name]['runs'].get('original', {}).get('metrics', {}).get('COMBINED', {}).get('HOTA')
            if hota is not None:
                curve = out[member.name]['curve']
                trend = ' -> '.join(f'{100 * p["HOTA"]:.1f}' for p in curve)
                console.print(f'  {member.name}: HOTA {100 * hota:.1f}' + (
                    f' (at its checkpoints: {trend})' if len(curve) > 1 else ''))
    return out


def zoo_members() -> list:
    from vastmat.models.trackers import zoo_trackers
    return zoo_trackers()


def runs_of(results: dict, protocol: str) -> dict:
    """``{(tracker, matcher): run}`` of one protocol's finished runs (skipped ones left out)."""
    return {(tracker, matcher): run for tracker, member in results[protocol].items()
            for matcher, run in member['runs'].items() if 'skipped' not in run}


def table5(results: dict, protocols: list[str]) -> tuple[dict, list]:
    """Table 5 layout: one row per tracker (its original association), the metrics of each protocol."""
    rows: dict[str, dict] = {}
    columns = []
    for protocol in protocols:
        for metric in TABLE5_METRICS:
            columns.append((f'{protocol}/{metric}', f'{"P1" if protocol == "protocol1" else "P2"} '
                            f'{metric.replace("CLR_", "")}', metric))
        for (tracker, matcher), run in runs_of(results, protocol).items():
            if matcher == 'original':
                rows.setdefault(tracker, {}).update({f'{protocol}/{m}': run['metrics']['COMBINED'][m]
                                                     for m in TABLE5_METRICS})
    rows = {name: row for name, row in rows.items() if len(row) == len(columns)}
    return rows, columns


def training_rows(results: dict, detections: dict, protocol: str) -> dict:
    """What each tracker learned: the trained part, its iterations and minutes, HOTA at the first and last kept
    checkpoint (the detector's training for the trackers on its boxes)."""
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
            iterations=(training or {}).get('iterations'),
            minutes=(training or {}).get('seconds', float('nan')) / 60,
            reused=(training or {}).get('reused'),
            HOTA_first=curve[0]['HOTA'] if curve else float('nan'),
            first_iteration=curve[0]['iteration'] if curve else None,
            HOTA=run['metrics']['COMBINED']['HOTA'])
    return rows


def print_training_table(rows: dict, protocol: str) -> None:
    from rich.table import Table
    table = Table(title=f'What each tracker learned ({PROTOCOL_LABEL.get(protocol, protocol)}): HOTA at the first '
                  'kept checkpoint and at the last')
    for header in ('tracker', 'learned', 'iterations', 'train min', 'HOTA 1st ckpt (iter)', 'HOTA'):
        table.add_column(header, justify='left' if header in ('tracker', 'learned') else 'right')
    for name, row in rows.items():
        first = '-' if row['first_iteration'] is None else f'{100 * row["HOTA_first"]:.1f} ({row["first_iteration"]})'
        table.add_row(name, row['learned'], str(row['iterations'] or '-'),
                      '-' if row['minutes'] != row['minutes'] else f'{row["minutes"]:.1f}', first,
                      f'{100 * row["HOTA"]:.1f}')
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


def report(args: argparse.Namespace, detections: dict, results: dict) -> dict:
    """Print Table 5, the training table and Table 8, save them (CSV, JSON) and the plots."""
    from vastmat.evaluation.analysis import plot_hota_cdf
    from vastmat.evaluation.report import ranked_table, write_ranked_csv
    from vastmat.utils.io import write_json_atomic

    console.print('[4/4] results')
    skipped = {f'{protocol}/{t}/{m}': run['skipped'] for protocol in args.protocols
               for t, member in results[protocol].items() for m, run in member['runs'].items() if 'skipped' in run}
    for protocol in args.protocols:
        det = detections[protocol]
        if 'AP50' in det:
            console.print(f'  detector on {PROTOCOL_LABEL[protocol]} test videos: AP50 {100 * det["AP50"]:.1f}')
    rows5, columns5 = table5(results, args.protocols)
    saved = ['zoo.json']
    out: dict[str, Any] = dict(settings=dict(data_root=args.data_root, protocols=args.protocols,
                                             matchers=args.matchers, preset=args.preset, trackers=args.trackers),
                               detections=detections, skipped=skipped)
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
        if out['training'][protocol]:
            print_training_table(out['training'][protocol], protocol)
        if plot_learning(results, protocol, osp.join(args.work_dir, f'hota_vs_training{suffix}.png')):
            saved.append(f'hota_vs_training{suffix}.png')
        rows8, columns8 = table8(results, protocol)
        if not rows8:
            continue
        table, ranks = ranked_table(rows8, columns8, f'Table 8 layout: trackers x matchers, '
                                    f'{PROTOCOL_LABEL[protocol]}', row_label='tracker + matcher')
        console.print(table)
        without = sorted(m.name for m in zoo_members() if m.name in results[protocol] and not m.takes_matcher)
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
    write_json_atomic(out, osp.join(args.work_dir, 'zoo.json'))
    console.print(f'saved in {args.work_dir}: {", ".join(saved)}')
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from vastmat.evaluation.mot_eval import PRESETS
    from vastmat.experiments.zoo import DEMO_DETECTOR
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', default=DEMO_ROOT,
                        help=f'VastMAT root (default {DEMO_ROOT}, rendered if absent)')
    parser.add_argument('--protocols', nargs='+', default=['protocol1'], choices=('protocol1', 'protocol2'))
    parser.add_argument('--trackers', nargs='+', metavar='NAME', help='run only these zoo trackers (default: all)')
    parser.add_argument('--work-dir', default='work_dirs/zoo_benchmark')
    parser.add_argument('--det-root', nargs='+', metavar='[PROTOCOL=]DIR', help='cached detections of the test '
                        'videos (<video>.txt or <video>/det/det.txt); the detector is skipped')
    parser.add_argument('--checkpoint', nargs='+', metavar='[PROTOCOL=]CKPT', help='detector checkpoint(s) of '
                        '--det-config (default: train it on the protocol\'s train videos)')
    parser.add_argument('--det-config', default=DEMO_DETECTOR, help='detector config (default: the demo YOLOX)')
    parser.add_argument('--train-iters', type=int, help="iterations of every training (default: each config's)")
    parser.add_argument('--matchers', nargs='+', default=list(DEFAULT_MATCHERS),
                        help='original (each tracker\'s own) and/or names of configs/matchers/*.py')
    parser.add_argument('--preset', default='vastmat', choices=PRESETS, help='evaluation preset')
    parser.add_argument('--threads', type=int, default=DEFAULT_THREADS,
                        help=f'torch CPU threads (default {DEFAULT_THREADS})')
    args = parser.parse_args(argv)
    if args.train_iters is not None and args.train_iters < 1:
        parser.error(f'--train-iters must be >= 1, got {args.train_iters}')
    return args


def print_plan(ctx: Any, members: list, args: argparse.Namespace, det_roots: dict, checkpoints: dict) -> None:
    """What will be trained and how long it is expected to take (measured seconds per iteration, 2 cores)."""
    from vastmat.experiments.zoo import training_plan
    plan = training_plan(ctx, members)
    if ctx.protocol not in det_roots and ctx.protocol not in checkpoints and any(
            m.on_cached_detections for m in members) and args.det_config not in {c for _, c, _ in plan}:
        from vastmat.experiments.zoo import NUM_CHECKPOINTS, training_config
        from vastmat.experiments.zoo_training import expected_seconds, find_training, set_schedule
        cfg = training_config(ctx, args.det_config, 'detector')
        set_schedule(cfg, ctx.train_iters, NUM_CHECKPOINTS)
        plan.insert(0, ('detector: ' + osp.basename(args.det_config), args.det_config,
                        None if find_training(cfg) else expected_seconds(cfg, ctx.train_iters)))
    todo = [(label, s) for label, _, s in plan if s is not None]
    reused = [label for label, _, s in plan if s is None]
    total = sum(s for _, s in todo) + TRACKING_SECONDS * len(members)
    console.print(f'  {ctx.protocol}: expected about {total / 60:.0f} min on 2 cores: '
                  + (', '.join(f'{label} {s / 60:.1f} min' for label, s in todo) or 'no training')
                  + f', tracking and scoring {TRACKING_SECONDS * len(members) / 60:.1f} min'
                  + (f'; reusing {len(reused)} finished training(s)' if reused else ''))


def main(argv: list[str] | None = None) -> dict:
    import torch

    from vastmat.experiments.zoo import select_members
    args = parse_args(argv)
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    try:
        return run(args, select_members(args.trackers))
    finally:
        torch.set_num_threads(threads)  # a caller in the same process (a test) keeps its own setting


def run(args: argparse.Namespace, members: list) -> dict:
    from vastmat.apis import video_list
    from vastmat.utils.errors import UserInputError
    from vastmat.experiments.zoo import ZooContext
    start = time.perf_counter()
    det_roots = per_protocol(args.det_root, args.protocols, '--det-root')
    checkpoints = per_protocol(args.checkpoint, args.protocols, '--checkpoint')
    for path in [*det_roots.values(), *checkpoints.values()]:
        if not osp.exists(path):
            raise UserInputError(f'{path}: no such file or folder')
    from vastmat.experiments.zoo import matcher_fragment_or_none
    for name in args.matchers:
        matcher_fragment_or_none(name)  # an unknown matcher name fails here, before any training
    ensure_data(args.data_root)
    detections, results = {}, {}
    for protocol in args.protocols:
        videos = video_list(args.data_root, f'{protocol}/test')
        if not videos:
            raise UserInputError(f'{args.data_root}: {protocol}/test lists no videos')
        ctx = ZooContext(args.data_root, protocol, videos, osp.join(args.work_dir, protocol), args.preset,
                         args.train_iters, log=console.print)
        print_plan(ctx, members, args, det_roots, checkpoints)
        detections[protocol] = {}
        if any(m.on_cached_detections for m in members):
            with Stage(f'[2/4] {protocol}: detections of '
                       f'{osp.basename(args.det_config) if protocol not in det_roots else det_roots[protocol]}'):
                detections[protocol] = get_detections(args, ctx, det_roots, checkpoints)
        results[protocol] = run_members(args, ctx, members, detections[protocol] or None, '[3/4]')
    out = report(args, detections, results)
    out['seconds'] = time.perf_counter() - start
    console.print(f'zoo benchmark finished in {out["seconds"]:.0f} s')
    return out


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
