"""Hand edits of identities (vastmat/apis/identity_edits.py, tools/analysis/edit_identities.py): exact swaps, merges
and splits of small fixed rows and their refusals, the edit log replayed onto a re-run whose ids differ, the
unedited copy, the tool in this process, an edited folder that scores; and the frame number the clips draw."""
import json
import os.path as osp

import numpy as np
import pytest

from helpers.common import tool

from vastmat.apis import read_track_rows, write_track_rows
from vastmat.apis.identity_edits import (LOG_NAME, Anchor, apply_edit, make_edit, merge_identities,
                                         read_edit_log, replay_edits, split_identity, swap_identities)
from vastmat.utils.errors import UserInputError

SCRIPT = 'tools/analysis/edit_identities.py'


def fixed_rows():
    """Identities 1 and 2 in frames 1-4 (10 px boxes moving right, 2 below 1), identity 3 in frames 5-6."""
    rows = [[f, 1, 10 * f, 0, 10 * f + 10, 10, 0.9] for f in range(1, 5)]
    rows += [[f, 2, 10 * f, 50, 10 * f + 10, 60, 0.8] for f in range(1, 5)]
    rows += [[f, 3, 100, 100, 110, 110, 0.7] for f in (5, 6)]
    return np.array(rows, np.float64)


def ids(rows):
    return rows[:, 1].astype(int).tolist()


# rows of fixed_rows(): frames 1 2 3 4 of id 1, frames 1 2 3 4 of id 2, frames 5 6 of id 3
def test_swap_from_a_frame_on_and_in_a_bounded_range():
    rows = fixed_rows()
    out = swap_identities(rows, 1, 2, from_frame=3)
    assert ids(out) == [1, 1, 2, 2, 2, 2, 1, 1, 3, 3]
    assert np.array_equal(np.delete(out, 1, axis=1), np.delete(rows, 1, axis=1))  # only ids change
    assert ids(swap_identities(rows, 2, 1, 2, to_frame=3)) == [1, 2, 2, 1, 2, 1, 1, 2, 3, 3]
    assert ids(rows) == [1, 1, 1, 1, 2, 2, 2, 2, 3, 3]  # the input is left as it was
    assert ids(swap_identities(rows, 1, 3, 4)) == [1, 1, 1, 3, 2, 2, 2, 2, 1, 1]
    # one identity without boxes in the range: the other's boxes take its id
    assert ids(swap_identities(rows, 1, 3, 5)) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1]


def test_merge_and_its_refusal_where_both_have_a_box_in_a_frame():
    rows = fixed_rows()
    assert ids(merge_identities(rows, 1, 3)) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1]
    assert ids(merge_identities(rows, 3, 2)) == [1, 1, 1, 1, 3, 3, 3, 3, 3, 3]
    with pytest.raises(UserInputError, match=r'V\.txt: cannot merge 2 into 1: both have a box in frame\(s\) '
                                             r'1, 2, 3, 4 \(split or swap first\)'):
        merge_identities(rows, 1, 2, source='V.txt')


def test_split_with_the_default_and_a_given_new_id():
    rows = fixed_rows()
    assert ids(split_identity(rows, 1, 3)) == [1, 1, 4, 4, 2, 2, 2, 2, 3, 3]
    assert ids(split_identity(rows, 2, 2, new_id=9)) == [1, 1, 1, 1, 2, 9, 9, 9, 3, 3]


V = dict(source='V.txt')  # the results the messages name


@pytest.mark.parametrize('edit, message', [
    (lambda r: swap_identities(r, 1, 7, 2, **V), r'^V\.txt: no identity 7 in the results \(ids: 1, 2, 3\)$'),
    (lambda r: merge_identities(r, 8, 7, **V), r'^V\.txt: no identity 8 or 7 in the results'),
    (lambda r: split_identity(r, 5, 2, **V), r'^V\.txt: no identity 5 in the results'),
    (lambda r: swap_identities(r, 1, 2, 5, **V), r'^V\.txt: neither identity 1 nor 2 has a box from frame 5 on '
                                                 r'\(frames of 1: 1, 2, 3, 4; of 2: 1, 2, 3, 4\)$'),
    (lambda r: swap_identities(r, 2, 1, 5, to_frame=9, **V),
     r'^V\.txt: neither identity 2 nor 1 has a box in frames 5\.\.9 \(frames of 2: 1, 2, 3, 4; of 1: 1, 2, 3, 4\)$'),
    (lambda r: swap_identities(r, 1, 2, 4, to_frame=3, **V),
     r'^V\.txt: swap of 1 and 2: frame range 4\.\.3 is empty$'),
    (lambda r: swap_identities(r, 2, 2, 1, **V), r'^V\.txt: swap needs two different identities, got 2 twice$'),
    (lambda r: merge_identities(r, 3, 3, **V), r'^V\.txt: merge needs two different identities, got 3 twice$'),
    (lambda r: split_identity(r, 3, 7, **V), r'^V\.txt: cannot split 3 at frame 7: it has no box from that frame '
                                             r'\(its frames: 5, 6\)$'),
    (lambda r: split_identity(r, 3, 5, **V), r'^V\.txt: cannot split 3 at frame 5: it has no box before that frame'),
    (lambda r: split_identity(r, 1, 2, new_id=3, **V), r'^V\.txt: cannot split 1 into id 3: that identity exists '
                                                       r'\(frames 5, 6\)$'),
])
def test_unknown_ids_and_empty_selections_are_refused_naming_them(edit, message):
    with pytest.raises(UserInputError, match=message):
        edit(fixed_rows())


