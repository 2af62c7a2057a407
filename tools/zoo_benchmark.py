#!/usr/bin/env python
"""The model-zoo benchmark, the README's main command: every tracking-by-detection tracker of the zoo, each with its
original association and with CDA (fixed and adaptive), on one detector's cached detections, in the paper's
Table 5 and Table 8 layouts.

    python tools/zoo_benchmark.py [--data-root DIR] [--protocols protocol1 [protocol2]] [--work-dir W]
        [--det-root [PROTOCOL=]DIR ...] [--checkpoint [PROTOCOL=]CKPT ...] [--det-config CONFIG]
        [--train-iters N] [--matchers original cda_fixed cda_adaptive] [--preset vastmat]

Steps, per protocol:
1. data: ``--data-root`` (default ``data/demo``: the built-in demo dataset, rendered when absent);
2. detections: ``--det-root`` (det.txt files of the protocol's test videos), or the ``--det-config`` detector
   (default: the demo's small YOLOX) with ``--checkpoint``, or, with neither, that detector trained on the
   protocol's train videos (``--train-iters``; a finished training in the work dir is reused). The detector is
   tested on the test videos (its AP50 is printed) and its boxes dumped, once more with NMS 0.95 (TrackTrack's
   ``nms95`` set: the boxes NMS suppressed);
3. tracking: every tracker the registry lists as a zoo member (:func:`vastmat.models.trackers.zoo_trackers`,
   plugins included) with its official defaults, once per matcher (``original``: the tracker's own; other names:
   ``configs/matchers/<name>.py``), on the cached detections (:func:`vastmat.apis.track_cached`);
4. evaluation (TrackEval, ``--preset``), the tables printed and saved: W/zoo.json, W/table5.csv, W/table8.csv,
   W/hota_cdf.png (per-video HOTA), W/hota_by_tracker.png; each run's results and metrics under
   W/<protocol>/<tracker>/<matcher>/.

The console shows the steps, progress bars and the tables; the runners' full logs stay in their work dirs.
"""
from __future__ import annotations

import argparse
import os.path as osp
import time
from typing import Any

import numpy as np
from mmengine.config import Config
from rich.console import Console

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
DEMO_ROOT = 'data/demo'
DEMO_DETECTOR = osp.join(REPO, 'configs', 'yolox', 'yolox_tiny_1xb8-1200it_vastmat-demo.py')
TRACKING_BASE = osp.join(REPO, 'configs', '_base_', 'tracking_cached-dets.py')
DEFAULT_MATCHERS = ('original', 'cda_fixed', 'cda_adaptive')
PROTOCOL_LABEL = dict(protocol1='P1 (Seen)', protocol2='P2 (Unseen)')
# Table 5's columns (TrackEval names) and Table 8's
TABLE5_METRICS = ('HOTA', 'MOTA', 'IDF1', 'DetA', 'AssA', 'MT', 'ML', 'CLR_FP', 'CLR_FN', 'IDSW', 'Frag')
TABLE8_METRICS = ('HOTA', 'DetA', 'AssA', 'IDF1', 'MOTA', 'CLR_FP', 'CLR_FN', 'IDSW')

# wide enough for Table 5 when the output is a log file rather than a terminal
console = Console(width=None if Console().is_terminal else 200)


def per_protocol(values: list[str] | None, protocols: list[str], flag: str) -> dict[str, str]:
    """``[DIR]`` (one protocol) or ``[protocol1=DIR, protocol2=DIR]`` as ``{protocol: DIR}``."""
    from vastmat.engine.cli import UserInputError
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
    from vastmat.engine.cli import UserInputError
    if osp.isdir(osp.join(data_root, 'videos')):
        return
    if osp.normpath(data_root) != osp.normpath(DEMO_ROOT):
        raise UserInputError(f'{data_root}: not a VastMAT root (no videos/ folder)')
    from vastmat.datasets.demo_data import make_demo_dataset
    start = time.perf_counter()
    with console.status('rendering the demo dataset'):
        make_demo_dataset(data_root)
    console.print(f'[1/4] demo dataset rendered to {data_root} ({time.perf_counter() - start:.0f} s)')


