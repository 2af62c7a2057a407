"""gt.txt / det.txt / result / seqinfo.ini readers and writers: exact values and every malformed-input message."""
import os.path as osp

import numpy as np
import pytest

from vastmat.datasets.formats import (Detections, FormatError, GroundTruth, TrackResults, read_detections, read_gt,
                                      read_results, read_seqinfo, write_detections, write_gt, write_results,
                                      write_seqinfo)


def _write(tmp_path, text, name='gt.txt'):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_nine_column_gt(tmp_path):
    path = _write(tmp_path, '1,1,10.5,20,30,40,1,12,0.75\n1,2,0,0,5,5,0,300,-1\n\n2,1,11,21,30,40,1,12,1\n')
    gt = read_gt(path, seq_length=2)
    assert gt.frames.tolist() == [1, 1, 2] and gt.ids.tolist() == [1, 2, 1]
    assert gt.boxes[0].tolist() == [10.5, 20.0, 30.0, 40.0]
    assert gt.valid.tolist() == [1, 0, 1] and gt.categories.tolist() == [12, 300, 12]
    assert gt.visibility.tolist() == [0.75, -1.0, 1.0]
    assert gt.line_numbers.tolist() == [1, 2, 4]


def test_ten_column_and_comma_space_forms(tmp_path):
    gt = read_gt(_write(tmp_path, '1, 1, 549, 308, 158, 227, 1, -1, -1, -1\n2, 1, 550, 309, 158, 227, 1, -1, -1, -1\n'))
    assert gt.boxes[1].tolist() == [550, 309, 158, 227]
    assert gt.categories.tolist() == [-1, -1] and gt.visibility.tolist() == [-1, -1] and gt.valid.tolist() == [1, 1]


@pytest.mark.parametrize('text, message', [
    ('1,1,0,0,5,5,1,1,1\n1,2,0,0,5,5,1,1\n', ':2: 8 columns where the file has 9 (1 such line)'),
    ('1,1,0,0,5,5,1,1\n', ':1: 8 columns, expected 9 or 10'),
    ('1,1,0,0,5,5,1,1,1\n2,1,0,zero,5,5,1,1,1\n', ":2: column 4 is not a number: 'zero'"),
    ('1,1,0,0,5,5,1,1,1\n2,1,0,0,nan,5,1,1,1\n', ':2: column 5 is nan (NaN or infinite)'),
    ('1,1,0,0,5,inf,1,1,1\n', ':1: column 6 is inf (NaN or infinite)'),
    ('1,1,0,0,5,5,1,1,1\n2,1,0,0,-3,5,1,1,1\n', ':2: width -3.0 <= 0'),
    ('1,1,0,0,5,0,1,1,1\n', ':1: height 0.0 <= 0'),
    ('0,1,0,0,5,5,1,1,1\n', ':1: frame 0 < 1 (frames are 1-based)'),
    ('1,1,0,0,5,5,1,1,1\n9,1,0,0,5,5,1,1,1\n', ':2: frame 9 is past seqLength 5'),
    ('1,1,0,0,5,5,1,1,1\n1,2,0,0,5,5,1,1,1\n1,1,3,3,5,5,1,1,1\n', ':3: id 1 appears twice in frame 1 (also on line 1)'),
    ('1.5,1,0,0,5,5,1,1,1\n', ':1: frame 1.5 is not an integer'),
    ('1,1,0,0,5,5,2,1,1\n', ':1: valid flag 2.0 is not 0 or 1'),
    ('1,1,0,0,5,5,1,1,1.5\n', ':1: visibility 1.5 is not in [0, 1] or -1'),
])
def test_malformed_gt_names_file_line_and_reason(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(FormatError) as error:
        read_gt(path, seq_length=5)
    assert str(error.value) == path + message


def test_empty_gt_is_empty(tmp_path):
    gt = read_gt(_write(tmp_path, '\n'))
    assert len(gt) == 0 and gt.boxes.shape == (0, 4)


def test_detections_with_features_and_results(tmp_path):
    dets = read_detections(_write(tmp_path, '1,-1,1,2,3,4,0.9,-1,-1,-1,0.5,0.25\n', 'det.txt'))
    assert dets.scores.tolist() == [0.9] and dets.features.tolist() == [[0.5, 0.25]]
    res = read_results(_write(tmp_path, '2,7,1,2,3,4,0.8,-1,-1,-1\n', 'res.txt'))
    assert res.ids.tolist() == [7] and res.frames.tolist() == [2]
    with pytest.raises(FormatError, match=r'res2.txt:2: id 7 appears twice in frame 2'):
        read_results(_write(tmp_path, '2,7,1,2,3,4,0.8,-1,-1,-1\n2,7,1,2,3,4,0.8,-1,-1,-1\n', 'res2.txt'))


def test_round_trips(tmp_path):
    gt = GroundTruth(np.array([1, 2]), np.array([3, 3]), np.array([[1.25, 2.5, 3.0, 4.0], [2.0, 3.0, 4.0, 5.0]]),
                     np.array([1, 0]), np.array([5, 5]), np.array([1.0, -1.0]), np.array([1, 2]))
    write_gt(str(tmp_path / 'gt.txt'), gt)
    back = read_gt(str(tmp_path / 'gt.txt'))
    for field in ('frames', 'ids', 'boxes', 'valid', 'categories', 'visibility'):
        np.testing.assert_array_equal(getattr(back, field), getattr(gt, field))
    dets = Detections(np.array([1]), np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([0.5]), np.array([[0.125, 1.0]]),
                      np.array([1]))
    write_detections(str(tmp_path / 'det.txt'), dets)
    assert read_detections(str(tmp_path / 'det.txt')).features.tolist() == [[0.125, 1.0]]
    res = TrackResults(np.array([2, 1]), np.array([1, 4]), np.ones((2, 4)), np.array([0.5, 0.25]), np.array([1, 2]))
    write_results(str(tmp_path / 'res.txt'), res)
    assert (tmp_path / 'res.txt').read_text().splitlines()[0].startswith('1,4,')
    assert not [p for p in tmp_path.iterdir() if p.suffix == '.tmp']


def test_seqinfo(tmp_path):
    path = str(tmp_path / 'seqinfo.ini')
    write_seqinfo(path, dict(name='a', imDir='img1', frameRate=10, seqLength=5, imWidth=64, imHeight=48,
                             imExt='.jpg'))
    assert read_seqinfo(path) == dict(name='a', imDir='img1', frameRate=10, seqLength=5, imWidth=64, imHeight=48,
                                      imExt='.jpg')
    bad = _write(tmp_path, '[Sequence]\nname=a\n', 'bad.ini')
    with pytest.raises(FormatError, match=r'bad.ini: missing key seqLength'):
        read_seqinfo(bad)
    with pytest.raises(FormatError, match='seqLength = .x. is not an integer'):
        read_seqinfo(_write(tmp_path, '[Sequence]\nname=a\nseqLength=x\n', 'bad2.ini'))
    with pytest.raises(FormatError, match='no .Sequence. section'):
        read_seqinfo(_write(tmp_path, '[Other]\nname=a\n', 'bad3.ini'))
    with pytest.raises(FormatError, match='file not found'):
        read_seqinfo(osp.join(str(tmp_path), 'missing.ini'))
