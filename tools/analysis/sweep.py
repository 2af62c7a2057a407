#!/usr/bin/env python
"""A grid over tracker and matcher settings on cached detections: one tracking run per grid point, a table of them.

    python tools/analysis/sweep.py CONFIG --det-root DIR --data-root DIR --work-dir W
        [--split protocol2/test | --videos V ...] [--grid KEY=V1,V2,... ...] [--table 19|20|21|22|23]
        [--matcher NAME[,KEY=V...]] [--base-options KEY=V ...] [--post-processors LIST] [--workers N] [--launcher local|ray|torchrun]
        [--preset vastmat]

Grid: each ``--grid`` axis is a dotted key of CONFIG (``model.tracker.match_thresh=0.6,0.8``) with values read as
Python literals (numbers, strings, None, True, lists, ``dict(type='CDA', alpha=0.5)``; a bare word is a string; the
language of ``--cfg-options``, vastmat/utils/options.py); the runs are the Cartesian product of the axes.
``--matcher NAME[,KEY=V...]`` swaps a matcher of configs/matchers/ into every run (as ``tools/test.py
--matcher``); ``--base-options`` sets keys for every run. A key must exist in the config or be a new argument of a component dict
(``type=...``), as ``--cfg-options``; a dict value replaces the whole entry (the old keys do not leak into it). Every
key and every run's model is checked before anything runs.

Paper layouts (``--table``, for any tracker with a ``matcher``; appendix E of the VastMAT paper):
* 19: CDA fixed, alpha 0.5, CenterSim's denominator mean / min / max / enclosing;
* 20 (21: the same layout, another tracker): CDA fixed, alpha 0, 0.25, 0.5, 0.75, 1 (and W/alpha.png);
* 22: {CDA fixed, CDA adaptive} x post-processing off / on (``--post-processors``, default
  ``[dict(type='InterpolateTracks')]``; the paper's is AFLink);
* 23: CDA adaptive, k in {0.025, 0.05, 0.1} x N_ref in {5, 10, 15}, printed as a k x N_ref matrix of HOTA.
A table preset sets the matcher to the complete dict of configs/matchers/cda_fixed.py or cda_adaptive.py;
``--base-options`` then adjust it (e.g. ``"model.tracker.matcher.gate=dict(type='NormDIoUGate', thr=0.1)"``) and
``--grid`` adds axes.

Runs: W/runs/<id>/ holds results/<video>.txt, metrics.json (per video and COMBINED, TrackEval names) and
settings.json; the id is a hash of the config (path and content), the resolved options, the detection and data roots,
the videos and the evaluation preset. A run whose metrics.json exists is reused, so a sweep resumes where it stopped.
Launchers: ``local`` (``--workers`` processes), ``ray`` (remote tasks, the optional extra requirements/ray.txt;
``RAY_ADDRESS`` set: the running cluster, whose workers must import vastmat and see the same paths), ``torchrun``
(rank r takes runs r, r + world size, ...; rank 0 writes the table once every rank is done: ``torchrun
--nproc_per_node 2 tools/analysis/sweep.py ...``).

Outputs: W/table.csv (one row per run, ratios as fractions), W/table.json (settings and rows), the printed table
(percentages) and, when alpha varies, W/alpha.png (HOTA and AssA against alpha, IDSW on the right axis).

    python tools/analysis/sweep.py configs/bytetrack/bytetrack_cached-dets.py --table 20 --workers 2 \\
        --data-root ../shared/data/AnimalTrack-10fps-sim/gt --det-root ../shared/data/AnimalTrack-10fps-sim/dets \\
        --work-dir work_dirs/sweep_at10
"""
from __future__ import annotations

import argparse

from vastmat.experiments.sweep import DIST_TIMEOUT_S, LAUNCHERS, TABLES, SweepSettings, run_sweep


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from vastmat.evaluation.mot_eval import PRESETS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('config', help='a tracking config (model.type TrackingByDetection)')
    parser.add_argument('--det-root', required=True, help='cached detections: DIR/<video>.txt or '
                        'DIR/<video>/det/det.txt')
    parser.add_argument('--data-root', required=True, help='a VastMAT root or a MOTChallenge split folder')
    videos = parser.add_mutually_exclusive_group()
    videos.add_argument('--split', help='the videos of PROTOCOL/SPLIT of a VastMAT root, e.g. protocol2/test '
                        '(default: all videos of --data-root)')
    videos.add_argument('--videos', nargs='+', help='only these videos')
    parser.add_argument('--work-dir', required=True)
    # action='extend': repeated flags add up (argparse's default would keep the last one, dropping an axis)
    parser.add_argument('--grid', nargs='+', action='extend', default=[], metavar='KEY=V1,V2',
                        help='an axis of the grid')
    parser.add_argument('--table', choices=TABLES, help="one of the paper's appendix layouts")
    parser.add_argument('--matcher', metavar='NAME[,KEY=V...]', help='the matcher of configs/matchers/ every run '
                        "uses (e.g. cda_fixed or cda_fixed,alpha=0.25); default: the config's")
    parser.add_argument('--base-options', nargs='+', action='extend', default=[], metavar='KEY=V',
                        help='set for every run')
    parser.add_argument('--post-processors', default=None, metavar='LIST',
                        help="--table 22's post-processing, e.g. \"[dict(type='InterpolateTracks')]\"")
    parser.add_argument('--workers', type=int, default=1, help='runs at the same time (local and ray)')
    parser.add_argument('--launcher', choices=LAUNCHERS, default='local')
    parser.add_argument('--preset', choices=PRESETS, default='vastmat', help='evaluation preset')
    parser.add_argument('--dist-timeout', type=float, default=DIST_TIMEOUT_S,
                        help='torchrun: seconds to wait for the other ranks')
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error('--workers must be at least 1')
    return args


def main(argv: list[str] | None = None) -> dict:
    """Run the sweep (:func:`vastmat.experiments.sweep.run_sweep`): its rows, table, computed and reused runs."""
    return run_sweep(SweepSettings(**vars(parse_args(argv))))


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
