"""Exporters of tracking results (vastmat/apis/export.py, tools/analysis/export_tracks.py): MOT results -> movement's
netCDF bounding-box dataset, the tidy table (CSV, Parquet) and MOT text, each read back and compared with the input.

The fixed input: two identities over six frames at 4 FPS (dyadic values, so that centres, times and speeds are
exact in binary and are compared with ``==``); id 3 has no box in frame 4."""
import os
import os.path as osp
import re

import numpy as np
import pandas as pd
import pytest

from helpers.common import SHARED_DATA, tool
from vastmat.apis.export import (TABLE_COLUMNS, export_tracks, load_movement, movement_to_results, read_table,
                                 results_to_table, video_timing)
from vastmat.datasets.formats import FormatError, read_results, write_results
from vastmat.utils.errors import UserInputError

FPS = 4
# frame, id, left, top, width, height, score (sorted by frame then id, as the MOT writer sorts)
ROWS = [
    (1, 3, 10.5, 20.25, 30.5, 40.75, 0.91234),
    (1, 12, 100.125, 50.375, 12.25, 8.5, 0.5),
    (2, 3, 13.5, 24.25, 30.5, 40.75, 0.87),
    (2, 12, 101.625, 52.375, 12.25, 8.5, 0.625),
    (3, 3, 19.5, 32.25, 30.5, 40.75, 0.75),
    (3, 12, 103.125, 54.375, 12.25, 8.5, 0.70001),
    (4, 12, 104.625, 56.375, 12.25, 8.5, 0.8),
    (5, 3, 25.5, 40.25, 30.5, 40.75, 0.66),
    (5, 12, 106.125, 58.375, 12.25, 8.5, 0.9),
    (6, 3, 25.5, 40.25, 31.5, 40.75, 0.6),
    (6, 12, 107.625, 60.375, 12.25, 8.5, 1.0),
]
# by hand: centre = left + width / 2, top + height / 2; speed = centre step / (frame step / FPS)
CENTRES = [(25.75, 40.625), (106.25, 54.625), (28.75, 44.625), (107.75, 56.625), (34.75, 52.625), (109.25, 58.625),
           (110.75, 60.625), (40.75, 60.625), (112.25, 62.625), (41.25, 60.625), (113.75, 64.625)]
# id 3: (3, 4) -> 5 px in 1 frame = 20; (6, 8) -> 10 px = 40; frames 3 -> 5: 10 px in 0.5 s = 20; 0.5 px = 2.
# id 12: (1.5, 2) -> 2.5 px a frame = 10.
SPEEDS = [np.nan, np.nan, 20.0, 10.0, 40.0, 10.0, 10.0, 20.0, 10.0, 2.0, 10.0]


def mot_text(rows=ROWS) -> str:
    """The rows as the project's MOT writer writes them (boxes at 3 decimals, scores at 5)."""
    return ''.join(f'{f},{i},{l:.3f},{t:.3f},{w:.3f},{h:.3f},{s:.5f},-1,-1,-1\n' for f, i, l, t, w, h, s in rows)


def write(path, text: str) -> str:
    os.makedirs(osp.dirname(str(path)), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)
    return str(path)


