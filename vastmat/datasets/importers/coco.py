"""COCO instances JSON and COCO-video JSON (MMTracking's CocoVID, TAO) read through ``pycocotools``.

pycocotools' ``COCO`` rather than datumaro's ``coco_instances`` importer: datumaro keeps only an annotation's
``attributes`` and drops the fields that carry a video's frames and identities (images' ``video_id`` / ``frame_id``,
annotations' ``instance_id``); ``COCO`` keeps the file's every field and indexes annotations by image.

Frames: COCO-video images carry their 0-based frame index (``frame_id``, MMTracking's CocoVID convention; TAO's
``frame_index``). Plain COCO images carry none: the frame is the last number in the image's file name, read as a
0-based video frame (CVAT's ``frame_000012.jpg``, DeepLabCut's ``img0012.png``). Identities: ``instance_id``
(CocoVID), ``track_id`` (TAO) or ``attributes.track_id`` (CVAT's COCO export); plain COCO without them has none.
"""
from __future__ import annotations

import contextlib
import io
import os.path as osp
from typing import Any

import numpy as np

from vastmat.utils.errors import UserInputError

from ..frames import frame_number
from .labelled_boxes import LabelledBoxes, check_video, identities, same_video


def _load(path: str) -> dict[str, Any]:
    from pycocotools.coco import COCO
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # COCO() prints its progress
            data = COCO(path).dataset
    except Exception as exc:  # json errors; an AssertionError for a file that is not a JSON object
        raise UserInputError(f'{path}: not a COCO annotation file ({type(exc).__name__}: {exc})') from None
    missing = [key for key in ('images', 'annotations') if not isinstance(data.get(key), list)]
    if missing:
        raise UserInputError(f'{path}: not a COCO instances file (no {" or ".join(missing)} list)')
    return data


def _pick_video(path: str, data: dict[str, Any], video: str | None) -> tuple[Any, str]:
    """The COCO-video video that ``video`` names (by file name or stem), or the file's only one."""
    used = list(dict.fromkeys(image['video_id'] for image in data['images'] if 'video_id' in image))
    names = {v.get('id'): str(v.get('name', v.get('file_name', v.get('id')))) for v in data.get('videos') or []}
    named = [(vid, names.get(vid, str(vid))) for vid in used]
    if len(named) == 1:
        return named[0][0], check_video(path, named[0][1], video)
    listed = ', '.join(name for _, name in named)
    if not video:
        raise UserInputError(f'{path}: labels {len(named)} videos ({listed}); choose one with --video')
    matches = [(vid, name) for vid, name in named if same_video(name, video)]
    if len(matches) != 1:
        raise UserInputError(f'{path}: {"several" if matches else "none"} of its {len(named)} videos ({listed}) '
                             f'match{"" if matches else "es"} {osp.basename(osp.normpath(video))}')
    return matches[0][0], video


def _frame_of(path: str, image: dict[str, Any], video_form: bool) -> int:
    if video_form:
        for key in ('frame_id', 'frame_index'):
            if isinstance(image.get(key), int):
                return image[key]
        raise UserInputError(f'{path}: image {image.get("id")} of video {image.get("video_id")} has no frame_id')
    name = str(image.get('file_name', ''))
    number = frame_number(name)
    if number is None:
        raise UserInputError(f'{path}: image {name!r} has no frame number in its file name (plain COCO images are '
                             'numbered by name: frame_000012.jpg is frame 12)')
    return number


def _track_of(ann: dict[str, Any]) -> Any:
    for value in (ann.get('instance_id'), ann.get('track_id'), (ann.get('attributes') or {}).get('track_id')):
        if value is not None:
            return value
    return None


def _visibility(ann: dict[str, Any]) -> float:
    """CocoVID's ``visibility`` (MMTracking's MOT conversion), else CVAT's ``occluded`` as its MOT export writes it
    (``1 - occluded``), else unknown."""
    seen = ann.get('visibility')
    if isinstance(seen, (int, float)) and 0.0 <= seen <= 1.0:
        return float(seen)
    occluded = (ann.get('attributes') or {}).get('occluded')
    return (0.0 if occluded else 1.0) if isinstance(occluded, bool) else -1.0


def read_coco(path: str, video: str | None = None, tracks: bool = True) -> LabelledBoxes:
    """The boxes of a COCO instances or COCO-video ``.json`` file (see the module docstring for frames and ids).

    Args:
        path: the ``.json`` file.
        video: the video (or frame folder) the labels belong to; chooses among a COCO-video file's videos (by file
            name or stem) and is refused when the file's only video has another name.
        tracks: True: the annotations' track ids are the identities (a file without them is refused); False:
            every box its own identity.
    """
    if not osp.isfile(path):
        raise FileNotFoundError(f'{path}: no such COCO file')
    data = _load(path)
    video_form = any('video_id' in image for image in data['images'])
    named = video or ''
    chosen = None
    if video_form:
        chosen, named = _pick_video(path, data, video)
    images = {image['id']: image for image in data['images']
              if 'id' in image and (not video_form or image.get('video_id') == chosen)}
    frame_of = {image_id: _frame_of(path, image, video_form) for image_id, image in images.items()}
    if not video_form:
        first: dict[int, Any] = {}
        for image_id, frame in frame_of.items():
            if first.setdefault(frame, image_id) != image_id:
                raise UserInputError(f'{path}: images {images[first[frame]].get("file_name")!r} and '
                                     f'{images[image_id].get("file_name")!r} are both frame {frame} (several videos '
                                     'in one file? use a COCO-video file)')
    frames, boxes, visibility, track_ids = [], [], [], []
    skipped = {'crowd regions (iscrowd 1)': 0, 'annotations without a box': 0}
    all_images = {image.get('id') for image in data['images']}
    for ann in data['annotations']:
        if ann.get('image_id') not in images:
            if ann.get('image_id') not in all_images:  # (another video's are not this video's labels)
                skipped['annotations of no image in the file'] = skipped.get('annotations of no image in the file',
                                                                             0) + 1
            continue
        if ann.get('iscrowd', 0):
            skipped['crowd regions (iscrowd 1)'] += 1
        elif not (isinstance(ann.get('bbox'), list) and len(ann['bbox']) == 4):
            skipped['annotations without a box'] += 1
        else:
            frames.append(frame_of[ann['image_id']])
            boxes.append([float(v) for v in ann['bbox']])
            visibility.append(_visibility(ann))
            track_ids.append(_track_of(ann))
    if tracks and frames and all(t is None for t in track_ids):
        raise UserInputError(f'{path}: has no tracks (no instance_id or track_id); pass --no-tracks to import boxes '
                             'only')
    ids, names = identities(path, frames, track_ids, tracks)
    return LabelledBoxes(path, named, np.asarray(frames, dtype=np.int64), ids, boxes, visibility, names, skipped)