def _set_datasets(node: Any, data_root: str, protocol: str) -> None:
    """Point every VastMATDataset of a config (wrapped ones included) at ``data_root`` and ``protocol``."""
    if isinstance(node, dict):
        if node.get('type') == 'VastMATDataset':
            node['data_root'], node['protocol'] = data_root, protocol
        for value in node.values():
            _set_datasets(value, data_root, protocol)
    elif isinstance(node, (list, tuple)):
        for value in node:
            _set_datasets(value, data_root, protocol)


def _detector_config(config: str, data_root: str, protocol: str, work_dir: str) -> Config:
    cfg = Config.fromfile(config)
    for key in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        if cfg.get(key):
            _set_datasets(cfg[key], data_root, protocol)
    cfg.work_dir = work_dir
    cfg.launcher = 'none'
    cfg.custom_hooks = list(cfg.get('custom_hooks') or []) + [dict(type='ProgressBarHook',
                                                                   description=f'  {protocol} detector')]
    return cfg


def train_detector(config: str, data_root: str, protocol: str, work_dir: str, iters: int | None) -> str:
    """Train the detector on the protocol's train videos; returns the checkpoint. A finished training of the same
    config (its content), data, protocol and length is reused: each lives in ``work_dir/<hash of those>``."""
    import hashlib
    import json

    from vastmat.engine.cli import UserInputError, build_quiet_runner
    cfg = _detector_config(config, data_root, protocol, work_dir)
    if 'max_iters' not in cfg.train_cfg:
        if iters is not None:
            raise UserInputError(f'--train-iters: {config} trains by epochs (train_cfg has no max_iters)')
    elif iters is not None:
        cfg.train_cfg.max_iters = iters
        for scheduler in cfg.param_scheduler:
            scheduler['end'] = min(scheduler.get('end', iters), iters)
            scheduler['begin'] = min(scheduler.get('begin', 0), iters - 1)
        cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=iters, by_epoch=False)
    length = cfg.train_cfg.get('max_iters', cfg.train_cfg.get('max_epochs'))
    cfg.train_cfg.val_begin = length + 1  # no validation while training: tested once below, on the test videos
    identity = json.dumps(dict(config=cfg.to_dict(), data_root=osp.realpath(data_root)), sort_keys=True,
                          default=repr)
    cfg.work_dir = osp.join(work_dir, hashlib.sha1(identity.encode()).hexdigest()[:12])
    last = osp.join(cfg.work_dir, 'last_checkpoint')  # mmengine writes the path of the last checkpoint here
    if osp.isfile(last):
        checkpoint = open(last, encoding='utf-8').read().strip()
        if osp.isfile(checkpoint):
            console.print(f'  {protocol}: reusing the detector trained before with the same settings, {checkpoint}')
            return checkpoint
    runner = build_quiet_runner(cfg)
    start = time.perf_counter()
    runner.train()
    unit = 'iterations' if 'max_iters' in cfg.train_cfg else 'epochs'
    console.print(f'  {protocol}: detector trained ({length} {unit} in {time.perf_counter() - start:.0f} s; '
                  f'log: {runner.log_dir})')
    return open(last, encoding='utf-8').read().strip()


