"""The SORT plugin (plugins/vastmat-sort): the official SORT outputs on MOT15 TUD reproduced, the birth / death
rules on hand-made frames, input validation, and registration through a real entry point."""
import os.path as osp
import sys

import numpy as np
import pytest

from helpers.common import REPO, SHARED_DATA, plugins_from

PLUGIN = osp.join(REPO, 'plugins', 'vastmat-sort')
sys.path.insert(0, PLUGIN)

from vastmat.structures.tracking import TrackingFrame  # noqa: E402
from vastmat_sort.sort_tracker import SORT  # noqa: E402

TUD = osp.join(SHARED_DATA, 'MOT15-TUD')
needs_tud = pytest.mark.skipif(not osp.isdir(osp.join(TUD, 'trackers', 'SORT')),
                               reason=f'MOT15-TUD detections and official SORT results not found under {TUD} '
                                      '(../shared/data beside the clone)')


def _box(x, y, w=20.0, h=40.0):
    return [x, y, x + w, y + h]


def _step(tracker, boxes, frame_id):
    boxes = np.array(boxes, np.float64).reshape(-1, 4)
    return tracker.update(TrackingFrame.from_arrays(boxes, np.ones(len(boxes)), frame_id))


def _run_sequence(seq):
    """Our SORT over one TUD sequence: {frame: (ids, ltwh boxes)} in the order the tracker reports them."""
    from vastmat.datasets.formats import read_detections, read_seqinfo
    from vastmat.structures.bbox import ltwh_to_xyxy
    root = osp.join(TUD, 'train', seq)
    seq_length = read_seqinfo(osp.join(root, 'seqinfo.ini'))['seqLength']
    dets = read_detections(osp.join(root, 'det', 'det.txt'), seq_length)
    tracker = SORT()
    tracker.reset()
    out = {}
    for frame in range(1, seq_length + 1):
        rows = dets.frames == frame
        result = tracker.update(TrackingFrame.from_arrays(ltwh_to_xyxy(dets.boxes[rows]), dets.scores[rows], frame))
        assert result.bboxes.shape == (len(result), 4) and np.all(result.scores == 1.0)
        ltwh = np.column_stack([result.bboxes[:, :2], result.bboxes[:, 2:] - result.bboxes[:, :2]])
        out[frame] = (result.ids, ltwh)
    return out, seq_length


@needs_tud
@pytest.mark.parametrize('seq, id_offset', [('TUD-Campus', 0), ('TUD-Stadtmitte', 34)])
def test_reproduces_official_sort_on_tud(seq, id_offset):
    """Same boxes (to the 2 decimals written), in the same order, with the same ids up to one relabelling.

    The official run did TUD-Campus then TUD-Stadtmitte in one process with SORT's class-wide id counter, so the
    Stadtmitte ids continue after the 34 tracks created in Campus; ours restart at 1 on reset(): a constant offset.
    """
    from vastmat.datasets.formats import read_results
    ours, seq_length = _run_sequence(seq)
    ref = read_results(osp.join(TUD, 'trackers', 'SORT', f'{seq}.txt'), seq_length)
    mapping, inverse = {}, {}
    for frame in range(1, seq_length + 1):
        rows = np.flatnonzero(ref.frames == frame)  # file order = the order the official tracker reported them
        ids, boxes = ours[frame]
        assert len(ids) == len(rows), f'{seq} frame {frame}: {len(ids)} boxes, official {len(rows)}'
        np.testing.assert_allclose(boxes, ref.boxes[rows], rtol=0, atol=1e-2, err_msg=f'{seq} frame {frame}')
        for our_id, ref_id in zip(ids.tolist(), ref.ids[rows].tolist()):
            assert mapping.setdefault(our_id, ref_id) == ref_id, f'{seq} frame {frame}: id {our_id} relabelled'
            assert inverse.setdefault(ref_id, our_id) == our_id, f'{seq} frame {frame}: ids merged into {ref_id}'
    assert mapping and all(ref_id - our_id == id_offset for our_id, ref_id in mapping.items())


