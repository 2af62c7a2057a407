"""Importers of labelled videos (SLEAP, DeepLabCut, CVAT, COCO): each reads its format with the format's own
library into :class:`LabelledBoxes`, and :func:`write_labelled_video` writes the VastMAT layout
(:func:`import_labels` does both)."""
from .import_video import FORMATS, category_id, detect_format, import_labels, print_import_summary, reader
from .labelled_boxes import LabelledBoxes, boxes_from_points
from .layout import FrameRange, parse_frame_range, write_labelled_video
from .sleap import INSTANCE_KINDS, read_sleap

__all__ = ['LabelledBoxes', 'boxes_from_points', 'FrameRange', 'parse_frame_range', 'write_labelled_video',
           'read_sleap', 'INSTANCE_KINDS', 'FORMATS', 'category_id', 'detect_format', 'import_labels',
           'print_import_summary', 'reader']