def detect(config: str, checkpoint: str, data_root: str, protocol: str, work_dir: str, out_dir: str,
           nms_iou: float | None = None) -> dict:
    """Test the detector on the protocol's test videos and dump its boxes to ``out_dir`` (with NMS at ``nms_iou``
    when given); returns its metrics."""
    from vastmat.engine.cli import apply_tracking_options, build_quiet_runner
    from vastmat.evaluation.metrics import DumpTrackingDetections
    cfg = _detector_config(config, data_root, protocol, work_dir)
    if nms_iou is not None:
        cfg.model.test_cfg.nms = dict(type='nms', iou_threshold=nms_iou)
    cfg.load_from = checkpoint
    cfg.test_dataloader.dataset.split = 'test'
    cfg.test_evaluator = [dict(type='VastMATDetMetric')]
    apply_tracking_options(cfg, argparse.Namespace(dump_dets=out_dir))
    runner = build_quiet_runner(cfg)
    runner.test_evaluator.metrics.append(DumpTrackingDetections(out_dir))
    return runner.test()


def get_detections(args: argparse.Namespace, protocol: str, det_roots: dict, checkpoints: dict) -> dict:
    """The protocol's cached detections: given, or from the (given or trained) detector; returns their source."""
    if protocol in det_roots:
        console.print(f'[2/4] {protocol}: cached detections from {det_roots[protocol]}')
        return dict(det_root=det_roots[protocol], source='given')
    work_dir = osp.join(args.work_dir, protocol, 'detector')
    console.print(f'[2/4] {protocol}: detections of {osp.basename(args.det_config)}')
    checkpoint = checkpoints.get(protocol) or train_detector(args.det_config, args.data_root, protocol, work_dir,
                                                             args.train_iters)
    det_root = osp.join(args.work_dir, protocol, 'dets')
    metrics = detect(args.det_config, checkpoint, args.data_root, protocol, work_dir, det_root)
    nms95_root = osp.join(args.work_dir, protocol, 'dets_nms95')
    detect(args.det_config, checkpoint, args.data_root, protocol, work_dir, nms95_root, nms_iou=0.95)
    scores = {key: metrics.get(f'det/{key}', float('nan')) for key in ('AP50', 'AP75', 'AP')}
    console.print(f'  {protocol}: detector ' + ', '.join(f'{k} {100 * v:.1f}' for k, v in scores.items())
                  + f' on the test videos; boxes in {det_root} (NMS 0.95: {nms95_root})')
    return dict(det_root=det_root, source='detector', checkpoint=checkpoint, extra_det_roots=dict(nms95=nms95_root),
                **scores)


def matcher_config(name: str) -> dict | None:
    """None for the tracker's own matcher, else the ``matcher`` of ``configs/matchers/<name>.py``."""
    from vastmat.apis import matcher_fragment
    return None if name == 'original' else matcher_fragment(name)


