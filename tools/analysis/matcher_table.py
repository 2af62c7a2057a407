#!/usr/bin/env python
"""A tracker with several matchers on the same cached detections, side by side, under one setting.

    python tools/analysis/matcher_table.py --data-root DATA --det-root DETS --work-dir W
        [--tracker bytetrack|tracktrack|diffmot] [--matchers iou diou cda-fixed cda-adaptive]
        [--setting paper|official] [--pixels plus-one|plain] [--preset vastmat] [--videos V1 V2 ...]
        [--cfg-options KEY=VALUE ...]

Each row is the tracker's study config (declared on its class: ``study_config``) with the matcher of
configs/matchers/<matcher>.py swapped in (vastmat.apis.swap_matcher; the tracker's own matcher, IoU for ByteTrack and
DiffMOT, HMIoU for TrackTrack, is its config as it is), tested as tools/test.py does, in this process; its results
and metrics go to W/<matcher>/, the table (HOTA, DetA, AssA, MOTA, IDF1, IDSW) to W/table.csv and the settings with
the rows to W/table.json (vastmat.experiments.matcher_study).

One setting for every row, stated in the table's title:
* ``--setting paper`` (default): ByteTrack's first-stage ``match_thresh=0.6``, the VastMAT paper's (section 5.4);
  ``official``: the official code's 0.9. TrackTrack's match threshold is 0.60 in both (the paper's equals the
  official DanceTrack test setting); DiffMOT keeps its config's thresholds (each tracker's ``study_match_thresh``).
* ``--pixels plus-one`` (default): every matcher and gate uses the +1 pixel convention of the original ByteTrack
  (cython_bbox), so the IoU row is the official tracker; ``plain``: no +1 anywhere. A table never mixes the two.

The AnimalTrack table (train split, 10 FPS, simulated detections):

    python tools/data/simulate_detections.py --data-root ../shared/data/AnimalTrack/train --out /tmp/at10 --stride 3
    python tools/analysis/matcher_table.py --data-root /tmp/at10 --det-root /tmp/at10 --work-dir work_dirs/at10
"""
import argparse

from vastmat.experiments.matcher_study import PIXELS, SETTINGS, matcher_table, study_trackers


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True)
    parser.add_argument('--det-root', required=True)
    parser.add_argument('--work-dir', required=True)
    parser.add_argument('--tracker', choices=list(study_trackers()), default='bytetrack')
    parser.add_argument('--matchers', nargs='+', help='default: the tracker\'s own, then diou, cda-fixed, cda-adaptive')
    parser.add_argument('--setting', choices=SETTINGS, default='paper',
                        help='paper: match_thresh 0.6 (section 5.4); official: 0.9')
    parser.add_argument('--pixels', choices=PIXELS, default='plus-one',
                        help='pixel convention of every matcher and gate')
    parser.add_argument('--preset', default='vastmat', help='evaluation preset (vastmat, mot15, mot17, mot20)')
    parser.add_argument('--videos', nargs='+', help='only these videos')
    parser.add_argument('--cfg-options', nargs='+', default=[], metavar='KEY=VALUE',
                        help='passed to every run (e.g. model.tracker.deleted_dets=None for TrackTrack without an '
                        'NMS-0.95 set)')
    args = parser.parse_args(argv)
    return matcher_table(args.tracker, args.data_root, args.det_root, args.work_dir, args.matchers, args.setting,
                         args.pixels, args.preset, args.videos, args.cfg_options)


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
