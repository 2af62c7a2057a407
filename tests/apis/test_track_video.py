"""tools/demo/track_video.py and vastmat.apis.track / drawing: a rendered demo video tracked on its ground-truth
boxes (cached detections) and with the tiny YOLOX in the loop, drawn as an MP4 and as PNG frames."""
import importlib.util
import os
import os.path as osp

import mmcv
import numpy as np
import pytest
from helpers.common import REPO, read_results, tool

from vastmat.apis import read_frames
from vastmat.apis.drawing import id_colour, write_video

SCRIPT = 'tools/demo/track_video.py'
BYTETRACK = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py')
BYTETRACK_YOLOX = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_yolox-debug_vastmat-demo.py')
NUM_FRAMES, HEIGHT, WIDTH = 12, 144, 192
DET_SCORE = 0.9  # ground-truth boxes as confident detections
ALL_BOXES = ['model.tracker.min_box_area=None']  # the demo animals are small
MP4_TOLERANCE = 48  # levels per channel; distinct ids' colours differ by more (test_id_colours_...)


@pytest.fixture(scope='module')
def zebra(tmp_path_factory):
    """One rendered video (3 zebras, 12 frames) with its ground truth as <video>/det/det.txt and as an MP4."""
    from vastmat.datasets.demo_data import make_demo_dataset
    from vastmat.datasets.formats import Detections, read_gt, write_detections
    root = tmp_path_factory.mktemp('track_video')
    make_demo_dataset(str(root), num_frames=NUM_FRAMES, height=HEIGHT, width=WIDTH,
                      videos=(('Zebra-1', [('Zebra', 3)]), ))
    video = root / 'videos' / 'Zebra-1'
    gt = read_gt(str(video / 'gt' / 'gt.txt'))
    keep = gt.valid == 1
    n = int(keep.sum())
    write_detections(str(video / 'det' / 'det.txt'),
                     Detections(gt.frames[keep], gt.boxes[keep], np.full(n, DET_SCORE), np.zeros((n, 0)),
                                np.arange(1, n + 1)))
    mp4 = str(root / 'Zebra-1.mp4')
    assert write_video(read_frames(str(video / 'img1')), mp4, fps=10) == NUM_FRAMES
    return dict(root=root, video=video, det=str(video / 'det' / 'det.txt'), mp4=mp4, gt_frames=set(gt.frames[keep]))


def decoded(path):
    reader = mmcv.VideoReader(path)
    frames = list(reader)
    return reader, frames


def test_mp4_in_mp4_out_on_cached_detections(zebra, tmp_path):
    out = tmp_path / 'tracked.mp4'
    summary = tool(SCRIPT, zebra['mp4'], BYTETRACK, '--det-file', zebra['det'], '--out', out,
                   '--cfg-options', *ALL_BOXES)
    assert summary['video'] == 'Zebra-1' and summary['frames'] == NUM_FRAMES and summary['ids'] == 3
    reader, frames = decoded(str(out))
    assert reader.frame_cnt == len(frames) == NUM_FRAMES
    assert (reader.width, reader.height) == (WIDTH, HEIGHT)
    assert summary['results'] == str(tmp_path / 'tracked.txt')  # beside the output
    results = read_results(summary['results'])
    assert set(results.frames.tolist()) == zebra['gt_frames']
    points = _checkable_edges(_corner_table(results))
    assert points
    for frame, track_id, x, y in points:  # mp4v moves these 2 px lines' colours by up to ~20 levels
        difference = np.abs(frames[frame - 1][y, x].astype(int) - id_colour(track_id)).max()
        assert difference <= MP4_TOLERANCE, (frame, track_id, difference)
    assert not [f for f in os.listdir(tmp_path) if f.startswith('.')]  # no temporary file left


def _corner_table(results):
    """Result rows as ``frame, id, x1, y1, x2, y2``."""
    boxes = results.boxes
    return np.column_stack([results.frames, results.ids, boxes[:, :2], boxes[:, :2] + boxes[:, 2:]])


def _checkable_edges(rows, min_height=20, margin=16):
    """(frame, id, x, y) of bottom-edge centres that no other box or id label can cover: the box is tall enough
    for its own label to stay clear, and the point is away from every other box of the frame by ``margin`` px."""
    points = []
    for row in rows:
        frame, track_id, x1, y1, x2, y2 = row[:6]
        x, y = int(round((x1 + x2) / 2)), int(round(y2))
        if y2 - y1 < min_height or not (0 < x < WIDTH - 1 and 0 < y < HEIGHT - 1):
            continue
        others = rows[(rows[:, 0] == frame) & (rows[:, 1] != track_id)]
        near = ((others[:, 2] - margin <= x) & (x <= others[:, 4] + margin)
                & (others[:, 3] - margin <= y) & (y <= others[:, 5] + margin))
        if not near.any():
            points.append((int(frame), int(track_id), x, y))
    return points


def test_png_frames_carry_each_ids_colour_on_its_box(zebra, tmp_path):
    out = tmp_path / 'frames'
    summary = tool(SCRIPT, zebra['video'] / 'img1', BYTETRACK, '--det-root', zebra['root'] / 'videos',
                   '--out', out, '--frame-format', 'png', '--trail', 5, '--cfg-options', *ALL_BOXES)
    assert summary['detections'] == zebra['det'] and summary['fps'] == 10  # from seqinfo.ini above img1
    assert sorted(os.listdir(out)) == [f'{i:06d}.png' for i in range(1, NUM_FRAMES + 1)]
    points = _checkable_edges(_corner_table(read_results(summary['results'])))
    assert len(points) >= NUM_FRAMES and len({p[1] for p in points}) >= 2
    import cv2
    for frame, track_id, x, y in points:
        image = cv2.imread(str(out / f'{frame:06d}.png'))
        assert tuple(image[y, x].tolist()) == id_colour(track_id), (frame, track_id)


def test_id_colours_are_fixed_and_neighbours_differ():
    assert id_colour(7) == id_colour(7)
    colours = [np.array(id_colour(i)) for i in range(1, 101)]
    assert all(min(np.abs(a - b).max() for b in colours[i + 1:i + 4]) > 2 * MP4_TOLERANCE
               for i, a in enumerate(colours[:-3]))


def test_detector_in_the_loop_tracks_and_draws(zebra, tmp_path):
    """The untrained tiny YOLOX (mechanics only): its low scores all become tracks."""
    out = tmp_path / 'live.mp4'
    every_box = ['model.tracker.track_thresh=-0.1', 'model.tracker.low_thresh=-1.0', 'model.tracker.fuse_score=False']
    summary = tool(SCRIPT, zebra['video'] / 'img1', BYTETRACK_YOLOX, '--out', out,
                   '--cfg-options', *ALL_BOXES, *every_box)
    rows = read_results(summary['results'])
    assert len(rows) > 0 and rows.frames.min() >= 1 and rows.frames.max() == NUM_FRAMES
    reader, frames = decoded(str(out))
    assert len(frames) == NUM_FRAMES and (reader.width, reader.height) == (WIDTH, HEIGHT)


def test_missing_input_is_one_line_and_exit_2(tmp_path, capsys):
    from vastmat.engine.cli import run_cli
    spec = importlib.util.spec_from_file_location('track_video_cli', osp.join(REPO, SCRIPT))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = tmp_path / 'no_such_video.mp4'
    with pytest.raises(SystemExit) as exc:
        run_cli(module.main, [str(missing), BYTETRACK])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith('error: ') and str(missing) in err[0]
