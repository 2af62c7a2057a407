"""Readers of labelled videos (DeepLabCut, CVAT video XML and MOT 1.1, COCO and COCO-video) on small files made here
with each format's own writer where it has one (movement, datumaro, pandas), else hand-written from the format's
documentation; exact boxes, frames, identities, visibility, skipped counts and every refusal; one import end to end."""
import json
import os
import shutil
import zipfile

import cv2
import numpy as np
import pytest

from vastmat.datasets.formats import read_gt
from vastmat.datasets.importers import detect_format, import_labels
from vastmat.datasets.importers.coco import read_coco
from vastmat.datasets.importers.cvat import read_cvat_mot, read_cvat_video
from vastmat.datasets.importers.deeplabcut import read_deeplabcut
from vastmat.utils.errors import UserInputError

FEWER = 'instances with fewer than two visible keypoints'
CUTOFF = 'instances with fewer than two keypoints of likelihood >= 0.6'
# the boxes of two mice over 5 frames (mouse 1 absent in frame 2, occluded in frame 1) in the box formats' tests
FRAMES = [0, 0, 1, 1, 2, 3, 3, 4, 4]
IDS = [1, 2, 1, 2, 2, 1, 2, 1, 2]
BOXES = [[1, 2, 10, 10], [20, 20, 10.5, 8], [2, 2, 10, 10], [20, 20, 10.5, 8], [20, 20, 10.5, 8], [4, 2, 10, 10],
         [20, 20, 10.5, 8], [5, 2, 10, 10], [20, 20, 10.5, 8]]
VISIBLE = [1, 1, 0, 1, 1, 1, 1, 1, 1]


def _write(path, text):
    path.write_text(text)
    return str(path)


def _dlc_predictions(path):
    """Two mice over 5 frames, written by movement: mouse_b is absent in frame 2 (a gap), mouse_a has one point in
    frame 4, mouse_a's tail is unsure in frame 1 (likelihood 0.3), mouse_b keeps one sure point in frame 3."""
    from movement.io import load_poses, save_poses
    position = np.full((5, 2, 3, 2), np.nan)  # time, space, keypoints (nose, mid, tail), individuals
    confidence = np.full((5, 3, 2), 0.9)
    for f in range(5):
        position[f, :, :, 0] = [[10 + f, 15 + f, 20 + f], [10, 12, 16]]
        position[f, :, :, 1] = [[40, 44, 50], [30 + f, 33 + f, 36 + f]]
    position[4, :, 1:, 0] = np.nan
    position[2, :, :, 1] = np.nan
    confidence[1, 2, 0] = 0.3
    confidence[3, :2, 1] = 0.5
    poses = load_poses.from_numpy(position, confidence, individual_names=['mouse_a', 'mouse_b'],
                                  keypoint_names=['nose', 'mid', 'tail'])
    save_poses.to_dlc_file(poses, str(path), split_individuals=False)
    return str(path)


def test_deeplabcut_predictions(tmp_path):
    path = _dlc_predictions(tmp_path / 'clipDLC_resnet50_el.h5')
    labels = read_deeplabcut(path)
    assert labels.video == '' and labels.id_names == ['mouse_a', 'mouse_b']
    assert labels.frames.tolist() == [0, 0, 1, 1, 2, 3, 4] and labels.ids.tolist() == [1, 2, 1, 2, 1, 1, 2]
    assert labels.boxes.tolist() == [[10, 10, 10, 6], [40, 30, 10, 6], [11, 10, 5, 2], [40, 31, 10, 6],
                                     [12, 10, 10, 6], [13, 10, 10, 6], [40, 34, 10, 6]]
    assert np.allclose(labels.visibility, [1, 1, 2 / 3, 1, 1, 1, 1])
    assert labels.skipped == {FEWER: 1, CUTOFF: 1}  # the gap is no instance
    every = read_deeplabcut(path, video='clip.mp4', min_confidence=None, tracks=False)
    assert every.video == 'clip.mp4' and len(every) == 8 and every.skipped == {FEWER: 1}
    assert every.ids.tolist() == list(range(1, 9)) and every.id_names[0] == 'instance 1'
    assert every.boxes[2].tolist() == [11, 10, 10, 6]


