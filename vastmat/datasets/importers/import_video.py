"""One call from a label file to a VastMAT root: the format chosen by name or suffix, its reader, the layout writer."""
from __future__ import annotations

import importlib
import os.path as osp
from typing import Any, Callable

from vastmat.utils.errors import UserInputError

from ..categories import builtin_categories
from ..frames import read_frames
from .labelled_boxes import LabelledBoxes, describe_skipped
from .layout import FrameRange, write_labelled_video

#: format -> (reader module, reader function, keypoint labels (boxes around points: a margin applies), suffixes)
FORMATS: dict[str, tuple[str, str, bool, tuple[str, ...]]] = {
    'sleap': ('sleap', 'read_sleap', True, ('.slp', )),
    'dlc': ('deeplabcut', 'read_deeplabcut', True, ('.h5', )),
    'cvat': ('cvat', 'read_cvat_video', False, ('.xml', )),
    'mot': ('cvat', 'read_cvat_mot', False, ('.txt', '.zip')),
    'coco': ('coco', 'read_coco', False, ('.json', )),
}
#: pixels a keypoint box grows by on each side unless told (keypoints sit inside the animal's outline)
KEYPOINT_MARGIN = 4.0


def detect_format(path: str) -> str:
    """The format of a label file from its suffix."""
    suffix = osp.splitext(path)[1].lower()
    for name, (_, _, _, suffixes) in FORMATS.items():
        if suffix in suffixes:
            return name
    known = ', '.join(f'{s} ({n})' for n, (_, _, _, ss) in FORMATS.items() for s in ss)
    raise UserInputError(f'{path}: cannot tell the label format from the suffix {suffix or "(none)"}; known: {known}; '
                         'or give --format')


def reader(fmt: str) -> Callable[..., LabelledBoxes]:
    """The reader function of ``fmt`` (imported when asked for: each needs its format's library)."""
    if fmt not in FORMATS:
        raise UserInputError(f'label format {fmt!r}: choose one of {", ".join(FORMATS)}')
    module, function, _, _ = FORMATS[fmt]
    return getattr(importlib.import_module(f'{__package__}.{module}'), function)


def category_id(text: str | int) -> int:
    """A VastMAT category given by id (``312``) or name (``Fly``), checked against the built-in table; -1 is
    unknown."""
    categories = builtin_categories()
    text = str(text).strip()
    if text == '-1':
        return -1  # unknown, as gt.txt writes it
    return categories.by_id(int(text)).id if text.lstrip('-').isdigit() else categories.by_name(text).id


def import_labels(labels: str, out_root: str, video: str | None = None, fmt: str | None = None,
                  name: str | None = None, train: FrameRange | None = None, test: FrameRange | None = None,
                  category: int = -1, margin: float | None = None, instances: str = 'all', tracks: bool = True,
                  fps: float | None = None, overwrite: bool = False, progress: bool = True) -> dict[str, Any]:
    """Read ``labels`` (``fmt`` or its suffix's format) and write the VastMAT root ``out_root`` with the frames of
    ``video`` (default: the video the labels name); returns the import report (``out_root/import.json``).
    ``instances`` applies to SLEAP files only; ``fps`` is the frame rate where the video states none (a frame folder
    without a seqinfo.ini), and must then be given."""
    fmt = fmt or detect_format(labels)
    read = reader(fmt)
    options: dict[str, Any] = dict(video=video, tracks=tracks)
    if fmt == 'sleap':
        options['instances'] = instances
    boxes = read(labels, **options)
    source = video or boxes.video
    if not source:
        raise UserInputError(f'{labels}: the labels name no video; give it with --video')
    if not video and not osp.exists(source):  # labels made elsewhere: the video beside them, as SLEAP looks
        beside = osp.join(osp.dirname(osp.abspath(labels)), osp.basename(source))
        if not osp.exists(beside):
            raise FileNotFoundError(f'{labels}: the video it names ({source}) is neither there nor beside the '
                                    'labels; give it with --video')
        source = beside
    keypoints = FORMATS[fmt][2]
    margin = (KEYPOINT_MARGIN if keypoints else 0.0) if margin is None else margin
    if margin < 0:
        raise UserInputError(f'--margin {margin}: give 0 or more pixels')
    asked = dict(format=fmt, train_frames=str(train) if train else None, test_frames=str(test) if test else None,
                 instances=options.get('instances'), tracks=tracks)
    frames = read_frames(source)
    if fps is not None:
        if not fps > 0:
            raise UserInputError(f'--fps {fps}: give a positive frame rate')
        frames.fps, frames.fps_known = float(fps), True
    if not frames.fps_known:
        raise UserInputError(f'{source}: states no frame rate (no seqinfo.ini beside the frames); give it with --fps')
    return write_labelled_video(boxes, frames, out_root, name=name, train=train, test=test,
                                category=category, margin=margin, overwrite=overwrite, progress=progress,
                                options=asked)


def print_import_summary(report: dict[str, Any], path: str) -> None:
    """The sequences written, as a table, and what was left out."""
    from rich.console import Console
    from rich.table import Table
    table = Table(title=f'{report["labels"]} -> {osp.dirname(path)}')
    for column in ('sequence', 'split', 'frames', 'labelled', 'boxes', 'identities', 'video frames'):
        table.add_column(column, justify='left' if column in ('sequence', 'split') else 'right')
    for name, seq in report['sequences'].items():
        spans = ', '.join(f'{a}-{b}' for a, b in seq['source_frames'])
        table.add_row(name, seq['split'], str(seq['frames']), str(seq['labelled_frames']), str(seq['boxes']),
                      str(seq['identities']), spans)
    console = Console()
    console.print(table)
    if describe_skipped(report['skipped']):
        console.print(f'left out: {describe_skipped(report["skipped"])}')
    for name, seq in report['sequences'].items():
        if seq['split'] == 'test' and seq['unlabelled_frames']:
            console.print(f'{name}: {seq["unlabelled_frames"]} frames carry no labels; scored, they count as frames '
                          'without animals')
    console.print(f'report: {path}')