def mot_of(results, decimals: int = 3) -> str:
    """TrackResults as the MOT writer's text (the written precision)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = osp.join(tmp, 'r.txt')
        write_results(path, results, decimals=decimals)
        with open(path) as f:
            return f.read()


@pytest.fixture
def results_file(tmp_path):
    return write(tmp_path / 'results' / 'fly_pair.txt', mot_text())


def test_netcdf_round_trip(results_file, tmp_path):
    out = str(tmp_path / 'out' / 'fly_pair.nc')
    [record] = export_tracks(results_file, out, fps=FPS)
    assert (record.video, record.format, record.boxes, record.identities, record.frames, record.fps) == \
        ('fly_pair', 'nc', 11, 2, 6, 4.0)
    ds = load_movement(out)
    assert ds.attrs['ds_type'] == 'bboxes' and ds.attrs['source_software'] == 'vastmat'
    assert ds.attrs['fps'] == FPS and ds.attrs['time_unit'] == 'seconds' and ds.attrs['video'] == 'fly_pair'
    assert list(ds['individuals'].values) == ['id_3', 'id_12']
    assert ds['frame'].values.tolist() == [1, 2, 3, 4, 5, 6]
    assert ds['time'].values.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0, 1.25]  # (frame - 1) / fps
    # movement's layout: centre and (width, height); the missing box is NaN in every variable
    position = ds['position'].sel(individuals='id_3').transpose('time', 'space').values
    assert np.isnan(position[3]).all() and np.isnan(ds['shape'].sel(individuals='id_3').values[3]).all()
    assert np.isnan(ds['confidence'].sel(individuals='id_3').values[3])
    id3 = [i for i, row in enumerate(ROWS) if row[1] == 3]
    assert position[[0, 1, 2, 4, 5]].tolist() == [list(CENTRES[i]) for i in id3]
    assert ds['shape'].sel(individuals='id_12', space='x').values.tolist() == [12.25] * 6
    restored = movement_to_results(ds)
    assert mot_of(restored) == mot_text()  # the MOT rows exactly, at the written precision
    original = read_results(results_file)
    np.testing.assert_array_equal(restored.frames, original.frames)
    np.testing.assert_array_equal(restored.ids, original.ids)
    np.testing.assert_array_equal(restored.boxes, original.boxes)
    np.testing.assert_array_equal(restored.scores, original.scores)


def test_netcdf_single_frame(tmp_path):
    """One frame (movement's from_numpy squeezes its frame column: the exporter still gives a 1-long time axis)."""
    rows = [(7, 1, 1.5, 2.5, 3.5, 4.5, 0.5), (7, 2, 10.0, 20.0, 5.0, 6.0, 0.25)]
    path = write(tmp_path / 'one.txt', mot_text(rows))
    export_tracks(path, str(tmp_path / 'one.nc'), fps=10)
    ds = load_movement(str(tmp_path / 'one.nc'))
    assert ds.sizes['time'] == 1 and ds['frame'].values.tolist() == [7] and ds['time'].values.tolist() == [0.6]
    assert mot_of(movement_to_results(ds)) == mot_text(rows)


@pytest.mark.parametrize('suffix', ['csv', 'parquet'])
def test_table_round_trip(results_file, tmp_path, suffix):
    out = str(tmp_path / f'tracks.{suffix}')
    export_tracks(results_file, out, fps=FPS)
    table = read_table(out)
    plain = pd.read_csv(out) if suffix == 'csv' else pd.read_parquet(out)  # plain pandas reads it too
    assert list(table.columns) == list(plain.columns) == list(TABLE_COLUMNS) and len(table) == len(ROWS)
    assert (table['video'] == 'fly_pair').all()
    rows = table[['frame', 'id', 'left', 'top', 'width', 'height', 'score']].to_numpy().tolist()
    assert rows == [list(r) for r in ROWS]
    assert table['frame'].dtype == np.int64 and table['id'].dtype == np.int64
    assert table['time_s'].tolist() == [(f - 1) / FPS for f, *_ in ROWS]
    assert table[['centre_x', 'centre_y']].to_numpy().tolist() == [list(c) for c in CENTRES]
    np.testing.assert_array_equal(table['speed_px_s'].to_numpy(), SPEEDS)  # NaN at each identity's first box
    pd.testing.assert_frame_equal(table, results_to_table(read_results(results_file), FPS, 'fly_pair'))


def test_mot_round_trip(results_file, tmp_path):
    out = str(tmp_path / 'again.txt')
    [record] = export_tracks(results_file, out)  # no frame rate needed
    assert record.fps is None and record.boxes == len(ROWS)
    with open(out) as f:
        assert f.read() == mot_text()


def test_fps_from_seqinfo(results_file, tmp_path):
    root = tmp_path / 'root'  # a MOTChallenge split folder; a VastMAT root's videos/ is found the same way
    write(root / 'fly_pair' / 'seqinfo.ini', '[Sequence]\nname=fly_pair\nframeRate=4\nseqLength=6\n')
    assert video_timing('fly_pair', data_root=str(root)) == (4.0, 6)
    export_tracks(results_file, str(tmp_path / 'a.nc'), data_root=str(root))
    assert load_movement(str(tmp_path / 'a.nc')).attrs['fps'] == 4
    write(root / 'fly_pair' / 'seqinfo.ini', '[Sequence]\nname=fly_pair\nframeRate=4\nseqLength=5\n')
    with pytest.raises(FormatError, match=r'fly_pair\.txt:10: frame 6 is past seqLength 5'):
        export_tracks(results_file, str(tmp_path / 'b.csv'), data_root=str(root))
    # one --seqinfo file gives the rate only (it may serve several videos), so its seqLength bounds nothing
    ini = str(root / 'fly_pair' / 'seqinfo.ini')
    assert video_timing('any', seqinfo=ini) == (4.0, None)
    [record] = tool('tools/analysis/export_tracks.py', results_file, '--to', tmp_path / 'd.parquet', '--seqinfo', ini)
    assert record['fps'] == 4 and read_table(str(tmp_path / 'd.parquet'))['time_s'].max() == 1.25
    write(root / 'fly_pair' / 'seqinfo.ini', '[Sequence]\nname=fly_pair\nseqLength=6\n')
    with pytest.raises(UserInputError, match='seqinfo.ini: no frameRate'):
        export_tracks(results_file, str(tmp_path / 'c.csv'), data_root=str(root))
    assert not any(osp.exists(tmp_path / n) for n in ('b.csv', 'c.csv'))


def test_bad_input(results_file, tmp_path):
    with pytest.raises(UserInputError, match='no frame rate; give --fps'):
        export_tracks(results_file, str(tmp_path / 'x.nc'))
    with pytest.raises(UserInputError, match='the frame rate must be a positive number'):
        export_tracks(results_file, str(tmp_path / 'x.nc'), fps=0)
    lines = mot_text().splitlines(keepends=True)
    folder = tmp_path / 'many'
    write(folder / 'a.txt', mot_text())
    bad = write(folder / 'b.txt', ''.join(lines[:2] + ['3,3,19.5,32.25,30.5,x,0.75,-1,-1,-1\n'] + lines[3:]))
    out = tmp_path / 'many_out'
    with pytest.raises(FormatError, match='^' + re.escape(bad) + ':3: column 6 is not a number'):
        export_tracks(str(folder), str(out), 'csv', fps=FPS)
    assert not out.exists()  # every input is read before anything is written: a.csv was not written either
    empty = write(tmp_path / 'empty.txt', '')
    with pytest.raises(UserInputError, match='empty.txt: no boxes, nothing to export'):
        export_tracks(empty, str(tmp_path / 'empty.nc'), fps=FPS)
    with pytest.raises(UserInputError, match='no boxes'):
        export_tracks(empty, str(tmp_path / 'empty_again.txt'))
    assert not osp.exists(tmp_path / 'empty.nc') and not osp.exists(tmp_path / 'empty_again.txt')
    with pytest.raises(UserInputError, match='2 videos do not go into one .nc file'):
        export_tracks(str(folder), str(tmp_path / 'both.nc'), fps=FPS)
    with pytest.raises(UserInputError, match=r'give a \.nc, \.csv, \.parquet or \.txt file'):
        export_tracks(results_file, str(tmp_path / 'out.json'), fps=FPS)
    with pytest.raises(FileNotFoundError, match='no results for c'):
        export_tracks(str(folder), str(tmp_path / 'c.csv'), fps=FPS, videos=['c'])
    assert sorted(os.listdir(tmp_path)) == ['empty.txt', 'many', 'results']  # no partial or temporary file left


def test_tool_main(tmp_path):
    folder = tmp_path / 'results'
    write(folder / 'fly_pair.txt', mot_text())
    write(folder / '007.txt', mot_text(ROWS[:3]))  # a name that looks like a number stays a string
    out = str(tmp_path / 'per_video')
    records = tool('tools/analysis/export_tracks.py', folder, '--to', out, '--format', 'nc', '--fps', FPS)
    assert [(r['video'], r['boxes'], r['identities']) for r in records] == [('007', 3, 2), ('fly_pair', 11, 2)]
    assert sorted(os.listdir(out)) == ['007.nc', 'fly_pair.nc']
    assert mot_of(movement_to_results(load_movement(osp.join(out, 'fly_pair.nc')))) == mot_text()
    combined = str(tmp_path / 'all.csv')
    tool('tools/analysis/export_tracks.py', folder, '--to', combined, '--fps', FPS)
    table = read_table(combined)
    assert table['video'].tolist() == ['007'] * 3 + ['fly_pair'] * len(ROWS)
    assert table['speed_px_s'].isna().sum() == 4  # each video's two identities start once


ANIMALTRACK_SIM = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')


@pytest.mark.skipif(not osp.isdir(ANIMALTRACK_SIM),
                    reason=f'real data not found at {ANIMALTRACK_SIM} (../shared/data beside the clone)')
def test_real_bytetrack_results(tmp_path):
    """The official ByteTrack's output on one AnimalTrack video (10 FPS, its seqinfo.ini) to netCDF and back."""
    results = osp.join(ANIMALTRACK_SIM, 'trackers', 'ByteTrack', 'goose_4.txt')
    out = str(tmp_path / 'goose_4.nc')
    [record] = export_tracks(results, out, data_root=osp.join(ANIMALTRACK_SIM, 'gt'))
    original = read_results(results)
    assert record.fps == 10 and record.boxes == len(original) > 200
    ds = load_movement(out)
    assert ds.sizes['individuals'] == len(np.unique(original.ids))
    restored = movement_to_results(ds)
    order = np.lexsort((original.ids, original.frames))
    np.testing.assert_array_equal(restored.frames, original.frames[order])
    np.testing.assert_array_equal(restored.ids, original.ids[order])
    np.testing.assert_array_equal(restored.scores, original.scores[order])
    assert np.abs(restored.boxes - original.boxes[order]).max() < 1e-9
    assert mot_of(restored, 2) == mot_of(original, 2)  # the file's own precision (2 decimals)
    table = results_to_table(original, record.fps, 'goose_4')
    assert table['speed_px_s'].isna().sum() == ds.sizes['individuals'] and (table['speed_px_s'].dropna() >= 0).all()