def _dlc_labelled(path, rows):
    """A labelled-data table as napari-deeplabcut writes it (key ``keypoints``, rows named by image), with DLC's
    unique bodypart ``led`` under the individual ``single``."""
    import pandas as pd
    columns = pd.MultiIndex.from_tuples(
        [('me', ind, part, c) for ind in ('m1', 'm2') for part in ('nose', 'tail') for c in 'xy']
        + [('me', 'single', 'led', c) for c in 'xy'], names=['scorer', 'individuals', 'bodyparts', 'coords'])
    values = [[1, 2, 11, 12, 20, 20, 30, 28, 5, 5], [np.nan] * 4 + [21, 20, 31, 28, np.nan, np.nan]]
    pd.DataFrame(values, index=pd.MultiIndex.from_tuples(rows), columns=columns, dtype=float).to_hdf(
        str(path), key='keypoints', mode='w')
    return str(path)


def test_deeplabcut_labelled_data(tmp_path):
    path = _dlc_labelled(tmp_path / 'CollectedData_me.h5',
                         [('labeled-data', 'clip', 'img003.png'), ('labeled-data', 'clip', 'img017.png')])
    labels = read_deeplabcut(path)
    assert labels.frames.tolist() == [3, 3, 17] and labels.ids.tolist() == [1, 2, 2]
    assert labels.id_names == ['m1', 'm2'] and labels.visibility.tolist() == [1, 1, 1]
    assert labels.boxes.tolist() == [[1, 2, 10, 10], [20, 20, 10, 8], [21, 20, 10, 8]]
    assert labels.skipped == {"frames of DLC unique bodyparts (individual 'single', not an animal)": 1, FEWER: 0}
    assert read_deeplabcut(path, video='/data/clip.mp4').video == '/data/clip.mp4'
    with pytest.raises(UserInputError, match=r'labels the video clip, not other\.mp4'):
        read_deeplabcut(path, video='other.mp4')
    two = _dlc_labelled(tmp_path / 'two.h5', [('labeled-data', 'a', 'img1.png'), ('labeled-data', 'b', 'img2.png')])
    assert read_deeplabcut(two, video='b.avi').frames.tolist() == [2]
    with pytest.raises(UserInputError, match=r'labels 2 videos \(a, b\); choose one with --video'):
        read_deeplabcut(two)


def test_deeplabcut_refusals(tmp_path):
    import pandas as pd
    with pytest.raises(UserInputError, match=r'notes\.h5: not a readable DeepLabCut \.h5 file'):
        read_deeplabcut(_write(tmp_path / 'notes.h5', 'not hdf5'))
    other, single = str(tmp_path / 'other.h5'), str(tmp_path / 'single.h5')
    for key in ('table1', 'table2'):
        pd.DataFrame({'a': [1.0]}).to_hdf(other, key=key)
    pd.DataFrame({'a': [1.0]}).to_hdf(single, key='df_with_missing')
    for path, message in ((other, r'not a DeepLabCut file \(its tables are /table1, /table2'),
                          (single, r'single\.h5: not a DeepLabCut table \(column levels \[None\]')):
        with pytest.raises(UserInputError, match=message):
            read_deeplabcut(path)
    with pytest.raises(UserInputError, match=r'min_confidence 1\.5'):
        read_deeplabcut(single, min_confidence=1.5)
    predictions = _dlc_predictions(tmp_path / 'clip_el.h5')
    with pytest.raises(UserInputError, match=r'clip_el\.h5: the selection holds no labelled boxes \(left out: 1 '
                       r'instances with fewer than two visible keypoints, 8 instances .* likelihood >= 0\.95\)'):
        read_deeplabcut(predictions, min_confidence=0.95)
    twice = _dlc_labelled(tmp_path / 'CollectedData_x.h5', [('labeled-data', 'c', 'img1.png')] * 2)
    with pytest.raises(UserInputError, match="video frame 2 labels identity 'm2' twice"):  # LabelledBoxes refuses
        read_deeplabcut(twice)


def _cvat_xml(meta='task', source='<source>clip.mp4</source>'):
    """The mice of ``BOXES`` as CVAT writes a video task: track 0 leaves at frame 2 (outside) and comes back at 3;
    a polygon track (no box)."""
    box = ('<box frame="{}" keyframe="1" outside="{}" occluded="{}" xtl="{}" ytl="{}" xbr="{}" ybr="{}" '
           'z_order="0"></box>')
    zero = ''.join(box.format(f, int(f == 2), int(f == 1), 1 + f, 2, 11 + f, 12) for f in range(5))
    one = ''.join(box.format(f, 0, 0, 20, 20, 30.5, 28) for f in range(5))
    return f"""<?xml version="1.0" encoding="utf-8"?>
<annotations><version>1.1</version>
  <meta><{meta}><id>7</id><name>mice</name><size>5</size><mode>interpolation</mode><start_frame>0</start_frame>
    <stop_frame>4</stop_frame><labels><label><name>mouse</name><attributes></attributes></label></labels>
    <original_size><width>64</width><height>48</height></original_size></{meta}>{source}</meta>
  <track id="0" label="mouse" source="manual">{zero}</track>
  <track id="1" label="mouse" source="manual">{one}</track>
  <track id="2" label="mouse" source="manual">
    <polygon frame="0" keyframe="1" outside="0" occluded="0" points="1,1;5,1;5,5" z_order="0"></polygon>
  </track>
</annotations>"""


