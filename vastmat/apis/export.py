"""Exporting tracking results (MOT results files, ``frame, id, left, top, width, height, score, -1, -1, -1``).

Three targets, chosen by the output's suffix:

* ``.nc``: a ``movement`` bounding-box dataset (``movement.io.load_bboxes.from_numpy``) saved as netCDF. Dimensions
  ``time, space (x, y), individuals``; ``position`` is the box centre, ``shape`` its width and height,
  ``confidence`` the score; NaN where an identity has no box (movement's convention). Individuals are named
  ``id_<id>`` (the MOT identity, as movement's VIA-tracks reader and writer name them). ``time`` runs over every
  frame from the first to the last frame with a box, in seconds: ``time = (frame - 1) / fps`` (MOT frame 1 is
  time 0, the same clock as the table's ``time_s``); the MOT frame number itself (1-based, int64) is kept exactly
  in the extra coordinate ``frame`` along ``time``, so the MOT rows come back unchanged. Attributes: movement's
  (``ds_type``, ``fps``, ``time_unit``, ``source_software = 'vastmat'``) plus ``video``. Read it back with
  :func:`load_movement` (xarray's ``load_dataset`` plus movement's own dataset validator, as movement's napari
  loader reads a netCDF file). The arrays are dense (frames x identities).
* ``.csv`` / ``.parquet``: a tidy table, one row per box, sorted by video, frame and id, with the columns
  :data:`TABLE_COLUMNS`: ``time_s = (frame - 1) / fps``; ``centre_x = left + width / 2``,
  ``centre_y = top + height / 2`` (pixels); ``speed_px_s`` = the distance between this box's centre and the centre
  of the same identity's previous box, divided by the time between the two frames ((frame - previous frame) / fps),
  in pixels per second: NaN at an identity's first box; across a gap it is the mean speed over the gap. (movement's
  ``kinematics.compute_speed`` on the netCDF dataset differs: central differences, NaN next to a gap.)
* ``.txt``: the MOT results file again, through the project's reader and writer (sorted by frame then id, boxes at
  three decimals, scores at five).

The frame rate comes from an explicit value or from the video's ``seqinfo.ini`` (``frameRate``); it is never
guessed. The MOT output needs none. An empty results file is refused (nothing to export, nothing written): an
explicit error rather than a dataset without individuals. Every input is read and converted before anything is
written, and every file is written to a temporary file and renamed.
"""
from __future__ import annotations

import math
import os
import os.path as osp
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from vastmat.apis.inference import read_track_rows, write_track_rows
from vastmat.datasets.formats import TrackResults, read_results, read_seqinfo
from vastmat.datasets.sequences import sequence_root
from vastmat.structures.bbox import cxcywh_to_xyxy, ltwh_to_xyah
from vastmat.utils.errors import UserInputError
from vastmat.utils.io import atomic_write

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr

#: Output formats, named by their file suffix (without the dot).
FORMATS = ('nc', 'csv', 'parquet', 'txt')
TABLE_FORMATS = ('csv', 'parquet')
TABLE_COLUMNS = ('video', 'frame', 'time_s', 'id', 'left', 'top', 'width', 'height', 'centre_x', 'centre_y', 'score',
                 'speed_px_s')
SOURCE_SOFTWARE = 'vastmat'
_INDIVIDUAL = re.compile(r'id_(-?[0-9]+)')


@dataclass
class ExportRecord:
    """What one export wrote."""

    video: str
    format: str
    path: str
    boxes: int
    identities: int
    frames: int  # frames with at least one box
    fps: float | None


def output_format(path: str) -> str | None:
    """The format of an output path from its suffix (``.nc``, ``.csv``, ``.parquet``, ``.txt``), or None."""
    suffix = osp.splitext(path)[1].lower().lstrip('.')
    return suffix if suffix in FORMATS else None


