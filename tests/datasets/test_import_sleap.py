"""The SLEAP importer and the VastMAT layout it writes (vastmat/datasets/importers/, tools/data/import_labels.py): a
small .slp written with sleap-io's own writer (exact boxes, selections, errors) and the real fly video of
../shared/data/sleap-centered-pair."""
import glob
import json
import os
import os.path as osp

import cv2
import numpy as np
import pytest

from helpers.common import SHARED_DATA, tool
from vastmat.datasets.formats import read_gt, read_seqinfo
from vastmat.datasets.frames import read_frames
from vastmat.datasets.importers import (FrameRange, detect_format, import_labels, parse_frame_range, read_sleap,
                                        write_labelled_video)
from vastmat.datasets.sequences import read_split
from vastmat.utils.errors import UserInputError

FLY = osp.join(SHARED_DATA, 'sleap-centered-pair')
needs_fly = pytest.mark.skipif(not osp.isdir(FLY), reason=f'the fly video is not at {FLY} (../shared/data)')
WIDTH, HEIGHT, FRAMES = 64, 48, 6
NAN = np.nan


def write_video(path: str, frames: int = FRAMES) -> None:
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*'mp4v'), 5, (WIDTH, HEIGHT))
    for i in range(frames):
        writer.write(np.full((HEIGHT, WIDTH, 3), 20 * i, np.uint8))
    writer.release()


def write_slp(path: str, video_path: str, points: dict | None = None, untracked: bool = False) -> None:
    """Two tracked flies ('a', 'b') of a 3-node skeleton over frames 0-3: predicted instances in every frame, a user
    instance replacing a's prediction in frame 1, b with a single visible point in frame 2."""
    import sleap_io as sio
    skeleton = sio.Skeleton(['head', 'thorax', 'tail'])
    video = sio.Video(video_path, open_backend=False)
    a, b = sio.Track('a'), sio.Track('b')
    default = {
        (0, 'a'): [[10, 10], [14, 12], [18, 20]], (0, 'b'): [[40, 30], [44, 34], [NAN, NAN]],
        (1, 'a'): [[11, 10], [15, 12], [19, 20]], (1, 'b'): [[41, 30], [45, 34], [48, 40]],
        (2, 'a'): [[12, 10], [16, 12], [20, 20]], (2, 'b'): [[42, 30], [NAN, NAN], [NAN, NAN]],
        (3, 'a'): [[13, 10], [17, 12], [21, 20]], (3, 'b'): [[43, 30], [47, 34], [50, 40]],
    }
    default.update(points or {})
    frames = []
    for index in range(4):
        instances = []
        for name, track in (('a', a), ('b', b)):
            pts = np.asarray(default[index, name], float)
            instances.append(sio.PredictedInstance.from_numpy(pts, skeleton=skeleton, score=0.9,
                                                              point_scores=np.ones(3), track=track))
        if index == 1:  # a person corrected a's prediction
            instances.append(sio.Instance.from_numpy(np.asarray([[11, 9], [15, 12], [19, 22]], float),
                                                     skeleton=skeleton, track=a, from_predicted=instances[0]))
        if untracked and index == 3:
            instances.append(sio.Instance.from_numpy(np.asarray([[30, 5], [33, 8], [35, 9]], float),
                                                     skeleton=skeleton))
        frames.append(sio.LabeledFrame(video=video, frame_idx=index, instances=instances))
    sio.save_slp(sio.Labels(labeled_frames=frames, videos=[video], skeletons=[skeleton], tracks=[a, b]), path,
                 verbose=False)


@pytest.fixture(scope='module')
def small(tmp_path_factory):
    folder = tmp_path_factory.mktemp('sleap')
    video, slp = str(folder / 'arena.mp4'), str(folder / 'arena.slp')
    write_video(video)
    write_slp(slp, video)
    return folder, video, slp


def test_boxes_around_visible_points(small):
    _, video, slp = small
    labels = read_sleap(slp, video)
    assert labels.id_names == ['a', 'b']
    # 'all': a's user instance replaces its prediction in frame 1; b's one-point instance in frame 2 is left out
    assert labels.skipped == {'instances with fewer than two visible keypoints': 1}
    got = {(int(f), int(i)): b.tolist() for f, i, b in zip(labels.frames, labels.ids, labels.boxes)}
    assert got == {(0, 1): [10, 10, 8, 10], (0, 2): [40, 30, 4, 4], (1, 1): [11, 9, 8, 13], (1, 2): [41, 30, 7, 10],
                   (2, 1): [12, 10, 8, 10], (3, 1): [13, 10, 8, 10], (3, 2): [43, 30, 7, 10]}
    visibility = dict(zip(zip(labels.frames.tolist(), labels.ids.tolist()), labels.visibility.tolist()))
    assert visibility[0, 2] == pytest.approx(2 / 3) and visibility[0, 1] == 1.0
    assert len(read_sleap(slp, video, instances='predicted')) == 7  # a's prediction in frame 1 instead
    assert read_sleap(slp, video, instances='predicted').boxes[2].tolist() == [11, 10, 8, 10]
    user = read_sleap(slp, video, instances='user')
    assert user.frames.tolist() == [1] and user.id_names == ['a']


