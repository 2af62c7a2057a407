"""DeepLabCut multi-animal ``.h5`` files (predictions, e.g. ``..._el.h5``, or labelled data ``CollectedData_*.h5``)
read through ``movement``: a box around each individual's visible keypoints, the individual as the identity.

``movement.io.load_poses.from_dlc_file`` is ``pandas.read_hdf(file, key='df_with_missing')`` followed by
``from_dlc_style_df``; this reader makes the same two calls itself because ``from_dlc_file`` drops the row index (in
labelled data it holds the image names, which carry the frame numbers) and accepts only the key ``df_with_missing``
(napari-deeplabcut, DLC's labelling GUI, writes ``CollectedData_*.h5`` under the key ``keypoints``).
"""
from __future__ import annotations

import os.path as osp

import numpy as np

from vastmat.utils.errors import UserInputError

from ..frames import frame_number
from .labelled_boxes import LabelledBoxes, boxes_from_points, check_video, same_video

#: DeepLabCut's own default ``pcutoff`` (``config.yaml``), also ``movement.filtering.filter_by_confidence``'s
DEFAULT_MIN_CONFIDENCE = 0.6
#: the individual under which multi-animal DLC keeps the "unique bodyparts" (landmarks of the scene, not an animal)
UNIQUE_BODYPARTS = 'single'
_KEYS = ('/df_with_missing', '/keypoints')  # DLC's predictions and DLC < 2.3 labels; napari-deeplabcut's labels


def _read_table(path: str):
    import pandas as pd
    try:
        with pd.HDFStore(path, mode='r') as store:
            keys = store.keys()
            key = next((k for k in _KEYS if k in keys), keys[0] if len(keys) == 1 else None)
            if key is None:
                held = f'its tables are {", ".join(keys)}' if keys else 'it holds no pandas table'
                raise UserInputError(f'{path}: not a DeepLabCut file ({held}; expected one of '
                                     f'{", ".join(k[1:] for k in _KEYS)})')
            table = store[key]
    except UserInputError:
        raise
    except Exception as exc:  # h5py / PyTables / pandas errors: not an HDF5 file pandas can read
        raise UserInputError(f'{path}: not a readable DeepLabCut .h5 file ({type(exc).__name__}: {exc})') from None
    levels = list(getattr(table.columns, 'names', []) or [])
    if not isinstance(table, pd.DataFrame) or not {'bodyparts', 'coords'} <= set(levels):
        raise UserInputError(f'{path}: not a DeepLabCut table (column levels {levels}; expected scorer, '
                             '[individuals,] bodyparts, coords)')
    coords = set(table.columns.get_level_values('coords'))
    if not {'x', 'y'} <= coords:
        raise UserInputError(f'{path}: no x and y coordinates (coords {sorted(coords)}); 2-D poses are needed')
    return table.loc[:, table.columns.get_level_values('coords').isin(['x', 'y', 'likelihood'])]


