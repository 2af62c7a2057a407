"""Write a labelled video as a VastMAT root (DESIGN.md section 3), its labelled frames split by frame range.

    <out>/videos/<name>-train/{img1/000001.jpg..., gt/gt.txt, seqinfo.ini}   the labelled frames of the train range
    <out>/videos/<name>-test/...                                             every frame of the test range
    <out>/splits/protocol1/{train,test}.txt, <out>/meta/categories.tsv, <out>/import.json

The train part keeps only the frames that carry labels (a frame without labels would teach the detector that it
holds no animal); the test part keeps every frame of its range, so that it can be tracked, and ``import.json`` says
how many of them carry no label (they count as frames without animals when scored). Frames are renumbered from 1
in each part; ``import.json`` maps them back to the video's own frame numbers. Without ranges the whole video is one
sequence ``<name>``, listed in ``test.txt``.

Everything is written into a temporary folder beside ``out`` and renamed to it at the end: a failed import leaves
nothing behind.
"""
from __future__ import annotations

import os
import os.path as osp
import re
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from vastmat.structures.bbox import ltwh_to_xyxy, xyxy_to_ltwh
from vastmat.utils.errors import UserInputError
from vastmat.utils.io import write_json_atomic, write_lines_atomic

from ..categories import BUILTIN_TABLE
from ..formats import GroundTruth, write_gt, write_seqinfo
from ..frames import FrameSource
from .labelled_boxes import LabelledBoxes

#: boxes may reach this far (pixels) past the frame's edge before they count as outside it: keypoints and drawn
#: boxes sit on the edge's pixel centres or corners
EDGE_TOLERANCE = 1.0


@dataclass(frozen=True)
class FrameRange:
    """Frames ``first..last`` of the video, 1-based and inclusive (as a person reads them off a player)."""

    first: int
    last: int

    def __str__(self) -> str:
        return f'{self.first}-{self.last}'


def parse_frame_range(text: str, option: str = 'frame range') -> FrameRange:
    """``'1-600'`` (1-based, inclusive) as a :class:`FrameRange`."""
    match = re.fullmatch(r'\s*(\d+)\s*-\s*(\d+)\s*', text or '')
    if not match:
        raise UserInputError(f'{option} {text!r}: give FIRST-LAST, 1-based and inclusive, e.g. 1-600')
    first, last = int(match.group(1)), int(match.group(2))
    if first < 1 or last < first:
        raise UserInputError(f'{option} {text!r}: needs 1 <= FIRST <= LAST')
    return FrameRange(first, last)


def _runs(numbers: np.ndarray) -> list[list[int]]:
    """Sorted integers as ``[[first, last], ...]`` runs of consecutive values."""
    if not len(numbers):
        return []
    breaks = np.flatnonzero(np.diff(numbers) != 1)
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [len(numbers) - 1]])
    return [[int(numbers[s]), int(numbers[e])] for s, e in zip(starts, ends)]


def check_boxes_in_frame(labels: LabelledBoxes, width: int, height: int) -> None:
    """Refuse a box that lies outside the ``width`` x ``height`` frame (beyond :data:`EDGE_TOLERANCE`)."""
    x1, y1, x2, y2 = ltwh_to_xyxy(labels.boxes).T
    outside = ((x1 < -EDGE_TOLERANCE) | (y1 < -EDGE_TOLERANCE) | (x2 > width + EDGE_TOLERANCE)
               | (y2 > height + EDGE_TOLERANCE))
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise UserInputError(
            f'{labels.source}: video frame {labels.frames[i] + 1} ({labels.id_names[labels.ids[i] - 1]}): box '
            f'x {x1[i]:.1f}..{x2[i]:.1f}, y {y1[i]:.1f}..{y2[i]:.1f} lies outside the {width}x{height} frame '
            f'({int(outside.sum())} such box{"es" if outside.sum() > 1 else ""}; are these the video\'s labels?)')