def test_bad_sleap_input(small, tmp_path):
    folder, video, slp = small
    other = str(tmp_path / 'other.mp4')
    write_video(other)
    with pytest.raises(UserInputError, match=r'arena\.slp: labels arena\.mp4, not other\.mp4'):
        read_sleap(slp, other)
    untracked = str(tmp_path / 'untracked.slp')
    write_slp(untracked, video, untracked=True)
    with pytest.raises(UserInputError, match=r"1 of 8 instances have no track \(the first in video frame 4\).*--no-tracks"):
        read_sleap(untracked, video)
    boxes_only = read_sleap(untracked, video, tracks=False)
    assert len(boxes_only) == 8 and len(set(boxes_only.ids.tolist())) == 8
    with pytest.raises(UserInputError, match='--instances'):
        read_sleap(slp, video, instances='proofread')
    not_slp = tmp_path / 'broken.slp'
    not_slp.write_text('not hdf5')
    with pytest.raises(UserInputError, match=r'broken\.slp: not a readable SLEAP file'):
        read_sleap(str(not_slp))


def test_layout_and_split(small, tmp_path):
    _, video, slp = small
    out = tmp_path / 'root'
    report = import_labels(slp, str(out), video=video, train=FrameRange(1, 2), test=FrameRange(3, 6), category=312,
                           margin=2, progress=False)
    assert read_split(str(out), 1, 'train') == ['arena-train'] and read_split(str(out), 1, 'test') == ['arena-test']
    train = read_gt(str(out / 'videos/arena-train/gt/gt.txt'))
    # grown by 2 px a side, clipped to the 64 x 48 frame: b in frame 2 (video frame 1) reaches x 48 + 2
    assert train.frames.tolist() == [1, 1, 2, 2] and train.ids.tolist() == [1, 2, 1, 2]
    assert train.boxes.tolist() == [[8, 8, 12, 14], [38, 28, 8, 8], [9, 7, 12, 17], [39, 28, 11, 14]]
    assert set(train.categories.tolist()) == {312} and set(train.valid.tolist()) == {1}
    test = read_gt(str(out / 'videos/arena-test/gt/gt.txt'))
    assert test.frames.tolist() == [1, 2, 2] and test.ids.tolist() == [1, 1, 2]  # video frames 3, 4 -> 1, 2
    info = read_seqinfo(str(out / 'videos/arena-test/seqinfo.ini'))
    assert (info['seqLength'], info['frameRate'], info['imWidth'], info['imHeight']) == (4, 5, WIDTH, HEIGHT)
    assert len(glob.glob(str(out / 'videos/arena-test/img1/*.jpg'))) == 4
    assert len(glob.glob(str(out / 'videos/arena-train/img1/*.jpg'))) == 2
    # each written frame is the video's frame at that place (grey level 20 * index, through mp4v's compression)
    for part, number, index in (('train', 1, 0), ('train', 2, 1), ('test', 1, 2), ('test', 4, 5)):
        image = cv2.imread(str(out / f'videos/arena-{part}/img1/{number:06d}.jpg'))
        assert abs(float(image.mean()) - 20 * index) < 4, (part, number)
    saved = json.load(open(out / 'import.json'))
    assert saved == json.loads(json.dumps(report))
    assert saved['sequences']['arena-test']['unlabelled_frames'] == 2  # video frames 5, 6 carry no labels
    assert saved['sequences']['arena-test']['source_frames'] == [[3, 6]]
    assert saved['identities'] == {'1': 'a', '2': 'b'}
    assert osp.isfile(out / 'meta' / 'categories.tsv')


def test_refusals_leave_nothing(small, tmp_path):
    _, video, slp = small
    out = str(tmp_path / 'root')
    labels = read_sleap(slp, video)
    frames = read_frames(video)

    def refused(match, **options):
        with pytest.raises(UserInputError, match=match):
            write_labelled_video(labels, frames, out, progress=False, **options)
        assert os.listdir(tmp_path) == []  # no root, no partial folder

    refused(r'overlap', train=FrameRange(1, 3), test=FrameRange(3, 6))
    refused(r'--train-frames 5-6: no labelled frame', train=FrameRange(5, 6), test=FrameRange(1, 2))
    refused(r'--test-frames 3-9: .* has 6 frames', test=FrameRange(3, 9))
    refused(r'video name', name='a/b')
    short = str(tmp_path.parent / 'short.mp4')
    write_video(short, frames=2)
    with pytest.raises(UserInputError, match=r'labels video frame 4, but .*short\.mp4 has 2 frames'):
        write_labelled_video(labels, read_frames(short), out, progress=False)
    outside = str(tmp_path.parent / 'outside.slp')
    write_slp(outside, video, points={(2, 'a'): [[12, 10], [16, 12], [70, 20]]})
    with pytest.raises(UserInputError, match=r'video frame 3 \(a\): box x 12\.0\.\.70\.0, y 10\.0\.\.20\.0 lies outside '
                                             r'the 64x48 frame'):
        write_labelled_video(read_sleap(outside, video), frames, out, progress=False)
    assert os.listdir(tmp_path) == []
    os.makedirs(out)
    with pytest.raises(UserInputError, match='exists; choose another folder or pass --overwrite'):
        write_labelled_video(labels, frames, out, progress=False)
    write_labelled_video(labels, frames, out, overwrite=True, progress=False)  # replaces it, leaves nothing beside
    assert os.listdir(tmp_path) == ['root'] and read_split(out, 1, 'test') == ['arena']