def test_cvat_video_xml(tmp_path):
    path = _write(tmp_path / 'annotations.xml', _cvat_xml())
    labels = read_cvat_video(path)
    assert labels.video == 'clip.mp4' and labels.id_names == ['0', '1']
    assert labels.frames.tolist() == FRAMES and labels.ids.tolist() == IDS and labels.boxes.tolist() == BOXES
    assert labels.visibility.tolist() == VISIBLE
    assert labels.skipped == {'outside shapes (track ended)': 1, 'annotations other than boxes': 1}
    assert read_cvat_video(path, video='/data/clip').video == '/data/clip'  # its frame folder: same stem
    loose = read_cvat_video(path, tracks=False)
    assert loose.ids.tolist() == list(range(1, 10)) and loose.id_names[-1] == 'instance 9'
    job = read_cvat_video(_write(tmp_path / 'job.xml', _cvat_xml('job', source='')), video='any.mp4')
    assert job.video == 'any.mp4' and job.frames.tolist() == labels.frames.tolist()


@pytest.mark.parametrize('meta, video, message', [
    ('task', '/videos/other.mp4', r"annotations\.xml: labels the video clip\.mp4, not other\.mp4 \(are these"),
    ('project', None, r'annotations\.xml: a CVAT project export'),
    ('<root><a/></root>', None, r'annotations\.xml: not a CVAT XML file \(no <meta> element'),
    ('<annotations><meta><task>', None, r'annotations\.xml: not a CVAT XML file \(ParseError')])
def test_cvat_video_xml_refusals(tmp_path, meta, video, message):
    text = _cvat_xml(meta) if meta.isalpha() else meta
    with pytest.raises(UserInputError, match=message):
        read_cvat_video(_write(tmp_path / 'annotations.xml', text), video=video)


def _dataset(track=True, ignored=False):
    """The mice of ``BOXES`` as a datumaro dataset, tracks 0 and 3; ``track``: True both tracked, 'some' track 3
    only, False none; ``ignored``: track 3's last box ignored."""
    import datumaro as dm
    from datumaro.components.annotation import Bbox
    from datumaro.components.media import Image
    items = []
    for f in range(5):
        anns = [] if f == 2 else [Bbox(1 + f, 2, 10, 10, label=0,
                                       attributes=dict(track_id=0, occluded=f == 1) if track is True else {})]
        anns.append(Bbox(20, 20, 10.5, 8, label=0, attributes=dict(occluded=False, ignored=ignored and f == 4,
                                                                 **(dict(track_id=3) if track else {}))))
        items.append(dm.DatasetItem(id=f'frame_{f:06d}', annotations=anns, attributes={'frame': f},
                                    media=Image.from_numpy(np.zeros((48, 64, 3), np.uint8))))
    return dm.Dataset.from_iterable(items, categories=['mouse'])


def _mot_zip(tmp_path, **options):
    folder = tmp_path / 'mot'
    _dataset(**options).export(str(folder), 'mot_seq_gt')
    return shutil.make_archive(str(tmp_path / 'mice_mot'), 'zip', str(folder)), str(folder)


def test_cvat_mot(tmp_path):
    archive, folder = _mot_zip(tmp_path, ignored=True)
    labels = read_cvat_mot(archive)
    assert labels.video == '' and labels.id_names == ['1', '2']  # datumaro's writer renumbers tracks from 1
    assert labels.frames.tolist() == FRAMES[:-1] and labels.ids.tolist() == IDS[:-1]
    assert labels.boxes.tolist() == BOXES[:-1] and labels.visibility.tolist() == VISIBLE[:-1]
    assert labels.skipped == {'boxes marked ignored (MOT "not ignored" flag 0)': 1}
    for same in (folder, os.path.join(folder, 'gt', 'gt.txt')):
        assert read_cvat_mot(same, video='clip.mp4').boxes.tolist() == BOXES[:-1]
    assert read_cvat_mot(archive, tracks=False).id_names[-1] == 'instance 8'


