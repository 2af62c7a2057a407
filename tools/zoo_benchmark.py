#!/usr/bin/env python
"""The model-zoo benchmark, the README's main command: every tracker of the zoo trained where it learns and tracking
the test videos, with its original association and with CDA (fixed and adaptive) where it takes a matcher, in the
paper's Table 5 and Table 8 layouts.

    python tools/zoo_benchmark.py [--data-root DIR] [--protocols protocol1 [protocol2]] [--trackers NAME ...]
        [--work-dir W] [--det-root [PROTOCOL=]DIR ...] [--checkpoint [PROTOCOL=]CKPT ...] [--det-config CONFIG]
        [--train-iters N] [--matchers original cda_fixed cda_adaptive,k=0.1 ...] [--threshold-scales S ...]
        [--no-calibration] [--preset vastmat] [--threads 2] [--adaptive-threads] [--launcher local|ray] [--workers 2]
        [--seed 0] [--link KEY=VALUE,... | --no-link]

Steps, per protocol (the expected time is printed first, each stage's time when it ends):
1. data: ``--data-root`` (default ``data/demo``: the built-in demo dataset, rendered when absent);
2. detections, for the trackers on cached detections: ``--det-root``, or the ``--det-config`` detector (default:
   the demo's small YOLOX) with ``--checkpoint``, or, with neither, that detector trained on the protocol's train
   videos. Its boxes are dumped, once more with NMS 0.95 (TrackTrack's ``nms95`` set);
3. tracking: every zoo tracker the registry lists (:func:`vastmat.models.trackers.zoo_trackers`, plugins
   included), trained as its class declares (:mod:`vastmat.experiments.zoo`): on the cached detections with the
   learned inputs it reads (TrackTrack: a ReID model's features; DiffMOT: a D2MP), or as a whole joint or end-to-end
   model (FairMOT, QDTrack, TransTrack, MOTIP; TCEI on MOTIP's checkpoint). Every training runs once (``--train-iters``
   overrides every length) and is reused by later runs; each learned tracker is scored at every kept checkpoint.
   A joint or end-to-end model is tested at its official score thresholds times the scale of ``--threshold-scales``
   that tracks the protocol's dev videos best (train videos held for tuning; never the test videos);
4. global linking (``GlobalLinker`` with ``--link``'s options) of each tracker's results with its own association,
   its HOTA and IDSW beside the tracker's own in Table 5 (``--no-link``: not run);
5. evaluation (TrackEval, ``--preset``), the tables printed and saved: W/zoo.json, W/table5.csv, W/table8.csv,
   W/hota_cdf.png (per-video HOTA), W/hota_by_tracker.png, W/hota_vs_training.png; each run's results and metrics
   under W/<protocol>/.

By default the trackers of step 3 are tasks of ``--workers 2`` local processes of one thread each, the longest
first (``--workers 1``: one after another, here, at ``--threads``); ``--launcher ray`` runs them on a local ray of
``--workers`` CPUs or the cluster of ``RAY_ADDRESS`` (docs/scaling.md). The trainings that several tasks start from
(the demo YOLOX's backbone) are trained first, here, and TCEI waits for MOTIP's task.

The console shows the steps, progress (plain lines at least every 30 s when it is not a terminal) and the tables;
the runners' full logs stay in their work dirs.
"""
from __future__ import annotations

import argparse

DEFAULT_MATCHERS = ('original', 'cda_fixed', 'cda_adaptive')


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from vastmat.evaluation.mot_eval import PRESETS
    from vastmat.experiments.zoo import DEMO_DETECTOR
    from vastmat.experiments.zoo_benchmark import DEMO_ROOT
    from vastmat.experiments.zoo_calibration import THRESHOLD_SCALES
    from vastmat.utils.threads import default_threads
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
                        help="original (each tracker's own) and/or names of configs/matchers/*.py, each with "
                        'its keys as --matcher takes them (cda_fixed,alpha=0.5)')
    parser.add_argument('--threshold-scales', nargs='+', type=float, metavar='S',
                        help='the grid of the one threshold rule of the tiny models: official thresholds times the '
                        f'scale that tracks the dev videos best (default: {" ".join(f"{s:g}" for s in THRESHOLD_SCALES)}'
                        ", with a config's own grid of a threshold, zoo_threshold_scales; given: this grid for every "
                        'threshold)')
    parser.add_argument('--no-calibration', action='store_true',
                        help="test the joint and end-to-end models at their configs' own thresholds")
    parser.add_argument('--preset', default='vastmat', choices=PRESETS, help='evaluation preset')
    parser.add_argument('--launcher', choices=('local', 'ray'), default='local',
                        help='where the trackers run: here or in local processes, or as ray tasks (default local)')
    parser.add_argument('--workers', type=int, default=2, help='trackers at the same time, each in a process of '
                        'its own with one thread (default 2, one a core on 2 cores; 1: one after another, here, at '
                        '--threads)')
    parser.add_argument('--seed', type=int, default=0, help='the randomness seed of every training (default 0; '
                        'trainings are kept by seed: tools/benchmark/demo_spread.py)')
    parser.add_argument('--threads', type=int, default=default_threads(),
                        help='torch CPU threads (default: $OMP_NUM_THREADS where set, else 2; docs/zoo.md)')
    parser.add_argument('--adaptive-threads', action='store_true',
                        help='train with 1 thread while other processes slow the cores down (AdaptiveThreadsHook; '
                        'faster on a busy machine, but a switch changes the sums and so the trained models)')
    parser.add_argument('--link', metavar='KEY=VALUE,...', default='',
                        help="Table 5's linked columns: the GlobalLinker's options (default: its defaults)")
    parser.add_argument('--no-link', action='store_true', help="leave out Table 5's columns after global linking")
    args = parser.parse_args(argv)
    from vastmat.utils.options import parse_keyword_options
    args.linker = None if args.no_link else dict(type='GlobalLinker', **parse_keyword_options(args.link, '--link'))
    if args.workers < 1:
        parser.error(f'--workers must be >= 1, got {args.workers}')
    if args.train_iters is not None and args.train_iters < 1:
        parser.error(f'--train-iters must be >= 1, got {args.train_iters}')
    if args.threshold_scales is not None and not all(scale > 0 for scale in args.threshold_scales):
        parser.error(f'--threshold-scales must be > 0, got {args.threshold_scales}')
    return args


def main(argv: list[str] | None = None) -> dict:
    from vastmat.experiments.zoo import select_members
    from vastmat.experiments.zoo_benchmark import run
    from vastmat.utils.threads import torch_threads
    from vastmat.experiments.zoo_report import make_console
    args = parse_args(argv)
    with torch_threads(args.threads):
        return run(args, select_members(args.trackers), make_console())


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
