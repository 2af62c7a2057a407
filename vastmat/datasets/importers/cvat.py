"""CVAT exports read through ``datumaro`` (the library CVAT itself exports and imports with): "CVAT for video 1.1"
XML (tracks of boxes) and "MOT 1.1" (a zip or folder with ``gt/gt.txt`` and ``gt/labels.txt``).

Conventions, as CVAT writes them: in the XML a box's ``frame`` is the video's 0-based frame number (CVAT adds the
task's start frame and step), shapes with ``outside="1"`` mark where a track ends and are no boxes, and interpolated
boxes are written out for every frame. CVAT's MOT export numbers frames ``1 + `` the task's frame index and writes
visibility ``1 - occluded``; the XML reader gives occluded boxes the same visibility 0, so that both exports of a
task import alike.
"""
from __future__ import annotations

import os
import os.path as osp
import tempfile
import zipfile

import numpy as np

from vastmat.utils.errors import UserInputError

from .labelled_boxes import LabelledBoxes, check_video, identities


def _describe(exc: BaseException) -> str:
    """An exception and its cause (datumaro wraps the reader's error in a generic 'Failed to import')."""
    cause = exc.__cause__ or exc.__context__
    text = f'{type(exc).__name__}: {exc}'
    return text + (f'; {type(cause).__name__}: {cause}' if cause is not None and str(cause) not in text else '')


def _read_meta(path: str):
    """The ``<meta>`` element of a CVAT XML file (read with the XML parser datumaro uses)."""
    from defusedxml import ElementTree
    try:
        for _, element in ElementTree.iterparse(path, events=('end', )):
            if element.tag == 'meta':
                return element
    except Exception as exc:  # ParseError, or defusedxml refusing entities
        raise UserInputError(f'{path}: not a CVAT XML file ({type(exc).__name__}: {exc})') from None
    raise UserInputError(f'{path}: not a CVAT XML file (no <meta> element; export "CVAT for video 1.1")')


def read_cvat_video(path: str, video: str | None = None, tracks: bool = True) -> LabelledBoxes:
    """The boxes of a CVAT "CVAT for video 1.1" XML export (a task's or a job's).

    Args:
        path: the ``.xml`` file.
        video: the video (or frame folder) the labels belong to; refused when the file (``<meta>...<source>``)
            names another (compared by file name or stem).
        tracks: True: each CVAT track is an identity (named by its track id); False: every box its own.
    """
    import datumaro as dm
    from datumaro.components.annotation import AnnotationType
    from datumaro.plugins.data_formats.cvat.base import CvatBase
    if not osp.isfile(path):
        raise FileNotFoundError(f'{path}: no such CVAT XML file')
    meta = _read_meta(path)
    if meta.find('project') is not None:
        raise UserInputError(f'{path}: a CVAT project export (several tasks); export the video\'s task or job')
    source = next((e.text.strip() for e in meta.iter('source') if e.text and e.text.strip()), '')
    named = check_video(path, source, video)
    try:
        if meta.find('task') is not None:
            dataset = dm.Dataset.import_from(path, 'cvat')
        else:  # a job's export (<meta><job>): datumaro's importer looks for <task> only; its reader reads jobs too
            dataset = dm.Dataset.from_extractors(CvatBase(path))
    except Exception as exc:  # datumaro's DatasetImportError, or a missing attribute in a hand-edited file
        raise UserInputError(f'{path}: not a readable CVAT XML file ({_describe(exc)})') from None
    box_types = (AnnotationType.bbox, AnnotationType.rotated_bbox)
    frames, boxes, visibility, track_ids = [], [], [], []
    skipped = {'outside shapes (track ended)': 0, 'annotations other than boxes': 0}
    for item in sorted(dataset, key=lambda item: int(item.attributes['frame'])):  # datumaro: by first mention
        frame = int(item.attributes['frame'])
        for ann in item.annotations:
            if ann.type not in box_types:
                skipped['annotations other than boxes'] += 1
            elif ann.attributes.get('outside', False):
                skipped['outside shapes (track ended)'] += 1
            else:  # a rotated box becomes its axis-aligned hull
                frames.append(frame)
                boxes.append(ann.get_bbox())
                visibility.append(0.0 if ann.attributes.get('occluded', False) else 1.0)
                track_ids.append(ann.attributes.get('track_id'))
    ids, names = identities(path, frames, track_ids, tracks)
    return LabelledBoxes(path, named, frames, ids, boxes, visibility, names, skipped)


def _find_gt(path: str, root: str) -> str:
    """``gt/gt.txt`` of the one MOT sequence under ``root`` (CVAT's zip holds it at its top)."""
    found = sorted(osp.join(d, 'gt.txt') for d, _, files in os.walk(root)
                   if osp.basename(d) == 'gt' and 'gt.txt' in files)
    if len(found) != 1:
        raise UserInputError(f'{path}: {"several" if found else "no"} gt/gt.txt inside; give the MOT 1.1 export of '
                             'one video (CVAT: Export task dataset, MOT 1.1)')
    return found[0]


def read_cvat_mot(path: str, video: str | None = None, tracks: bool = True) -> LabelledBoxes:
    """The boxes of a CVAT "MOT 1.1" export: its zip, the unpacked folder, or its ``gt/gt.txt``.

    MOT files name no video and no frame offset: frame ``f`` is video frame ``f - 1`` (a task made from the whole
    video). Boxes whose "not ignored" flag is 0 are left out (counted); visibility outside [0, 1] becomes -1.

    Args:
        path: the zip, folder or ``gt.txt``.
        video: the video (or frame folder) the labels belong to, returned as ``video`` ('' if None).
        tracks: True: each MOT track id is an identity; False: every box its own.
    """
    import datumaro as dm
    if not osp.exists(path):
        raise FileNotFoundError(f'{path}: no such MOT export')
    with tempfile.TemporaryDirectory(prefix='vastmat-mot-') as unpacked:
        if osp.isfile(path) and zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                archive.extractall(unpacked)  # zipfile drops absolute and '..' parts of member names
            gt = _find_gt(path, unpacked)
        else:
            gt = _find_gt(path, path) if osp.isdir(path) else path
        try:
            dataset = dm.Dataset.import_from(gt, 'mot_seq')
            rows = [(int(item.id), ann) for item in dataset for ann in item.annotations]
        except Exception as exc:  # datumaro asserts on class ids past labels.txt, float() on bad numbers, ...
            raise UserInputError(f'{path}: not a readable MOT gt.txt ({_describe(exc)})') from None
    frames, boxes, visibility, track_ids = [], [], [], []
    skipped = {'boxes marked ignored (MOT "not ignored" flag 0)': 0}
    for frame, ann in sorted(rows, key=lambda row: row[0]):
        if ann.attributes.get('ignored', False):
            skipped['boxes marked ignored (MOT "not ignored" flag 0)'] += 1
            continue
        if frame < 1:
            raise UserInputError(f'{path}: frame {frame}: MOT frames start at 1')
        seen = float(ann.attributes.get('visibility', -1))
        frames.append(frame - 1)
        boxes.append(ann.get_bbox())
        visibility.append(seen if 0.0 <= seen <= 1.0 else -1.0)
        track_ids.append(ann.attributes.get('track_id'))  # datumaro keeps ids > 0 only
    ids, names = identities(path, frames, track_ids, tracks)
    return LabelledBoxes(path, video or '', frames, ids, boxes, visibility, names, skipped)
