#!/usr/bin/env python
"""Track the animals of one video file or folder of frames and draw the tracks.

    python tools/demo/track_video.py INPUT CONFIG [--checkpoint CKPT] [--det-root DIR | --det-file FILE]
        [--out OUT.mp4 | FOLDER] [--frame-format jpg|png] [--results FILE.txt] [--trail 10]
        [--cfg-options KEY=VALUE ...] [--device cpu]
    python tools/demo/track_video.py INPUT --tracks RESULTS.txt [--out OUT.mp4 | FOLDER] [--trail 10]

INPUT is a video file or a folder of jpg/png frames (a VastMAT video folder <video>/img1 takes its frame rate from
<video>/seqinfo.ini, other folders play at 10 FPS). CONFIG is a tracking config (model.type='TrackingByDetection'):
with --det-file FILE (a MOT det.txt, frames 1..N) or --det-root DIR (DIR/<video>.txt or DIR/<video>/det/det.txt)
its tracker runs on those cached detections, otherwise its detector runs on each frame (--checkpoint: its weights).
Writes the frames with each track's box, id and trail of its last --trail box centres, as OUT.mp4 or numbered
images in FOLDER (default: work_dirs/track_video/<video>.mp4), and the tracks as a MOT results file (default:
beside the output, <out stem>.txt). With --tracks, no tracking: the tracks of that MOT results file (another run's,
a linked or edited one) are drawn on INPUT. Example on the demo data:

    python tools/demo/track_video.py data/demo/videos/Horse-1/img1 configs/bytetrack/bytetrack_cached-dets.py \\
        --det-root data/demo_simulated --out /tmp/demo_track.mp4 --cfg-options model.tracker.min_box_area=None
"""
import argparse
import os.path as osp

import numpy as np
from tqdm import tqdm

from vastmat.apis import TrackResult, read_frames, read_track_rows, track, write_track_rows
from vastmat.apis.drawing import TRAIL_LENGTH, draw_tracks, is_frame_folder, write_video
from vastmat.datasets.detections import detection_file
from vastmat.engine.config_options import CfgOptionsAction


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('input', help='video file or folder of jpg/png frames')
    parser.add_argument('config', nargs='?', help='tracking config file (not with --tracks)')
    parser.add_argument('--tracks', help='draw the tracks of this MOT results file instead of tracking')
    parser.add_argument('--checkpoint', help="weights of the config's model (its detector)")
    detections = parser.add_mutually_exclusive_group()
    detections.add_argument('--det-root',
                            help='folder of cached detections: DIR/<video>.txt or DIR/<video>/det/det.txt')
    detections.add_argument('--det-file', help='cached detections of this video (MOT det.txt)')
    parser.add_argument('--out', help='OUT.mp4, or a folder for numbered frames '
                        '(default: work_dirs/track_video/<video>.mp4)')
    parser.add_argument('--frame-format', choices=('jpg', 'png'), default='jpg', help='image format of a frame folder')
    parser.add_argument('--results', help='MOT results file (default: beside the output, <out stem>.txt)')
    parser.add_argument('--trail', type=int, default=TRAIL_LENGTH, help='trail length in frames (0: none)')
    parser.add_argument('--cfg-options', nargs='+', action=CfgOptionsAction, metavar='KEY=VALUE',
                        help='override settings of the config, checked as by tools/test.py, e.g. '
                        'model.tracker.min_box_area=None')
    parser.add_argument('--device', default='cpu', help='torch device, e.g. cpu or cuda:0')
    args = parser.parse_args(argv)
    if args.trail < 0:
        parser.error(f'--trail {args.trail}: give 0 (no trails) or more frames')
    if args.config is None and args.tracks is None:
        parser.error('give a tracking CONFIG, or --tracks RESULTS.txt to draw')
    if args.tracks is not None:
        tracking = [flag for flag, value in (('CONFIG', args.config), ('--checkpoint', args.checkpoint),
                                             ('--det-root', args.det_root), ('--det-file', args.det_file),
                                             ('--results', args.results), ('--cfg-options', args.cfg_options))
                    if value is not None]
        if tracking:
            parser.error(f'--tracks draws a results file without tracking: {", ".join(tracking)} would be ignored')

    frames = read_frames(args.input)
    out = args.out or osp.join('work_dirs', 'track_video', f'{frames.name}.mp4')
    to_folder = is_frame_folder(out)  # checked before tracking: a bad --out fails at once
    results = args.results or osp.splitext(osp.normpath(out))[0] + '.txt'
    det_file = detection_file(args.det_root, frames.name) if args.det_root else args.det_file
    if det_file and not osp.isfile(det_file):
        raise FileNotFoundError(f'{det_file}: no such detection file')

    if args.tracks:
        result = TrackResult(frames.name, read_track_rows(args.tracks, frames.frame_count), frames.frame_count,
                             frames.fps)
        results = args.tracks
    else:
        result = track(frames, args.config, args.checkpoint, det_file, args.device, args.cfg_options)
        write_track_rows(result.rows, results)
    drawn = tqdm(draw_tracks(frames, result.rows, args.trail), total=frames.frame_count, desc='drawing',
                 unit='frame')
    written = write_video(drawn, out, result.fps, frame_extension=f'.{args.frame_format}')

    ids = np.unique(result.rows[:, 1]).astype(int)
    source = (f'tracks of {args.tracks}' if args.tracks else f'cached detections {det_file}' if det_file
              else 'detector in the loop')
    print(f'{result.name}: {written} frames, {len(ids)} ids, {len(result.rows)} boxes ({source})')
    print(f'{"frames" if to_folder else "video"}: {out}')
    print(f'results: {results}')
    return dict(video=result.name, frames=written, ids=len(ids), boxes=len(result.rows), fps=result.fps, out=out,
                results=results, detections=det_file)


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