def video_timing(video: str, fps: float | None = None, data_root: str | None = None,
                 seqinfo: str | None = None) -> tuple[float, int | None]:
    """The frame rate of ``video`` and its seqLength (None unless read from the video's own seqinfo.ini).

    ``fps`` when given; else ``frameRate`` of ``<data_root>/[videos/]<video>/seqinfo.ini`` (a VastMAT root or a
    MOTChallenge split folder) or of the one file ``seqinfo`` (its rate only: it may serve several videos).
    Neither: :class:`UserInputError` (the rate is not guessed).
    """
    if fps is not None:
        if not (math.isfinite(fps) and fps > 0):
            raise UserInputError(f'--fps {fps}: the frame rate must be a positive number')
        return float(fps), None
    if seqinfo is None and data_root is None:
        raise UserInputError(f'{video}: no frame rate; give --fps F or --data-root ROOT (its '
                             f'<video>/seqinfo.ini frameRate), it is not guessed')
    path = seqinfo or osp.join(sequence_root(data_root), video, 'seqinfo.ini')
    info = read_seqinfo(path)
    if 'frameRate' not in info:
        raise UserInputError(f'{path}: no frameRate; give --fps F')
    return float(info['frameRate']), None if seqinfo else info['seqLength']


def _refuse_empty(path: str, boxes: int) -> None:
    if not boxes:
        raise UserInputError(f'{path}: no boxes, nothing to export (an empty results file is refused, not exported '
                             f'as an empty dataset)')


# ----------------------------------------------------------------------------------------------------------- table
def track_speeds(frames: np.ndarray, ids: np.ndarray, centres: np.ndarray, fps: float) -> np.ndarray:
    """Each box's centre speed (pixels per second) since the same identity's previous box; NaN at a first box."""
    order = np.lexsort((frames, ids))
    f, i, c = frames[order], ids[order], centres[order]
    now = np.flatnonzero(i[1:] == i[:-1]) + 1  # sorted positions that have a previous box of their identity
    speed = np.full(len(frames), np.nan)
    speed[order[now]] = np.hypot(*(c[now] - c[now - 1]).T) / ((f[now] - f[now - 1]) / fps)
    return speed


def results_to_table(results: TrackResults, fps: float, video: str) -> pd.DataFrame:
    """The tidy table (:data:`TABLE_COLUMNS`) of one video's results, sorted by frame then id."""
    import pandas as pd
    order = np.lexsort((results.ids, results.frames))
    frames, ids, boxes = results.frames[order], results.ids[order], results.boxes[order]
    centres = ltwh_to_xyah(boxes)[:, :2]
    return pd.DataFrame({
        'video': pd.Series([video] * len(frames), dtype=object), 'frame': frames, 'time_s': (frames - 1) / fps,
        'id': ids, 'left': boxes[:, 0], 'top': boxes[:, 1], 'width': boxes[:, 2], 'height': boxes[:, 3],
        'centre_x': centres[:, 0], 'centre_y': centres[:, 1], 'score': results.scores[order],
        'speed_px_s': track_speeds(frames, ids, centres, fps)})


def write_table(table: pd.DataFrame, path: str) -> None:
    """Write a table as CSV or Parquet (by the suffix), atomically. CSV floats are written in full (round-trip)."""
    fmt = output_format(path)
    if fmt == 'csv':
        with atomic_write(path) as f:
            table.to_csv(f, index=False)
    elif fmt == 'parquet':
        with atomic_write(path, 'wb') as f:
            table.to_parquet(f, index=False)
    else:
        raise UserInputError(f'{path}: a table is written as .csv or .parquet')


def read_table(path: str) -> pd.DataFrame:
    """A table written by :func:`write_table`, values exactly as written (video names stay strings)."""
    import pandas as pd
    fmt = output_format(path)
    if fmt == 'csv':
        return pd.read_csv(path, dtype={'video': str}, float_precision='round_trip')
    if fmt == 'parquet':
        return pd.read_parquet(path)
    raise UserInputError(f'{path}: a table is read from .csv or .parquet')