def test_min_hits_warm_up_then_three_consecutive_hits():
    """Frames 1..min_hits report every matched or new track; later a new track needs min_hits consecutive hits."""
    tracker = SORT()
    for frame in (1, 2, 3):
        out = _step(tracker, [_box(100 + frame, 100)], frame)
        assert out.ids.tolist() == [1]
    # a second object appears in frame 4: born (hit_streak 0), then hits 1, 2, 3 in frames 5, 6, 7
    reported = []
    for frame in range(4, 9):
        out = _step(tracker, [_box(100 + frame, 100), _box(300 + frame, 50)], frame)
        reported.append(sorted(out.ids.tolist()))
    assert reported == [[1], [1], [1], [1, 2], [1, 2]]
    np.testing.assert_allclose(out.bboxes[out.ids.tolist().index(2)], _box(308, 50), atol=1.0)


def test_max_age_one_removes_a_track_after_two_missed_frames():
    """max_age=1: a track missed in one frame survives (not reported), missed in two frames it is gone."""
    tracker = SORT()
    for frame in (1, 2, 3, 4):
        assert _step(tracker, [_box(100, 100)], frame).ids.tolist() == [1]
    assert len(_step(tracker, [], 5)) == 0 and len(tracker.tracks.live) == 1  # missed once: kept, not reported
    assert _step(tracker, [_box(100, 100)], 6).ids.tolist() == []  # matched again, hit streak restarts at 1
    assert len(tracker.tracks.live) == 1
    assert len(_step(tracker, [], 7)) == 0 and len(_step(tracker, [], 8)) == 0
    assert len(tracker.tracks.live) == 0
    assert len(_step(tracker, [_box(100, 100)], 9)) == 0  # a new track
    assert tracker.tracks.ids[tracker.tracks.live].tolist() == [2]


def test_reset_restarts_ids_and_warm_up():
    tracker = SORT()
    for frame in (1, 2):
        _step(tracker, [_box(10, 10), _box(200, 10)], frame)
    tracker.reset()
    assert len(tracker.tracks.live) == 0
    assert sorted(_step(tracker, [_box(50, 50)], 1).ids.tolist()) == [1]


def test_output_is_reverse_creation_order_and_empty_frames():
    tracker = SORT()
    out = _step(tracker, np.zeros((0, 4)), 1)
    assert len(out) == 0 and out.bboxes.shape == (0, 4)
    out = _step(tracker, [_box(10, 10), _box(200, 10), _box(400, 10)], 2)
    assert out.ids.tolist() == [3, 2, 1]
    np.testing.assert_allclose(out.bboxes, np.array([_box(400, 10), _box(200, 10), _box(10, 10)]))


def test_zero_size_boxes_are_dropped_before_sort_sees_them():
    """A clipped box of zero width would make SORT's aspect ratio w / h zero and its Kalman state degenerate: the
    frame input drops it (counted), SORT tracks the rest."""
    frame = TrackingFrame.from_arrays([_box(10, 10), [50, 50, 50, 90]], [0.9, 0.9], 1)
    assert frame.num_dropped == 1
    out = SORT().update(frame)
    assert out.ids.tolist() == [1] and np.isfinite(out.bboxes).all()


def test_entry_point_registers_sort_tracker(sort_site, monkeypatch):
    """pip-installed into a private site directory (not the venv), the plugin's entry point is found and makes
    type='SORT' buildable (a fresh process finds it too: the README test runs ``vastmat-plugins``)."""
    from vastmat.registry import MODELS
    state = plugins_from(sort_site, monkeypatch)
    assert state.loaded['sort'] == 'vastmat-sort 0.1.0' and 'sort' not in state.failed
    tracker = MODELS.build(dict(type='SORT', min_hits=2))
    assert (type(tracker).__module__, tracker.max_age, tracker.min_hits, tracker.iou_threshold) == \
        ('vastmat_sort.sort_tracker', 1, 2, 0.3)
