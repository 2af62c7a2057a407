#!/usr/bin/env python
"""Matchers against IoU where animals are many and slow and where they are few and fast.

    python tools/analysis/motion_matcher_study.py --work-dir W [--trackers bytetrack tracktrack diffmot]
        [--settings 10fps 5fps 3fps] [--matchers iou cda-fixed cda-adaptive cda-motion-adaptive]
        [--d2mp-checkpoint D2MP_CKPT] [--videos V ...] [--workers N] [--match-setting official|paper]
        [--pixels plus-one|plain] [--sim-seed 1] [--cfg-options [TRACKER:]KEY=VALUE ...]

Every tracker of the matcher studies runs with every matcher on every setting's videos, on cached detections:
``10fps`` (dense) is ``--dense-root`` (AnimalTrack train at 10 FPS, simulated detections), ``5fps`` and ``3fps``
(sparse / fast) AnimalTrack train (``--animaltrack-root``) strided by 6 and 10 with detections simulated once into
W/data/ (seed ``--sim-seed``); each setting's table also scores its sparsest third of the videos. A run is the
tracker's study config with the matcher swapped in and the matcher table's options (the same ``--match-setting``,
default ``official``: ByteTrack's match_thresh 0.9, and one pixel convention), run as a sweep run in W/runs/<id>/ and
reused when done, so a study resumes where it stopped; ``--workers`` runs several at a time. DiffMOT needs
``--d2mp-checkpoint``. ``--cfg-options`` go to every run, or with a ``TRACKER:`` prefix to that tracker's runs only.

Outputs in W: table.csv and table.json (per tracker, setting, video set and matcher: HOTA, AssA, IDF1 and the HOTA
gain over IoU with its bootstrap interval; table.json adds the settings, per-video statistics and rows and each
run's folder and seconds), targets.csv (the candidate matcher's targets), the tables printed in percent, and
gain.png (per-video HOTA gain over IoU against animals per frame and normalised displacement). The study is
vastmat.benchmarks.motion_matcher_study.

    python tools/analysis/motion_matcher_study.py --trackers bytetrack --matchers iou cda-fixed cda-adaptive \\
        --work-dir work_dirs/motion_matcher_study --workers 2
"""
import argparse
import os.path as osp

from vastmat.benchmarks.motion_matcher_study import run_study
from vastmat.benchmarks.motion_matcher_study.settings import (BASELINE, CANDIDATE, DEFAULT_MATCHERS, SETTINGS,
                                                               StudySettings)
from vastmat.experiments.matcher_study import SETTINGS as MATCH_SETTINGS
from vastmat.experiments.matcher_study import PIXELS, study_trackers

SHARED_DATA = osp.join(osp.dirname(osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))), 'shared', 'data')


def main(argv: list[str] | None = None) -> dict:
    from vastmat.evaluation.mot_eval import PRESETS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--work-dir', required=True)
    parser.add_argument('--trackers', nargs='+', choices=list(study_trackers()), help='default: all of them')
    parser.add_argument('--settings', nargs='+', choices=list(SETTINGS), default=list(SETTINGS))
    parser.add_argument('--matchers', nargs='+', default=list(DEFAULT_MATCHERS),
                        help=f'names of configs/matchers/ fragments; must include {BASELINE}')
    parser.add_argument('--videos', nargs='+', help='only these videos (every setting)')
    parser.add_argument('--d2mp-checkpoint', help='DiffMOT\'s D2MP weights (model.tracker.motion.checkpoint)')
    parser.add_argument('--workers', type=int, default=1, help='runs at the same time (processes)')
    parser.add_argument('--match-setting', choices=MATCH_SETTINGS, default='official',
                        help="matcher_table.py's --setting: ByteTrack's first-stage match_thresh 0.9 (official, "
                        'default) or 0.6 (paper)')
    parser.add_argument('--pixels', choices=PIXELS, default='plus-one',
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
    return run_study(StudySettings(**vars(parser.parse_args(argv))))


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
