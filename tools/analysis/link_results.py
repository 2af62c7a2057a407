#!/usr/bin/env python
"""Link a results folder that a tracker wrote (any tracker: QDTrack's mmdet model too) into whole-video identities.

    python tools/analysis/link_results.py RESULTS_DIR OUT_DIR [--data-root ROOT] [--videos V ...]
        [--link KEY=VALUE,...] [--num-animals N|FILE] [--max-animals M|FILE]

Reads RESULTS_DIR/<video>.txt, runs the GlobalLinker (vastmat/models/post/global_linking.py) with ``--link``'s
options and the counts, writes OUT_DIR/<video>.txt and OUT_DIR/linking.json (what it did to each video) and, with
``--data-root`` (ground truth), scores both folders and prints them side by side (OUT_DIR/metrics.json).
"""
from __future__ import annotations

import argparse
import os
import os.path as osp


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from vastmat.engine.linking_options import add_linking_arguments
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('results', help='the tracker\'s results folder (<video>.txt)')
    parser.add_argument('out', help='the linked results folder')
    parser.add_argument('--data-root', help='ground truth to score with (a VastMAT root or MOTChallenge folder)')
    parser.add_argument('--videos', nargs='+', help='videos (default: those of --data-root, else every file)')
    add_linking_arguments(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    from vastmat.apis import video_list
    from vastmat.apis.linking import link_results_folder
    from vastmat.engine.linking_options import configure_linker, save_linking_reports
    from vastmat.evaluation.mot_eval import evaluate, sequence_specs
    from vastmat.evaluation.report import print_tracking_table
    from vastmat.utils.io import write_json_atomic
    args = parse_args(argv)
    if not osp.isdir(args.results):
        raise FileNotFoundError(f'{args.results}: no such results folder')
    if args.videos or args.data_root:
        videos = video_list(args.data_root, videos=args.videos)
    else:
        videos = sorted(osp.splitext(n)[0] for n in os.listdir(args.results) if n.endswith('.txt'))
    # counts are checked against the data root's videos (none without it)
    linker = configure_linker(dict(type='GlobalLinker'), args, video_list(args.data_root) if args.data_root else None,
                              {})
    reports = link_results_folder(args.results, args.out, videos, linker)
    save_linking_reports(list(reports.values()), args.out)
    out = dict(reports=reports)
    if args.data_root:
        for name, folder in (('tracker', args.results), ('linked', args.out)):
            specs, _ = sequence_specs(args.data_root, folder, videos)
            out[name] = evaluate(specs)
        print_tracking_table({'tracker': out['tracker']['COMBINED'], 'linked': out['linked']['COMBINED']},
                             f'{args.results} before and after global linking', ['tracker', 'linked'])
        write_json_atomic(out, osp.join(args.out, 'metrics.json'))
    return out


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