def run_trackers(args: argparse.Namespace, protocol: str, det_root: str, videos: list[str],
                 extra_det_roots: dict | None = None) -> dict:
    """Every zoo tracker with every matcher on the protocol's detections (and named extra detection sets);
    ``{(tracker, matcher): result}``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from vastmat.apis import init_model, track_and_score
    from vastmat.models.trackers import zoo_trackers
    from vastmat.structures.tracking import MissingTrackerInput

    trackers = zoo_trackers()
    runs = [(t, m) for t in trackers for m in args.matchers]
    console.print(f'[3/4] {protocol}: {len(trackers)} tracker(s) ({", ".join(t.name for t in trackers)}) x '
                  f'{len(args.matchers)} matcher(s) on {len(videos)} test video(s)')
    out = {}
    with Progress(TextColumn('{task.description}'), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        task = progress.add_task(f'  {protocol} tracking', total=len(runs) * len(videos))
        for tracker, matcher in runs:
            run_dir = osp.join(args.work_dir, protocol, tracker.name, matcher)
            cfg = Config.fromfile(TRACKING_BASE)
            cfg.model.tracker = tracker.config(matcher_config(matcher))
            try:
                metrics, seconds = track_and_score(init_model(cfg), args.data_root, det_root, videos, run_dir,
                                                   args.preset, progress=lambda _: progress.advance(task),
                                                   extra_det_roots=extra_det_roots)
            except MissingTrackerInput as exc:  # e.g. appearance features the cached detections do not carry
                progress.console.print(f'  {tracker.name} + {matcher}: skipped, {exc}')
                progress.advance(task, len(videos))
                out[(tracker.name, matcher)] = dict(skipped=str(exc))
                continue
            out[(tracker.name, matcher)] = dict(metrics=metrics, seconds=seconds)
    return out


def table5(results: dict, protocols: list[str]) -> tuple[dict, list]:
    """Table 5 layout: one row per tracker (its original association), the metrics of each protocol."""
    rows: dict[str, dict] = {}
    columns = []
    for protocol in protocols:
        for metric in TABLE5_METRICS:
            columns.append((f'{protocol}/{metric}', f'{"P1" if protocol == "protocol1" else "P2"} '
                            f'{metric.replace("CLR_", "")}', metric))
        for (tracker, matcher), run in results[protocol].items():
            if matcher == 'original':
                rows.setdefault(tracker, {}).update({f'{protocol}/{m}': run['metrics']['COMBINED'][m]
                                                     for m in TABLE5_METRICS})
    rows = {name: row for name, row in rows.items() if len(row) == len(columns)}
    return rows, columns


def table8(results: dict, protocol: str) -> tuple[dict, list]:
    """Table 8 layout: one row per tracker and matcher on one protocol."""
    rows = {f'{tracker} + {matcher}': {m: run['metrics']['COMBINED'][m] for m in TABLE8_METRICS}
            for (tracker, matcher), run in results[protocol].items()}
    return rows, [(m, m.replace('CLR_', ''), m) for m in TABLE8_METRICS]


def plot_hota_by_tracker(results: dict, protocol: str, path: str) -> None:
    """Grouped bars: HOTA of each tracker (groups) and matcher (bars)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from vastmat.utils.io import save_figure_atomic
    trackers = sorted({t for t, _ in results[protocol]})
    matchers = list(dict.fromkeys(m for _, m in results[protocol]))
    width = 0.8 / max(len(matchers), 1)
    fig, ax = plt.subplots(figsize=(max(5.5, 1.8 * len(trackers) + 3.5), 3.8))
    for k, matcher in enumerate(matchers):
        values = [100 * results[protocol].get((t, matcher), {}).get('metrics', {}).get('COMBINED', {}).get(
            'HOTA', np.nan) for t in trackers]
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