def grown_boxes(boxes: np.ndarray, margin: float, width: int, height: int) -> np.ndarray:
    """``boxes`` (ltwh) grown by ``margin`` pixels on every side and clipped to the frame."""
    grown = ltwh_to_xyxy(boxes) + np.array([-margin, -margin, margin, margin])
    return xyxy_to_ltwh(np.clip(grown, 0, [width, height, width, height]))


def _rate(fps: float) -> int | float:
    return int(fps) if float(fps).is_integer() else round(float(fps), 6)


@dataclass
class _Part:
    name: str
    split: str
    source_frames: np.ndarray  # 1-based frame numbers of the video, in order
    folder: str = ''


def _plan_parts(labels: LabelledBoxes, frames: FrameSource, name: str, train: FrameRange | None,
                test: FrameRange | None) -> list[_Part]:
    labelled = np.unique(labels.frames) + 1
    for option, span in (('--train-frames', train), ('--test-frames', test)):
        if span is not None and span.last > len(frames):
            raise UserInputError(f'{option} {span}: {frames.path} has {len(frames)} frames')
    if train is not None and test is not None and not (train.last < test.first or test.last < train.first):
        raise UserInputError(f'--train-frames {train} and --test-frames {test} overlap: the detector would be '
                             'tested on frames it trained on')
    if train is None and test is None:
        return [_Part(name, 'test', np.arange(1, len(frames) + 1))]
    parts = []
    if train is not None:
        inside = labelled[(labelled >= train.first) & (labelled <= train.last)]
        if not len(inside):
            raise UserInputError(f'--train-frames {train}: no labelled frame in this range of {labels.source}')
        parts.append(_Part(f'{name}-train', 'train', inside))
    if test is not None:
        inside = np.arange(test.first, test.last + 1)
        if not np.isin(inside, labelled).any():
            raise UserInputError(f'--test-frames {test}: no labelled frame in this range of {labels.source}')
        parts.append(_Part(f'{name}-test', 'test', inside))
    return parts


def _part_ground_truth(labels: LabelledBoxes, boxes: np.ndarray, part: _Part, category: int) -> GroundTruth:
    renumber = {int(f): i + 1 for i, f in enumerate(part.source_frames)}
    keep = np.isin(labels.frames + 1, part.source_frames)
    rows = np.flatnonzero(keep)
    rows = rows[np.lexsort((labels.ids[rows], labels.frames[rows]))]
    n = len(rows)
    frames = np.asarray([renumber[int(f) + 1] for f in labels.frames[rows]], dtype=np.int64)
    return GroundTruth(frames, labels.ids[rows], boxes[rows], np.ones(n, np.int64), np.full(n, category, np.int64),
                       labels.visibility[rows], np.arange(1, n + 1))


def _write_frames(frames: FrameSource, parts: list[_Part], progress: bool) -> None:
    from tqdm import tqdm
    wanted = {int(f): (part, i + 1) for part in parts for i, f in enumerate(part.source_frames)}
    last = max(wanted)
    with tqdm(total=last, desc=f'frames of {osp.basename(frames.path)}', unit='frame', disable=not progress) as bar:
        for number, image in enumerate(frames, 1):
            if number in wanted:
                part, index = wanted[number]
                path = osp.join(part.folder, 'img1', f'{index:06d}.jpg')
                if not cv2.imwrite(path, image):
                    raise OSError(f'{path}: OpenCV could not write this frame')
            bar.update(1)
            if number == last:
                break