# ------------------------------------------------------------------------------------------- records and the log
EDITS = [('swap', (1, 2), (3, None)), ('merge', (1, 3), ()), ('split', (2, None), (3, ))]
EDITED_IDS = [1, 1, 3, 3, 2, 2, 1, 1, 1, 1]  # fixed_rows() after EDITS


def by_box(rows):
    """Rows ordered by frame, then box: runs whose ids differ compare row by row."""
    return rows[np.lexsort((rows[:, 3], rows[:, 2], rows[:, 0]))]


def test_edits_are_recorded_with_anchors_and_logged_beside_the_results(tmp_path):
    rows, path = fixed_rows(), str(tmp_path / 'V.txt')
    write_track_rows(rows, path)
    original = open(path, 'rb').read()
    from vastmat.apis.identity_edits import edit_results_file
    direct = rows
    for op, edit_ids, frames in EDITS:
        expected, direct = make_edit(direct, op, 'V', edit_ids, frames)
        edit, changes = edit_results_file(path, op, edit_ids, frames)
        assert edit == expected and sum(changes.values()) == edit.moved
        assert open(tmp_path / 'unedited' / 'V.txt', 'rb').read() == original  # kept once, never overwritten
    assert ids(direct) == EDITED_IDS
    assert np.array_equal(by_box(read_track_rows(path)), by_box(direct))
    lines = [json.loads(line) for line in open(tmp_path / LOG_NAME)]
    assert lines[0] == dict(op='swap', video='V', ids=[1, 2], frames=[3, None], moved=4, anchors=[
        dict(id=1, frame=3, box=[30.0, 0.0, 40.0, 10.0]), dict(id=2, frame=3, box=[30.0, 50.0, 40.0, 60.0])])
    # merge: anchored at the absorbed identity's first frame (5); the kept one has none there: its nearest box
    assert lines[1]['anchors'] == [dict(id=1, frame=4, box=[40.0, 50.0, 50.0, 60.0]),
                                   dict(id=3, frame=5, box=[100.0, 100.0, 110.0, 110.0])]
    assert (lines[2]['ids'], lines[2]['frames'], lines[2]['moved']) == ([2, 3], [3], 2)  # the new id is logged
    assert [a['id'] for a in lines[2]['anchors']] == [2]  # the new identity had no box to anchor
    edits = read_edit_log(str(tmp_path / LOG_NAME))
    assert [e.describe() for e in edits] == ['swap 1 <-> 2 from frame 3', 'merge 3 into 1',
                                            'split 2 at frame 3: new id 3']
    assert np.array_equal(replay_edits(rows, edits), direct)  # the same run: the same edits
    rebuilt = rows
    for edit in edits:
        rebuilt = apply_edit(rebuilt, edit)
    assert np.array_equal(rebuilt, direct)


