#!/usr/bin/env python
"""A tracker with several matchers on the same cached detections, side by side, under one setting.

    python tools/analysis/matcher_table.py --data-root DATA --det-root DETS --work-dir W
        [--tracker bytetrack|tracktrack|diffmot] [--matchers iou diou cda-fixed cda-adaptive]
        [--setting paper|official] [--pixels plus-one|plain] [--preset vastmat] [--videos V1 V2 ...]
        [--cfg-options KEY=VALUE ...]

Each matcher's config is configs/<tracker>/<tracker>_cached-dets[_<matcher>].py (the plain one is the tracker's own
matcher: IoU for ByteTrack and DiffMOT, HMIoU for TrackTrack; ``iou`` names it), run through tools/test.py in this
process; its results and metrics go to W/<matcher>/, the table (HOTA, DetA, AssA,
MOTA, IDF1, IDSW) to W/table.csv and the settings with the rows to W/table.json.

One setting for every row, stated in the table's title:
* ``--setting paper`` (default): ByteTrack's first-stage ``match_thresh=0.6``, the VastMAT paper's (section 5.4);
  ``official``: the official code's 0.9. TrackTrack's match threshold is 0.60 in both (the paper's equals the
  official DanceTrack test setting); DiffMOT keeps its config's thresholds.
* ``--pixels plus-one`` (default): every matcher and gate uses the +1 pixel convention of the original ByteTrack
  (cython_bbox), so the IoU row is the official tracker; ``plain``: no +1 anywhere. A table never mixes the two.

The AnimalTrack table (train split, 10 FPS, simulated detections):

    python tools/data/simulate_detections.py --data-root ../shared/data/AnimalTrack/train --out /tmp/at10 --stride 3
    python tools/analysis/matcher_table.py --data-root /tmp/at10 --det-root /tmp/at10 --work-dir work_dirs/at10
"""
import argparse
import importlib.util
import os.path as osp
import sys

from mmengine.config import Config

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
sys.path.insert(0, osp.join(REPO, 'tools', 'analysis'))

import compare_runs  # noqa: E402
from vastmat.utils.io import write_json_atomic  # noqa: E402

# the first-stage match threshold per tracker and setting: (config key, {setting: value}); None: the config's
SETTINGS = dict(bytetrack=('match_thresh', dict(paper=0.6, official=0.9)),
                tracktrack=('match_thr', dict(paper=0.6, official=0.6)),
                diffmot=(None, dict(paper=None, official=None)))
# the matcher of each tracker's plain config
OWN_MATCHER = dict(bytetrack='iou', tracktrack='hmiou', diffmot='iou')


def config_for(matcher: str, tracker: str = 'bytetrack') -> str:
    plain = matcher == OWN_MATCHER[tracker]
    name = f'{tracker}_cached-dets.py' if plain else f'{tracker}_cached-dets_{matcher}.py'
    path = osp.join(REPO, 'configs', tracker, name)
    if not osp.isfile(path):
        raise FileNotFoundError(f'{path}: no {tracker} config for matcher {matcher!r}')
    return path


def pixel_options(config: str, plus_one: bool) -> list[str]:
    """``--cfg-options`` that set the matcher's and its gate's pixel convention (and a fused matcher's geometric
    term's, and a tracker-level gate's) explicitly."""
    tracker = Config.fromfile(config).model.tracker
    matcher = tracker.matcher
    options = [f'model.tracker.matcher.plus_one={plus_one}']
    for part in ('gate', 'geometric'):
        if matcher.get(part):
            options.append(f'model.tracker.matcher.{part}.plus_one={plus_one}')
    if tracker.get('gate'):
        options.append(f'model.tracker.gate.plus_one={plus_one}')
    return options


def run_options(config: str, tracker: str, setting: str = 'paper', plus_one: bool = True,
                cfg_options: list[str] = ()) -> list[str]:
    """The ``--cfg-options`` of one row's run but the preset and the videos, in the order :func:`main` gives them:
    the pixel convention, then ``cfg_options``, then the setting's first-stage match threshold (if the tracker has
    one)."""
    key, values = SETTINGS[tracker]
    options = [*pixel_options(config, plus_one), *cfg_options]
    if key is not None:
        options.append(f'model.tracker.{key}={values[setting]}')
    return options


def load_test_tool():
    spec = importlib.util.spec_from_file_location('vastmat_tools_test', osp.join(REPO, 'tools', 'test.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True)
    parser.add_argument('--det-root', required=True)
    parser.add_argument('--work-dir', required=True)
    parser.add_argument('--tracker', choices=sorted(SETTINGS), default='bytetrack')
    parser.add_argument('--matchers', nargs='+', help='default: the tracker\'s own, then diou, cda-fixed, cda-adaptive')
    parser.add_argument('--setting', choices=('paper', 'official'), default='paper',
                        help='paper: match_thresh 0.6 (section 5.4); official: 0.9')
    parser.add_argument('--pixels', choices=('plus-one', 'plain'), default='plus-one',
                        help='pixel convention of every matcher and gate')
    parser.add_argument('--preset', default='vastmat', help='evaluation preset (vastmat, mot15, mot17, mot20)')
    parser.add_argument('--videos', nargs='+', help='only these videos')
    parser.add_argument('--cfg-options', nargs='+', default=[], metavar='KEY=VALUE',
                        help='passed to every run (e.g. model.tracker.deleted_dets=None for TrackTrack without an '
                        'NMS-0.95 set)')
    args = parser.parse_args(argv)
    args.matchers = args.matchers or [OWN_MATCHER[args.tracker], 'diou', 'cda-fixed', 'cda-adaptive']
    key, values = SETTINGS[args.tracker]
    threshold = values[args.setting]
    test_tool = load_test_tool()
    plus_one = args.pixels == 'plus-one'
    runs = []
    for matcher in args.matchers:
        work_dir = osp.join(args.work_dir, matcher)
        config = config_for(matcher, args.tracker)
        options = [f'test_evaluator.preset={args.preset}',
                   *run_options(config, args.tracker, args.setting, plus_one, args.cfg_options)]
        if args.videos:
            options.append('test_dataloader.dataset.videos=[' + ','.join(args.videos) + ']')
        print(f'== {args.tracker}, matcher {matcher}: {work_dir}', flush=True)
        test_tool.main([config, '--det-root', args.det_root, '--data-root', args.data_root, '--work-dir', work_dir,
                        '--cfg-options', *options])
        runs.append(osp.join(work_dir, 'metrics_per_video.json'))
    settings = dict(tracker=args.tracker, setting=args.setting, match_thresh=threshold, pixels=args.pixels,
                    preset=args.preset, cfg_options=args.cfg_options)
    title = (f'{args.tracker}, match threshold {threshold if key else "of the config"} ({args.setting}), '
             f'{"+1 pixel" if plus_one else "no +1 pixel"} convention in every matcher and gate')
    table = compare_runs.main([*runs, '--names', *args.matchers, '--csv', osp.join(args.work_dir, 'table.csv'),
                               '--title', title])
    write_json_atomic(dict(settings, rows=table['rows']), osp.join(args.work_dir, 'table.json'))
    return dict(table, settings=settings)


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