def _frame_numbers(path: str, index, video: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Frame indices of the rows (``index``) and the rows to keep: predictions are numbered by frame; labelled data
    by image (``labeled-data/<video stem>/img<frame>.png``, DLC's frame extraction numbering from 0)."""
    values = list(index)
    if all(isinstance(v, (int, np.integer)) for v in values):
        return np.asarray(values, dtype=np.int64), np.ones(len(values), bool)
    parts = [tuple(v) if isinstance(v, tuple) else tuple(str(v).replace('\\', '/').split('/')) for v in values]
    folders = [p[-2] if len(p) > 1 else '' for p in parts]
    names = sorted(set(folders))
    keep = np.ones(len(parts), bool)
    if len(names) > 1:
        matches = [n for n in names if video and same_video(n, video)]
        if len(matches) != 1:
            given = f', not {osp.basename(osp.normpath(video))}' if video else ''
            raise UserInputError(f'{path}: labels {len(names)} videos ({", ".join(names)}); choose one with --video '
                                 f'(matched by file stem){given}')
        keep = np.asarray([f == matches[0] for f in folders])
    elif names[0]:
        check_video(path, names[0], video)
    frames = []
    for p in parts:
        number = frame_number(str(p[-1]))
        if number is None:
            raise UserInputError(f'{path}: row {"/".join(map(str, p))!r} names no frame number (DLC names '
                                 'extracted frames img<frame>.png)')
        frames.append(number)
    return np.asarray(frames, dtype=np.int64), keep


def read_deeplabcut(path: str, video: str | None = None, tracks: bool = True,
                    min_confidence: float | None = DEFAULT_MIN_CONFIDENCE) -> LabelledBoxes:
    """The boxes of a DeepLabCut ``.h5`` file (predictions or labelled data).

    Args:
        path: the ``.h5`` file (one video: DLC files name none; labelled data name their video folder, checked
            against ``video``'s stem and used to choose when the file holds several).
        video: the video (or frame folder) the labels belong to; returned as ``LabelledBoxes.video`` ('' if None).
        tracks: True: each DLC individual is an identity (named as in the file); False: every instance is an
            identity of its own.
        min_confidence: keypoints whose likelihood is below it are left out (DLC's default ``pcutoff`` 0.6, as
            ``movement.filtering.filter_by_confidence``); None keeps all. Labelled data carry no likelihood.
    """
    from movement.filtering import filter_by_confidence
    from movement.io.load_poses import from_dlc_style_df
    if min_confidence is not None and not 0.0 <= min_confidence <= 1.0:
        raise UserInputError(f'min_confidence {min_confidence}: give a likelihood in [0, 1] (or None)')
    if not osp.isfile(path):
        raise FileNotFoundError(f'{path}: no such DeepLabCut file')
    table = _read_table(path)
    skipped: dict[str, int] = {}
    if 'individuals' in table.columns.names:
        unique = table.columns.get_level_values('individuals') == UNIQUE_BODYPARTS
        if unique.any():
            xy = table.loc[:, unique & table.columns.get_level_values('coords').isin(['x', 'y'])]
            skipped[f'frames of DLC unique bodyparts (individual {UNIQUE_BODYPARTS!r}, not an animal)'] = int(
                xy.notna().any(axis=1).sum())
            table = table.loc[:, ~unique]
    frames, rows = _frame_numbers(path, table.index, video)
    table = table[rows]
    frames = frames[rows]
    if not len(table) or not table.shape[1]:
        raise UserInputError(f'{path}: the file holds no keypoints')
    level = [n for n in ('individuals', 'bodyparts', 'coords') if n in table.columns.names]
    if table.shape[1] != np.prod([len(set(table.columns.get_level_values(n))) for n in level]):
        raise UserInputError(f'{path}: the individuals have different bodyparts (movement reads only files where '
                             'all share them)')
    try:
        poses = from_dlc_style_df(table.astype(float), source_software='DeepLabCut')
    except Exception as exc:  # movement validates names and shapes
        raise UserInputError(f'{path}: not readable as DeepLabCut poses ({type(exc).__name__}: {exc})') from None
    position = poses.position
    has_likelihood = 'likelihood' in set(table.columns.get_level_values('coords'))
    filtered = position
    if has_likelihood and min_confidence is not None:
        filtered = filter_by_confidence(position, poses.confidence, threshold=min_confidence)
    order = ('time', 'individuals', 'keypoints', 'space')
    before = position.transpose(*order).values  # (frames, individuals, keypoints, 2)
    after = filtered.transpose(*order).values
    n_frames, n_individuals = before.shape[:2]
    present = np.isfinite(before).all(axis=3).any(axis=2).reshape(-1)  # any keypoint: an instance
    _, _, usable_before = boxes_from_points(before.reshape(n_frames * n_individuals, -1, 2))
    boxes, visibility, usable = boxes_from_points(after.reshape(n_frames * n_individuals, -1, 2))
    skipped['instances with fewer than two visible keypoints'] = int((present & ~usable_before).sum())
    if has_likelihood and min_confidence is not None:
        skipped[f'instances with fewer than two keypoints of likelihood >= {min_confidence:g}'] = int(
            (usable_before & ~usable).sum())
    keep = np.flatnonzero(usable)
    frame_of = np.repeat(frames, n_individuals)[keep]
    individual = np.tile(np.arange(n_individuals), n_frames)[keep]
    if tracks:
        used = np.unique(individual)
        number = np.zeros(n_individuals, np.int64)
        number[used] = np.arange(1, len(used) + 1)
        ids = number[individual]
        names = [str(poses.individuals.values[i]) for i in used]
    else:
        ids = np.arange(1, len(keep) + 1)
        names = [f'instance {k}' for k in ids]
    return LabelledBoxes(path, video or '', frame_of, ids, boxes[keep], visibility[keep], names, skipped)
