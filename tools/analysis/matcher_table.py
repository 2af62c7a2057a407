#!/usr/bin/env python
"""ByteTrack with several matchers on the same cached detections, side by side (one tools/test.py run each).

    python tools/analysis/matcher_table.py --data-root DATA --det-root DETS --work-dir W
        [--matchers iou diou cda-fixed cda-adaptive] [--preset vastmat] [--videos V1 V2 ...]

Each matcher's config is configs/bytetrack/bytetrack_cached-dets[_<matcher>].py (``iou`` is the plain one); its
results and metrics go to W/<matcher>/ and the table (HOTA, DetA, AssA, MOTA, IDF1, IDSW) to W/table.csv.
The full AnimalTrack table of issue 6 (train split, 10 FPS, simulated detections):

    python tools/data/simulate_detections.py --data-root ../shared/data/AnimalTrack/train --out /tmp/at10 --stride 3
    python tools/analysis/matcher_table.py --data-root /tmp/at10 --det-root /tmp/at10 --work-dir work_dirs/at10
"""
import argparse
import os.path as osp
import subprocess
import sys

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
sys.path.insert(0, osp.join(REPO, 'tools', 'analysis'))

import compare_runs  # noqa: E402


def config_for(matcher: str) -> str:
    name = 'bytetrack_cached-dets.py' if matcher == 'iou' else f'bytetrack_cached-dets_{matcher}.py'
    path = osp.join(REPO, 'configs', 'bytetrack', name)
    if not osp.isfile(path):
        raise FileNotFoundError(f'{path}: no ByteTrack config for matcher {matcher!r}')
    return path


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True)
    parser.add_argument('--det-root', required=True)
    parser.add_argument('--work-dir', required=True)
    parser.add_argument('--matchers', nargs='+', default=['iou', 'diou', 'cda-fixed', 'cda-adaptive'])
    parser.add_argument('--preset', default='vastmat', help='evaluation preset (vastmat, mot15, mot17, mot20)')
    parser.add_argument('--videos', nargs='+', help='only these videos')
    args = parser.parse_args(argv)
    runs = []
    for matcher in args.matchers:
        work_dir = osp.join(args.work_dir, matcher)
        options = [f'test_evaluator.preset={args.preset}']
        if args.videos:
            options.append('test_dataloader.dataset.videos=[' + ','.join(args.videos) + ']')
        print(f'== ByteTrack, matcher {matcher}: {work_dir}', flush=True)
        subprocess.run([sys.executable, osp.join(REPO, 'tools', 'test.py'), config_for(matcher), '--det-root',
                        args.det_root, '--data-root', args.data_root, '--work-dir', work_dir,
                        '--cfg-options', *options], check=True, stdout=subprocess.DEVNULL)
        runs.append(osp.join(work_dir, 'metrics_per_video.json'))
    return compare_runs.main([*runs, '--names', *args.matchers, '--csv', osp.join(args.work_dir, 'table.csv')])


if __name__ == '__main__':
    main()