def report(args: argparse.Namespace, detections: dict, results: dict) -> dict:
    """Print Table 5 and Table 8, save them (CSV, JSON) and the plots."""
    from vastmat.evaluation.analysis import plot_hota_cdf
    from vastmat.evaluation.report import ranked_table, write_ranked_csv
    from vastmat.utils.io import write_json_atomic

    console.print('[4/4] results')
    skipped = {f'{protocol}/{t}/{m}': run['skipped'] for protocol in args.protocols
               for (t, m), run in results[protocol].items() if 'skipped' in run}
    results = {protocol: {key: run for key, run in runs.items() if 'skipped' not in run}
               for protocol, runs in results.items()}
    for protocol in args.protocols:
        det = detections[protocol]
        if 'AP50' in det:
            console.print(f'  detector on {PROTOCOL_LABEL[protocol]} test videos: AP50 {100 * det["AP50"]:.1f}')
    rows5, columns5 = table5(results, args.protocols)
    saved = ['zoo.json']
    out: dict[str, Any] = dict(settings=dict(data_root=args.data_root, protocols=args.protocols,
                                             matchers=args.matchers, preset=args.preset),
                               detections=detections, skipped=skipped)
    if rows5:
        table, ranks = ranked_table(rows5, columns5, f'Table 5 layout: trackers with their original association '
                                    f'({args.data_root})', row_label='tracker')
        console.print(table)
        write_ranked_csv(rows5, ranks, [c[0] for c in columns5], osp.join(args.work_dir, 'table5.csv'), 'tracker')
        saved.append('table5.csv')
        out['table5'] = rows5
    out['table8'] = {}
    for protocol in args.protocols:
        rows8, columns8 = table8(results, protocol)
        if not rows8:
            continue
        table, ranks = ranked_table(rows8, columns8, f'Table 8 layout: trackers x matchers, '
                                    f'{PROTOCOL_LABEL[protocol]}', row_label='tracker + matcher')
        console.print(table)
        suffix = '' if len(args.protocols) == 1 else f'_{protocol}'
        write_ranked_csv(rows8, ranks, [c[0] for c in columns8], osp.join(args.work_dir, f'table8{suffix}.csv'),
                         'tracker + matcher')
        out['table8'][protocol] = rows8
        saved += [f'table8{suffix}.csv', f'hota_cdf{suffix}.png', f'hota_by_tracker{suffix}.png']
        plot_hota_cdf({f'{t} + {m}': run['metrics'] for (t, m), run in results[protocol].items()},
                      osp.join(args.work_dir, f'hota_cdf{suffix}.png'))
        plot_hota_by_tracker(results, protocol, osp.join(args.work_dir, f'hota_by_tracker{suffix}.png'))
    out['runs'] = {protocol: {f'{t}/{m}': dict(run['metrics'], seconds=run['seconds'])
                              for (t, m), run in results[protocol].items()} for protocol in args.protocols}
    write_json_atomic(out, osp.join(args.work_dir, 'zoo.json'))
    console.print(f'saved in {args.work_dir}: {", ".join(saved)}')
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from vastmat.evaluation.mot_eval import PRESETS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', default=DEMO_ROOT,
                        help=f'VastMAT root (default {DEMO_ROOT}, rendered if absent)')
    parser.add_argument('--protocols', nargs='+', default=['protocol1'], choices=('protocol1', 'protocol2'))
    parser.add_argument('--work-dir', default='work_dirs/zoo_benchmark')
    parser.add_argument('--det-root', nargs='+', metavar='[PROTOCOL=]DIR', help='cached detections of the test '
                        'videos (<video>.txt or <video>/det/det.txt); the detector is skipped')
    parser.add_argument('--checkpoint', nargs='+', metavar='[PROTOCOL=]CKPT', help='detector checkpoint(s) of '
                        '--det-config (default: train it on the protocol\'s train videos)')
    parser.add_argument('--det-config', default=DEMO_DETECTOR, help='detector config (default: the demo YOLOX)')
    parser.add_argument('--train-iters', type=int, help="detector training iterations (default: the config's)")
    parser.add_argument('--matchers', nargs='+', default=list(DEFAULT_MATCHERS),
                        help='original (each tracker\'s own) and/or names of configs/matchers/*.py')
    parser.add_argument('--preset', default='vastmat', choices=PRESETS, help='evaluation preset')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    from vastmat.apis import video_list
    from vastmat.engine.cli import UserInputError
    args = parse_args(argv)
    start = time.perf_counter()
    det_roots = per_protocol(args.det_root, args.protocols, '--det-root')
    checkpoints = per_protocol(args.checkpoint, args.protocols, '--checkpoint')
    for path in [*det_roots.values(), *checkpoints.values()]:
        if not osp.exists(path):
            raise UserInputError(f'{path}: no such file or folder')
    for name in args.matchers:
        matcher_config(name)
    ensure_data(args.data_root)
    detections, results = {}, {}
    for protocol in args.protocols:
        videos = video_list(args.data_root, f'{protocol}/test')
        if not videos:
            raise UserInputError(f'{args.data_root}: {protocol}/test lists no videos')
        detections[protocol] = get_detections(args, protocol, det_roots, checkpoints)
        results[protocol] = run_trackers(args, protocol, detections[protocol]['det_root'], videos,
                                         detections[protocol].get('extra_det_roots'))
    out = report(args, detections, results)
    out['seconds'] = time.perf_counter() - start
    console.print(f'zoo benchmark finished in {out["seconds"]:.0f} s')
    return out


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
