#!/usr/bin/env python
"""Tune a tracker's settings on a dataset: an Optuna search (TPE, median pruning) of the search space its class
declares, a choice checked on held-aside folds of videos, and a preset config that records where it came from.

    python tools/tune.py CONFIG --data-root DIR --det-root DIR [--trials N] [--workers N] [--launcher local|ray]
        [--storage URL] [--heartbeat S] [--space NAME] [--folds K] [--seed S] [--split P/S | --videos V ...]
        [--work-dir W] [--preset-out PATH] [--cfg-options KEY=VALUE ...]

The study lives in --storage (default sqlite:///W/study.db): a killed run resumes where it stopped (--trials counts
the finished trials of the study, resumed ones too). Each trial is one task of --launcher (local: this process or
--workers processes; ray: tasks on a local ray, or on the cluster of RAY_ADDRESS), --workers at a time; trials on
several machines share a PostgreSQL URL (postgresql://user@host:port/db; a SQLite file with a multi-node ray cluster
is refused: docs/scaling.md). A worker that dies leaves its trial running in the storage until another trial starts
once it has been silent for 4 x --heartbeat seconds, or until the tuner's tasks have ended: then it is marked
failed. Each trial tracks the folds one by one through the sweep's run cache (W/runs/<id>/), so a point already run
is not run again. Outputs in W: tune.json (the report), trials.csv, optimization_history.png, param_importances.png
and the preset (default W/<config>_tuned-<data>.py).

    python tools/tune.py configs/bytetrack/bytetrack_cached-dets.py \\
        --data-root ../shared/data/AnimalTrack-10fps-sim/gt --det-root ../shared/data/AnimalTrack-10fps-sim/dets \\
        --trials 60 --work-dir work_dirs/tune_bytetrack
"""
from __future__ import annotations

import argparse
import os.path as osp

from vastmat.engine.config_options import CfgOptionsAction
from vastmat.experiments.tuning import TuneSettings, run_tuning


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from vastmat.evaluation.mot_eval import PRESETS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('config', help='a tracking config on cached detections')
    parser.add_argument('--data-root', required=True, help='a VastMAT root or a MOTChallenge split folder')
    parser.add_argument('--det-root', required=True, help='cached detections: DIR/<video>.txt or DIR/<video>/det/det.txt')
    videos = parser.add_mutually_exclusive_group()
    videos.add_argument('--split', help='the videos of PROTOCOL/SPLIT of a VastMAT root (default: all)')
    videos.add_argument('--videos', nargs='+', help='only these videos')
    parser.add_argument('--trials', type=int, default=50, help='finished trials the study ends with (default 50)')
    parser.add_argument('--workers', type=int, default=1, help='trials at the same time (default 1)')
    parser.add_argument('--launcher', choices=('local', 'ray'), default='local',
                        help='where the trials run: local processes or ray tasks (default local)')
    parser.add_argument('--storage', help='SQLAlchemy URL of the study (default sqlite:///WORK_DIR/study.db; '
                        'postgresql://USER@HOST:PORT/DB for several machines)')
    parser.add_argument('--heartbeat', type=int, default=5,
                        help='seconds between a running trial\'s heartbeats (default 5); a trial silent 4x as long '
                        'is marked failed')
    parser.add_argument('--study-name', help='default: a hash of the config, space, data, folds and options')
    parser.add_argument('--space', default='default', help="one of the tracker class's search_spaces, or linking "
                        "(the GlobalLinker's settings, the tracker as the config has it)")
    parser.add_argument('--cfg-options', nargs='+', action=CfgOptionsAction, default={}, metavar='KEY=VALUE',
                        help='set for every trial (checked as tools/test.py\'s), e.g. a trained D2MP: '
                        'model.tracker.motion.checkpoint=PATH')
    parser.add_argument('--folds', type=int, default=4, help='folds of videos (default 4)')
    parser.add_argument('--seed', type=int, default=0, help='the folds and the sampler')
    parser.add_argument('--work-dir', help='default work_dirs/tune_<config name>')
    parser.add_argument('--data-name', help="names the preset (default: the data root's folder)")
    parser.add_argument('--preset-out', help='the preset config file, or a folder for it (default: the work dir)')
    parser.add_argument('--eval-preset', choices=PRESETS, default='vastmat', help='evaluation preset')
    parser.add_argument('--bootstrap', type=int, default=1000, help='paired resamples of the videos')
    parser.add_argument('--level', type=float, default=0.9, help='interval level (default 0.9)')
    args = parser.parse_args(argv)
    if args.trials < 1 or args.workers < 1:
        parser.error('--trials and --workers must be at least 1')
    if not args.heartbeat >= 1:
        parser.error(f'--heartbeat must be at least 1 (seconds), got {args.heartbeat}')
    if not 0 < args.level < 1:
        parser.error('--level must lie in (0, 1)')
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    work_dir = args.work_dir or osp.join('work_dirs', f'tune_{osp.splitext(osp.basename(args.config))[0]}')
    settings = TuneSettings(args.config, args.data_root, args.det_root, work_dir, trials=args.trials,
                            workers=args.workers, storage=args.storage, launcher=args.launcher,
                            heartbeat=args.heartbeat, space=args.space, folds=args.folds,
                            seed=args.seed, split=args.split, videos=args.videos, study_name=args.study_name,
                            preset=args.eval_preset, data_name=args.data_name, preset_out=args.preset_out,
                            bootstrap=args.bootstrap, level=args.level, extra=dict(args.cfg_options))
    return run_tuning(settings)


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