def test_the_log_replays_on_a_rerun_whose_ids_differ(tmp_path):
    from vastmat.apis.identity_edits import edit_results_file, replay_log
    rows, run_a, run_b = fixed_rows(), tmp_path / 'a', tmp_path / 'b'
    write_track_rows(rows, str(run_a / 'V.txt'))
    for op, edit_ids, frames in EDITS:
        edit_results_file(str(run_a / 'V.txt'), op, edit_ids, frames)
    renumber = {1: 102, 2: 101, 3: 103}  # permuted and offset by 100
    rerun = rows.copy()
    rerun[:, 1] = [renumber[i] for i in ids(rows)]
    rerun[:, 2:6] += 1  # and every box 1 px off: IoU 0.68 with the anchors
    write_track_rows(rerun, str(run_b / 'V.txt'))
    replayed = replay_log(str(run_a / LOG_NAME), str(run_b))
    # the same edited boxes as the direct edit, up to the renumbering (the split's new id 3 is free in the re-run)
    expected = rerun.copy()
    expected[:, 1] = [{1: 102, 2: 101, 3: 3}[i] for i in EDITED_IDS]
    assert np.array_equal(by_box(read_track_rows(str(run_b / 'V.txt'))), by_box(expected))
    assert np.array_equal(replay_edits(rerun, read_edit_log(str(run_a / LOG_NAME))), expected)
    # the re-run's own log, in its own ids and boxes
    assert [(e.op, e.ids, e.frames) for e in replayed] == [('swap', (102, 101), (3, None)),
                                                           ('merge', (102, 103), ()), ('split', (101, 3), (3, ))]
    assert read_edit_log(str(run_b / LOG_NAME)) == replayed
    assert replayed[0].anchors[0] == Anchor(102, 3, (31.0, 1.0, 41.0, 11.0))
    with pytest.raises(UserInputError, match=r'already has edits of V \(undo them first\)'):
        replay_log(str(run_a / LOG_NAME), str(run_b))


def test_replay_refuses_an_anchor_that_matches_no_identity(tmp_path):
    from vastmat.apis.identity_edits import replay_log
    rows = fixed_rows()
    log = tmp_path / 'a' / LOG_NAME
    edit, _ = make_edit(rows, 'swap', 'V', (1, 2), (3, None))
    log.parent.mkdir()
    log.write_text(edit.to_json() + '\n')
    moved = rows.copy()
    moved[:, 2:6] += 8  # IoU 0.02
    path = str(tmp_path / 'b' / 'V.txt')
    write_track_rows(moved, path)
    before = open(path, 'rb').read()
    with pytest.raises(UserInputError, match=(
            r'V\.txt: edit 1 \(V: swap 1 <-> 2 from frame 3\): identity 1\'s anchor box \[30\.0, 0\.0, 40\.0, '
            r'10\.0\] at frame 3 matches no identity of these results by IoU >= 0\.5 \(best IoU 0\.02\)')):
        replay_log(str(log), str(tmp_path / 'b'))
    assert open(path, 'rb').read() == before and not osp.exists(tmp_path / 'b' / LOG_NAME)
    with pytest.raises(UserInputError, match=r'^edit: .*at frame 3 matches no identity .*\(no box in that frame\)$'):
        from vastmat.apis.identity_edits import match_anchor
        match_anchor(rows[rows[:, 0] != 3], edit.anchors[0])
    (tmp_path / 'bad.jsonl').write_text(edit.to_json() + '\n{"op": "rename"}\n')
    with pytest.raises(UserInputError, match=r"bad\.jsonl:2: not an identity edit \(op 'rename' is not one of"):
        read_edit_log(str(tmp_path / 'bad.jsonl'))


# ------------------------------------------------------------------------------------------------ the tool
def test_the_tool_edits_lists_replays_and_undoes(tmp_path, capsys):
    rows, path = fixed_rows(), tmp_path / 'run' / 'V.txt'
    write_track_rows(rows, str(path))
    original = path.read_bytes()
    out = tool(SCRIPT, 'swap', path, 1, 2, '--from-frame', 3)
    assert out['changes'] == {(1, 2): 2, (2, 1): 2}
    assert 'V: swap 1 <-> 2 from frame 3: 4 box(es) changed id (1 -> 2: 2, 2 -> 1: 2)' in capsys.readouterr().out
    tool(SCRIPT, 'swap', path, 1, 2, '--from-frame', 2, '--to-frame', 2)
    tool(SCRIPT, 'split', path, 3, '--at-frame', 6, '--new-id', 9)
    tool(SCRIPT, 'merge', path, 9, 3)
    assert 'V: merge 3 into 9: 1 box(es) changed id (3 -> 9: 1)' in capsys.readouterr().out
    assert ids(by_box(read_track_rows(str(path)))) == [1, 2, 2, 1, 2, 1, 2, 1, 9, 9]
    listed = tool(SCRIPT, 'list', tmp_path / 'run')
    table = capsys.readouterr().out
    assert len(listed['edits']) == 4 and 'split 3 at frame 6: new id 9' in table and '1@3, 2@3' in table
    # the log onto a copy of the unedited run
    write_track_rows(rows, str(tmp_path / 'copy' / 'V.txt'))
    tool(SCRIPT, 'replay', tmp_path / 'run' / LOG_NAME, tmp_path / 'copy')
    assert (tmp_path / 'copy' / 'V.txt').read_bytes() == path.read_bytes()
    assert '4 edit(s) of' in capsys.readouterr().out
    assert tool(SCRIPT, 'undo', path) == dict(dropped=4)
    assert path.read_bytes() == original and (tmp_path / 'run' / LOG_NAME).read_text() == ''
    assert not osp.exists(tmp_path / 'run' / 'unedited' / 'V.txt')
    # a user error is one line and exit status 2
    from helpers.common import tool_module

    from vastmat.engine.cli import run_cli
    with pytest.raises(SystemExit) as exc:
        run_cli(tool_module(SCRIPT).main, ['merge', str(path), '1', '7'])
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip() == f'error: {path}: no identity 7 in the results (ids: 1, 2, 3)'
    with pytest.raises(UserInputError, match='not edited'):
        tool(SCRIPT, 'undo', path)