# -------------------------------------------------------------------------------------------------------- movement
def results_to_movement(results: TrackResults, fps: float, video: str = '') -> xr.Dataset:
    """movement's bounding-box dataset of one video's results (see the module docstring for the layout)."""
    from movement.io import load_bboxes
    first, last = int(results.frames.min()), int(results.frames.max())
    # movement squeezes the frame column, so a one-frame video would get a scalar time: build two, keep one
    pad = int(first == last)
    frames = np.arange(first, last + 1 + pad, dtype=np.int64)
    ids = np.unique(results.ids)
    t, k = results.frames - first, np.searchsorted(ids, results.ids)
    position = np.full((len(frames), 2, len(ids)), np.nan)
    shape = np.full_like(position, np.nan)
    confidence = np.full((len(frames), len(ids)), np.nan)
    position[t, :, k] = ltwh_to_xyah(results.boxes)[:, :2]
    shape[t, :, k] = results.boxes[:, 2:4]
    confidence[t, k] = results.scores
    ds = load_bboxes.from_numpy(position_array=position, shape_array=shape, confidence_array=confidence,
                                individual_names=[f'id_{i}' for i in ids], frame_array=(frames - 1)[:, None],
                                fps=fps, source_software=SOURCE_SOFTWARE)
    note = {'description': 'MOT frame number (1-based); time = (frame - 1) / fps'}
    ds = ds.assign_coords(frame=('time', frames, note))
    ds.attrs['video'] = video
    return ds.isel(time=slice(0, len(frames) - pad))


def movement_to_results(ds: xr.Dataset) -> TrackResults:
    """The MOT rows of a movement bounding-box dataset (every non-NaN position), sorted by frame then id.

    Frames come from the ``frame`` coordinate (:func:`results_to_movement` writes it), else from ``time``
    (``round(time * fps) + 1`` in seconds, ``time + 1`` in frames); ids from the names ``id_<id>``; a NaN
    confidence becomes score 1 (as a results file without scores reads).
    """
    names = [str(n) for n in ds['individuals'].values]
    matched = [_INDIVIDUAL.fullmatch(n) for n in names]
    if not all(matched):
        bad = names[[m is None for m in matched].index(True)]
        raise UserInputError(f'individual {bad!r} is not named id_<integer>, so it has no MOT id')
    ids = np.array([int(m.group(1)) for m in matched], np.int64)
    if 'frame' in ds.coords:
        frames = np.asarray(ds['frame'].values, np.int64)
    elif ds.attrs.get('time_unit') == 'seconds':
        frames = np.rint(ds['time'].values * float(ds.attrs['fps'])).astype(np.int64) + 1
    else:
        frames = np.asarray(ds['time'].values, np.int64) + 1
    position = ds['position'].transpose('time', 'space', 'individuals').sel(space=['x', 'y']).values
    shape = ds['shape'].transpose('time', 'space', 'individuals').sel(space=['x', 'y']).values
    confidence = ds['confidence'].transpose('time', 'individuals').values
    t, k = np.nonzero(~np.isnan(position).any(axis=1))
    order = np.lexsort((ids[k], frames[t]))
    t, k = t[order], k[order]
    cxcywh = np.column_stack([position[t, :, k], shape[t, :, k]]).reshape(-1, 4)
    boxes = np.column_stack([cxcywh_to_xyxy(cxcywh)[:, :2], cxcywh[:, 2:]])
    scores = np.nan_to_num(confidence[t, k], nan=1.0)
    return TrackResults(frames[t], ids[k], boxes, scores, np.arange(1, len(t) + 1))


def save_movement(ds: xr.Dataset, path: str) -> None:
    """Save a movement dataset as netCDF (netCDF4 format, through the netCDF4 library movement depends on),
    atomically."""
    data = ds.to_netcdf(engine='netcdf4')  # the file's bytes, made in memory
    with atomic_write(path, 'wb') as f:
        f.write(data)


def load_movement(path: str) -> xr.Dataset:
    """A movement bounding-box dataset from a netCDF file, checked by movement's own validator (read into memory,
    the file closed)."""
    import xarray as xr
    from movement.validators.datasets import ValidBboxesInputs
    ds = xr.load_dataset(path)
    if ds.attrs.get('ds_type') != 'bboxes':
        raise UserInputError(f'{path}: not a movement bounding-box dataset (ds_type {ds.attrs.get("ds_type")!r})')
    try:
        ValidBboxesInputs.validate(ds)
    except (TypeError, ValueError) as exc:
        raise UserInputError(f'{path}: not a valid movement bounding-box dataset: {exc}') from None
    return ds