def test_cvat_mot_refusals(tmp_path):
    archive, _ = _mot_zip(tmp_path, track='some')
    with pytest.raises(UserInputError, match=r'mice_mot\.zip: 4 of 9 boxes have no track \(the first in video frame 1\); '
                       'pass --no-tracks'):
        read_cvat_mot(archive)
    assert len(read_cvat_mot(archive, tracks=False)) == 9
    with zipfile.ZipFile(tmp_path / 'empty.zip', 'w') as out:
        out.writestr('readme.txt', 'nothing')
    with pytest.raises(UserInputError, match=r'empty\.zip: no gt/gt\.txt inside'):
        read_cvat_mot(str(tmp_path / 'empty.zip'))
    with pytest.raises(UserInputError, match=r"bad\.txt: not a readable MOT gt\.txt .*invalid literal for int"):
        read_cvat_mot(_write(tmp_path / 'bad.txt', 'frame,id\n'))


@pytest.mark.parametrize('fmt, options, file, read', [
    ('cvat', dict(use_track=True), 'default.xml', read_cvat_video),  # tracks of boxes, no <source>
    ('coco_instances', {}, 'annotations/instances_default.json', read_coco)])  # frames from frame_000003.jpg
def test_written_by_datumaro(tmp_path, fmt, options, file, read):
    _dataset().export(str(tmp_path / 'out'), fmt, **options)
    labels = read(str(tmp_path / 'out' / file))  # track ids: CVAT's track ids, CVAT COCO's attributes.track_id
    assert labels.video == '' and labels.id_names == ['0', '3']
    assert labels.frames.tolist() == FRAMES and labels.ids.tolist() == IDS and labels.boxes.tolist() == BOXES
    assert labels.visibility.tolist() == VISIBLE


def _cocovid(path):
    """MMTracking's CocoVID form: two videos, in ``clipB.mp4`` the mice of :func:`_dataset` (``frame_id`` from 0,
    instances 8 and 9, visibility 0.5 for 9) and a crowd region."""
    videos = [dict(id=1, name='clipA'), dict(id=2, name='clipB.mp4')]
    images = [dict(id=1 + f, video_id=1 + (f > 0), frame_id=max(f - 1, 0), file_name=f'{f}.jpg') for f in range(6)]
    anns = [dict(id=1, image_id=1, video_id=1, instance_id=1, bbox=[1, 1, 5, 5], category_id=1, iscrowd=0),
            dict(id=2, image_id=2, video_id=2, instance_id=10, bbox=[0, 0, 64, 48], category_id=1, iscrowd=1)]
    anns += [dict(id=3 + i, image_id=2 + f, video_id=2, instance_id=7 + k, bbox=box, category_id=1, iscrowd=0,
                  **(dict(visibility=0.5) if k == 2 else {})) for i, (f, k, box) in enumerate(zip(FRAMES, IDS, BOXES))]
    return _write(path, json.dumps(dict(videos=videos, images=images, annotations=anns, categories=[])))


def test_coco_video(tmp_path):
    path = _cocovid(tmp_path / 'mice_cocovid.json')
    labels = read_coco(path, video='/data/clipB')
    assert labels.video == '/data/clipB' and labels.id_names == ['8', '9']
    assert labels.frames.tolist() == FRAMES and labels.ids.tolist() == IDS and labels.boxes.tolist() == BOXES
    assert labels.visibility.tolist() == [-1, 0.5] * 2 + [0.5] + [-1, 0.5] * 2
    assert labels.skipped == {'crowd regions (iscrowd 1)': 1, 'annotations without a box': 0}
    with pytest.raises(UserInputError, match=r'mice_cocovid\.json: labels 2 videos \(clipA, clipB\.mp4\); choose one'):
        read_coco(path)
    with pytest.raises(UserInputError, match=r'none of its 2 videos \(clipA, clipB\.mp4\) matches clipC\.mp4'):
        read_coco(path, video='clipC.mp4')
    one = json.loads((tmp_path / 'mice_cocovid.json').read_text())
    one['videos'], one['images'] = one['videos'][1:], one['images'][1:]
    single = _write(tmp_path / 'single.json', json.dumps(one))
    assert read_coco(single).video == 'clipB.mp4'
    with pytest.raises(UserInputError, match=r'labels the video clipB\.mp4, not clipA\.mp4'):
        read_coco(single, video='clipA.mp4')