def test_the_edited_folder_scores_as_it_lies(tmp_path):
    """Two animals; the tracker swapped their ids at frame 11: the swap edit takes IDSW from 2 to 0."""
    from vastmat.datasets.formats import GroundTruth, write_gt, write_seqinfo
    from vastmat.evaluation.mot_eval import evaluate, sequence_specs
    length = 20
    frames, animals = np.repeat(np.arange(1, length + 1), 2), np.tile([1, 2], length)
    boxes = np.column_stack([10 + 5 * frames, np.where(animals == 1, 20, 120), np.full(2 * length, 40),
                             np.full(2 * length, 30)]).astype(np.float64)
    ones = np.ones(2 * length, np.int64)
    root = tmp_path / 'gt'
    write_gt(str(root / 'Pair' / 'gt' / 'gt.txt'),
             GroundTruth(frames, animals, boxes, ones, ones, ones.astype(np.float64), np.arange(1, 2 * length + 1)))
    write_seqinfo(str(root / 'Pair' / 'seqinfo.ini'), dict(name='Pair', imDir='img1', frameRate=10,
                                                           seqLength=length, imWidth=320, imHeight=240, imExt='.jpg'))
    tracked = np.where((frames >= 11) ^ (animals == 1), 7, 8)  # 7 follows animal 1, then animal 2
    results = tmp_path / 'results'
    write_track_rows(np.column_stack([frames, tracked, boxes[:, :2], boxes[:, :2] + boxes[:, 2:], ones]),
                     str(results / 'Pair.txt'))

    def score(folder):
        specs, missing = sequence_specs(str(root), str(folder), ['Pair'])
        assert not missing
        return evaluate(specs)['COMBINED']

    before = score(results)
    assert before['IDSW'] == 2 and before['HOTA'] < 0.8
    tool(SCRIPT, 'swap', results / 'Pair.txt', 7, 8, '--from-frame', 11)
    after = score(results)
    assert after['IDSW'] == 0 and after['HOTA'] == pytest.approx(1.0)
    assert score(results / 'unedited')['HOTA'] == before['HOTA']  # the original, scored as a folder of its own


# ---------------------------------------------------------------------------------------- the clips' frame label
def test_every_drawn_frame_carries_its_number_in_the_top_right_corner():
    from vastmat.apis.drawing import TrackDrawer, frame_label, id_colour
    assert frame_label(123) == 'frame 123'
    image = np.full((120, 200, 3), 64, np.uint8)
    none = np.zeros((0, 7))

    def label_extent(drawer, frame=123):
        changed = np.argwhere((drawer.draw(image, frame, none) != image).any(axis=2))
        return changed.min(axis=0), changed.max(axis=0)

    (top, left), (bottom, right) = label_extent(TrackDrawer())
    assert top == 0 and right == 199 and 10 <= bottom < 20 and 120 < left  # the top right corner only
    assert np.array_equal(TrackDrawer(show_frame=False).draw(image, 123, none), image)
    assert not np.array_equal(TrackDrawer().draw(image, 124, none), TrackDrawer().draw(image, 123, none))
    (_, left3), (bottom3, _) = label_extent(TrackDrawer(scale=3))  # for frames shown 3 times smaller
    assert (bottom3 + 1) / (bottom + 1) == pytest.approx(3, rel=0.15)  # glyph metrics scale roughly
    assert (200 - left3) / (200 - left) == pytest.approx(3, rel=0.15)
    # a box across the label keeps its id's colour: the label is drawn under the boxes
    drawn = TrackDrawer().draw(image, 123, np.array([[123, 7, 150, 0, 199, 40, 0.9]]))
    assert tuple(drawn[8, 199].tolist()) == id_colour(7)