# ---------------------------------------------------------------------------------------------------------- export
def _results_files(results: str, videos: list[str] | None) -> list[tuple[str, str]]:
    """``(video, path)`` of a results file, or of a folder's ``<video>.txt`` (``videos`` of them when given)."""
    if not osp.isdir(results):
        if not osp.isfile(results):
            raise FileNotFoundError(f'{results}: no such results file or folder')
        return [(osp.splitext(osp.basename(results))[0], results)]
    found = sorted(osp.splitext(n)[0] for n in os.listdir(results) if n.endswith('.txt'))
    names = found if videos is None else list(videos)
    missing = sorted(set(names) - set(found))
    if missing:
        raise FileNotFoundError(f'{results}: no results for {", ".join(missing)}')
    if not names:
        raise UserInputError(f'{results}: no <video>.txt results files')
    return [(n, osp.join(results, f'{n}.txt')) for n in names]


def export_tracks(results: str, out: str, fmt: str | None = None, fps: float | None = None,
                  data_root: str | None = None, seqinfo: str | None = None,
                  videos: list[str] | None = None) -> list[ExportRecord]:
    """Export a results file, or a folder of ``<video>.txt``, to ``out``.

    ``out`` is a file whose suffix names the format (several videos go to one file only as a table, with the
    ``video`` column telling them apart), or, with ``fmt`` (one of :data:`FORMATS`), a folder that receives
    ``<video>.<fmt>`` for each video. The frame rate: ``fps``, or each video's seqinfo.ini from ``data_root``
    (or the one ``seqinfo`` file); seqLength, when read, also bounds the frames. Every input is read and
    converted before the first file is written.
    """
    target = output_format(out)
    if fmt is not None and fmt not in FORMATS:
        raise UserInputError(f'--format {fmt}: expected one of {", ".join(FORMATS)}')
    if fmt is not None and target is not None and fmt != target:
        raise UserInputError(f'{out}: the suffix says {target}, --format says {fmt}')
    if target is None and fmt is None:
        raise UserInputError(f'{out}: give a .nc, .csv, .parquet or .txt file, or a folder with --format')
    single = fmt is None or target is not None
    fmt = fmt or target
    inputs = _results_files(results, videos)
    if single and len(inputs) > 1 and fmt not in TABLE_FORMATS:
        raise UserInputError(f'{out}: {len(inputs)} videos do not go into one .{fmt} file; give a folder and '
                             f'--format {fmt}')
    converted: list[tuple[str, Any, ExportRecord]] = []
    for video, path in inputs:
        needs_rate = fmt != 'txt' or fps is not None or data_root is not None or seqinfo is not None
        rate, seq_length = video_timing(video, fps, data_root, seqinfo) if needs_rate else (None, None)
        dest = out if single else osp.join(out, f'{video}.{fmt}')
        if fmt == 'txt':  # the project's reader and writer, as the trackers' results are written
            data = read_track_rows(path, seq_length)
            frames, ids = data[:, 0], data[:, 1]
            _refuse_empty(path, len(data))
        else:
            res = read_results(path, seq_length)
            _refuse_empty(path, len(res))
            frames, ids = res.frames, res.ids
            data = results_to_movement(res, rate, video) if fmt == 'nc' else results_to_table(res, rate, video)
        record = ExportRecord(video, fmt, dest, len(frames), len(np.unique(ids)), len(np.unique(frames)), rate)
        converted.append((dest, data, record))
    if single and fmt in TABLE_FORMATS:
        import pandas as pd
        write_table(pd.concat([data for _, data, _ in converted], ignore_index=True), out)
    else:
        for dest, data, _ in converted:
            if fmt == 'txt':
                write_track_rows(data, dest)
            elif fmt == 'nc':
                save_movement(data, dest)
            else:
                write_table(data, dest)
    return [record for _, _, record in converted]