def write_labelled_video(labels: LabelledBoxes, frames: FrameSource, out_root: str, name: str | None = None,
                         train: FrameRange | None = None, test: FrameRange | None = None, category: int = -1,
                         margin: float = 0.0, overwrite: bool = False, progress: bool = True,
                         options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``labels`` and the frames of ``frames`` as the VastMAT root ``out_root`` (see the module docstring);
    returns the import report (also saved as ``out_root/import.json``).

    Boxes grow by ``margin`` pixels on each side (clipped to the frame); ``category`` is the gt.txt category of
    every box (1..337, -1 unknown). ``options`` (what the user asked for) goes into the report as given.
    """
    name = name or frames.name
    if not re.fullmatch(r'[A-Za-z0-9][A-Za-z0-9_.+-]*', name):
        raise UserInputError(f'video name {name!r}: use letters, digits and _ . + - (it names folders)')
    out_root = osp.abspath(out_root)
    if osp.exists(out_root) and not overwrite:
        raise UserInputError(f'{out_root} exists; choose another folder or pass --overwrite')
    if labels.frames.max() >= len(frames):
        raise UserInputError(f'{labels.source}: labels video frame {labels.frames.max() + 1}, but {frames.path} has '
                             f'{len(frames)} frames (are these the video\'s labels?)')
    check_boxes_in_frame(labels, frames.width, frames.height)
    boxes = grown_boxes(labels.boxes, margin, frames.width, frames.height)
    parts = _plan_parts(labels, frames, name, train, test)

    parent = osp.dirname(out_root)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f'.{osp.basename(out_root)}.partial-', dir=parent)
    try:
        report = _write_root(labels, frames, staging, parts, boxes, category, margin, progress, options or {})
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    # --overwrite: the old root is moved aside once the new one is complete, and removed once the new one is in place
    old = None
    if osp.exists(out_root):
        old = tempfile.mkdtemp(prefix=f'.{osp.basename(out_root)}.old-', dir=parent)
        os.replace(out_root, osp.join(old, 'root'))
    try:
        os.replace(staging, out_root)
    except BaseException:
        if old is not None:
            os.replace(osp.join(old, 'root'), out_root)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return report


def _write_root(labels: LabelledBoxes, frames: FrameSource, root: str, parts: list[_Part], boxes: np.ndarray,
                category: int, margin: float, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    used = np.isin(labels.frames + 1, np.concatenate([part.source_frames for part in parts]))
    skipped = dict(labels.skipped)
    if not used.all():
        skipped['boxes outside the train and test frames'] = int((~used).sum())
    report: dict[str, Any] = dict(
        labels=osp.abspath(labels.source), video=osp.abspath(frames.path), frame_rate=frames.fps,
        width=frames.width, height=frames.height, video_frames=len(frames), margin=margin, category=category,
        identities={str(k + 1): n for k, n in enumerate(labels.id_names) if k + 1 in set(labels.ids.tolist())},
        skipped=skipped, options=options, sequences={})
    for part in parts:
        part.folder = osp.join(root, 'videos', part.name)
        os.makedirs(osp.join(part.folder, 'img1'))
        gt = _part_ground_truth(labels, boxes, part, category)
        write_gt(osp.join(part.folder, 'gt', 'gt.txt'), gt, decimals=2)
        write_seqinfo(osp.join(part.folder, 'seqinfo.ini'), dict(
            name=part.name, imDir='img1', frameRate=_rate(frames.fps), seqLength=len(part.source_frames),
            imWidth=frames.width, imHeight=frames.height, imExt='.jpg'))
        report['sequences'][part.name] = dict(
            split=part.split, frames=len(part.source_frames), source_frames=_runs(part.source_frames),
            labelled_frames=int(len(np.unique(gt.frames))), boxes=len(gt),
            unlabelled_frames=int(len(part.source_frames) - len(np.unique(gt.frames))),
            identities=int(len(np.unique(gt.ids))))
    _write_frames(frames, parts, progress)
    for split in ('train', 'test'):
        write_lines_atomic([p.name for p in parts if p.split == split],
                           osp.join(root, 'splits', 'protocol1', f'{split}.txt'))
    os.makedirs(osp.join(root, 'meta'))
    shutil.copyfile(BUILTIN_TABLE, osp.join(root, 'meta', 'categories.tsv'))
    write_json_atomic(report, osp.join(root, 'import.json'))
    return report