def test_unreadable_video_and_missing_frames(small, tmp_path):
    """A video OpenCV cannot open, and a frame folder with a gap in its numbering, end the import before anything
    is written."""
    _, _, slp = small
    broken = tmp_path / 'broken' / 'arena.mp4'
    broken.parent.mkdir()
    broken.write_text('not a video')
    # (OpenCV opens some files it cannot decode: then the video has no frames)
    with pytest.raises(UserInputError, match=r'arena\.mp4: (OpenCV cannot open this as a video|the video has no '
                                             r'frames)'):
        import_labels(slp, str(tmp_path / 'out'), video=str(broken), progress=False)
    folder = tmp_path / 'arena'
    folder.mkdir()
    for number in (1, 2, 4, 5, 6, 7):  # 3 is missing
        cv2.imwrite(str(folder / f'{number:06d}.jpg'), np.zeros((HEIGHT, WIDTH, 3), np.uint8))
    with pytest.raises(UserInputError, match=r'frames are missing: the numbers jump from 2 to 4 \(1 gap in 6'):
        import_labels(slp, str(tmp_path / 'out'), video=str(folder), progress=False)
    assert sorted(os.listdir(tmp_path)) == ['arena', 'broken']


def test_frame_folder_order(tmp_path):
    """Frames named by unpadded numbers (ffmpeg's %d) are read in number order, not name order."""
    from vastmat.datasets.frames import frame_order
    names = [f'frame_{n}.png' for n in range(1, 13)]
    assert frame_order('f', sorted(names)) == names  # sorted by name: frame_1, frame_10, frame_11, frame_12, frame_2
    assert frame_order('f', ['b.png', 'a.png']) == ['a.png', 'b.png']  # unnumbered: by name
    with pytest.raises(UserInputError, match='two frames carry the number 2'):
        frame_order('f', ['x2.png', 'y2.png', 'x3.png'])
    for n in range(1, 13):
        cv2.imwrite(str(tmp_path / f'frame_{n}.png'), np.full((8, 8, 3), 10 * n, np.uint8))
    assert [int(image[0, 0, 0]) for image in read_frames(str(tmp_path))] == [10 * n for n in range(1, 13)]


def test_frame_ranges_and_formats():
    assert parse_frame_range('1-600') == FrameRange(1, 600) and str(FrameRange(3, 9)) == '3-9'
    for bad in ('0-5', '7-3', '5', 'a-b'):
        with pytest.raises(UserInputError, match='FIRST'):
            parse_frame_range(bad, '--train-frames')
    assert detect_format('x/labels.slp') == 'sleap' and detect_format('CollectedData.h5') == 'dlc'
    with pytest.raises(UserInputError, match='cannot tell the label format'):
        detect_format('labels.csv')


@needs_fly
def test_fly_video(tmp_path):
    """SLEAP's predictions on the real fly video: 2,274 instances, 6 of them with fewer than two visible points; 26
    of its 27 tracks keep a box; every box inside the 384 x 384 frame; the tool imports 100 frames to train on and
    100 to test on."""
    labels = read_sleap(osp.join(FLY, 'centered_pair_predictions.slp'))
    assert (len(labels), labels.num_identities) == (2268, 26)
    assert labels.skipped == {'instances with fewer than two visible keypoints': 6}
    assert labels.boxes[:, :2].min() >= 0 and (labels.boxes[:, :2] + labels.boxes[:, 2:]).max() <= 384
    out = str(tmp_path / 'fly')
    report = tool('tools/data/import_labels.py', osp.join(FLY, 'centered_pair_predictions.slp'), out, '--name', 'fly',
                  '--train-frames', '1-100', '--test-frames', '1001-1100', '--category', 'Fly', '--quiet')
    assert report['frame_rate'] == 15 and (report['width'], report['height'], report['video_frames']) == (384, 384,
                                                                                                          1100)
    assert report['video'] == osp.join(FLY, 'centered_pair_low_quality.mp4')  # found beside the labels
    train, test = report['sequences']['fly-train'], report['sequences']['fly-test']
    assert report['skipped']['boxes outside the train and test frames'] == 2268 - train['boxes'] - test['boxes']
    assert (train['frames'], train['labelled_frames'], test['frames'], test['unlabelled_frames']) == (100, 100, 100, 0)
    gt = read_gt(osp.join(out, 'videos', 'fly-test', 'gt', 'gt.txt'))
    assert len(gt) == test['boxes'] and set(gt.categories.tolist()) == {312}
    first = cv2.imread(osp.join(out, 'videos', 'fly-test', 'img1', '000001.jpg'))
    assert first.shape == (384, 384, 3)