@pytest.mark.parametrize('data, tracks, message', [
    ([1, 2], False, r'not a COCO annotation file \(AssertionError'),
    ('hello', False, r'not a COCO annotation file \(JSONDecodeError'),
    (dict(images=[]), False, r'not a COCO instances file \(no annotations list'),
    (dict(images=[dict(id=1, file_name='frame_000003.jpg')], annotations=[dict(id=1, image_id=1, bbox=[0, 0, 2, 2])]),
     True, r'has no tracks \(no instance_id or track_id\); pass --no-tracks to import boxes only'),
    (dict(images=[dict(id=1, file_name='a.jpg')], annotations=[dict(id=1, image_id=1, bbox=[0, 0, 2, 2])]), False,
     r"image 'a\.jpg' has no frame number in its file name"),
    (dict(images=[dict(id=1, file_name='x/f1.jpg'), dict(id=2, file_name='y/f1.jpg')], annotations=[]), False,
     r"images 'x/f1\.jpg' and 'y/f1\.jpg' are both frame 1"),
    (dict(images=[dict(id=1, file_name='f1.jpg')], annotations=[]), True, 'the selection holds no labelled boxes')])
def test_coco_refusals(tmp_path, data, tracks, message):
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises(UserInputError, match=r'labels\.json: ' + message):
        read_coco(_write(tmp_path / 'labels.json', text), tracks=tracks)


def test_detect_format():
    names = ('a.slp', 'b_el.h5', 'annotations.XML', 'gt.txt', 'mot.zip', 'instances.json')
    assert [detect_format(name) for name in names] == ['sleap', 'dlc', 'cvat', 'mot', 'mot', 'coco']
    with pytest.raises(UserInputError, match=r'labels\.csv: cannot tell the label format from the suffix \.csv'):
        detect_format('labels.csv')


def test_import_deeplabcut_end_to_end(tmp_path):
    labels = _dlc_predictions(tmp_path / 'clipDLC_el.h5')
    frames = tmp_path / 'frames'
    frames.mkdir()
    for f in range(5):
        cv2.imwrite(str(frames / f'{f:06d}.jpg'), np.full((48, 64, 3), 40 * f, np.uint8))
    with pytest.raises(UserInputError, match=r'frames: states no frame rate .*give it with --fps'):
        import_labels(labels, str(tmp_path / 'root'), video=str(frames), progress=False)
    report = import_labels(labels, str(tmp_path / 'root'), video=str(frames), fps=25, progress=False)
    assert report['frame_rate'] == 25
    for number in range(1, 6):  # each written frame is the video's frame at that place (its grey level 40 * index)
        image = cv2.imread(str(tmp_path / 'root' / 'videos' / 'frames' / 'img1' / f'{number:06d}.jpg'))
        assert abs(float(image.mean()) - 40 * (number - 1)) < 2
    gt = read_gt(str(tmp_path / 'root' / 'videos' / 'frames' / 'gt' / 'gt.txt'), seq_length=5)
    assert gt.frames.tolist() == [1, 1, 2, 2, 3, 4, 5] and gt.ids.tolist() == [1, 2, 1, 2, 1, 1, 2]
    assert gt.boxes.tolist() == [[6, 6, 18, 14], [36, 26, 18, 14], [7, 6, 13, 10], [36, 27, 18, 14],
                                 [8, 6, 18, 14], [9, 6, 18, 14], [36, 30, 18, 14]]  # grown by 4 pixels
    assert gt.categories.tolist() == [-1] * 7 and np.allclose(gt.visibility, [1, 1, 2 / 3, 1, 1, 1, 1], atol=0.01)
    assert sorted(os.listdir(tmp_path / 'root' / 'videos' / 'frames' / 'img1')) == [f'{f:06d}.jpg' for f in range(1, 6)]
    saved = json.loads((tmp_path / 'root' / 'import.json').read_text())
    assert saved == report and saved['identities'] == {'1': 'mouse_a', '2': 'mouse_b'}
    assert saved['options']['format'] == 'dlc' and saved['margin'] == 4.0 and saved['skipped'] == {FEWER: 1, CUTOFF: 1}
    assert saved['sequences'] == {'frames': dict(split='test', frames=5, source_frames=[[1, 5]], labelled_frames=5,
                                                 boxes=7, unlabelled_frames=0, identities=2)}
    assert (tmp_path / 'root' / 'splits' / 'protocol1' / 'test.txt').read_text().split() == ['frames']
