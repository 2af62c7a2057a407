"""Box conversions between the forms VastMAT uses (numpy, ``(k, 4)`` arrays, float operations as the original
trackers do them):

* ``ltwh``: left, top, width, height (gt.txt, det.txt, results);
* ``xyxy``: x1, y1, x2, y2 (matchers, trackers, mmdet);
* ``xyah``: centre x, centre y, aspect w / h, height (the DeepSORT/ByteTrack Kalman state).

mmdet's ``mmdet.structures.bbox`` has tensor versions (``bbox_xyxy_to_cxcyah``); these work on the numpy arrays
the readers and trackers hold, without a torch round trip.
"""
from __future__ import annotations

import numpy as np


def ltwh_to_xyxy(boxes: np.ndarray) -> np.ndarray:
    """(k, 4) left, top, width, height -> x1, y1, x2, y2."""
    return np.column_stack([boxes[:, :2], boxes[:, :2] + boxes[:, 2:]])


def xyxy_to_ltwh(boxes: np.ndarray) -> np.ndarray:
    """(k, 4) x1, y1, x2, y2 -> left, top, width, height."""
    return np.column_stack([boxes[:, :2], boxes[:, 2:] - boxes[:, :2]])


def xyxy_to_xyah(boxes: np.ndarray) -> np.ndarray:
    """(k, 4) x1 y1 x2 y2 -> centre x, centre y, aspect w / h, height."""
    w = boxes[:, 2] - boxes[:, 0]
    h = boxes[:, 3] - boxes[:, 1]
    return np.stack([boxes[:, 0] + w / 2, boxes[:, 1] + h / 2, w / h, h], axis=1)


def ltwh_to_xyah(ltwh: np.ndarray) -> np.ndarray:
    """(k, 4) left top width height -> xyah (ByteTrack's ``STrack.tlwh_to_xyah``)."""
    out = np.empty((len(ltwh), 4), np.result_type(ltwh, 0.5))
    np.add(ltwh[:, 0], ltwh[:, 2] / 2, out=out[:, 0])
    np.add(ltwh[:, 1], ltwh[:, 3] / 2, out=out[:, 1])
    np.divide(ltwh[:, 2], ltwh[:, 3], out=out[:, 2])
    out[:, 3] = ltwh[:, 3]
    return out


def xyah_to_xyxy(xyah: np.ndarray) -> np.ndarray:
    """(k, 4+) the box of a state's first four values (ByteTrack's ``STrack.tlbr``)."""
    # written into one output array (np.stack's fixed cost is most of the call on the tens of boxes of a frame)
    w = xyah[:, 2] * xyah[:, 3]
    out = np.empty((len(xyah), 4), np.result_type(w, 0.5))
    np.subtract(xyah[:, 0], w / 2, out=out[:, 0])
    np.subtract(xyah[:, 1], xyah[:, 3] / 2, out=out[:, 1])
    np.add(out[:, 0], w, out=out[:, 2])
    np.add(out[:, 1], xyah[:, 3], out=out[:, 3])
    return out


def xyxy_to_cxcywh(boxes: np.ndarray) -> np.ndarray:
    """(k, 4) x1 y1 x2 y2 -> centre x, centre y, width, height (TrackTrack's ``cxcywh`` of a detection)."""
    return np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2,
                     boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]], axis=1)


def cxcywh_to_xyxy(boxes: np.ndarray) -> np.ndarray:
    """(k, 4+) centre x, centre y, width, height (a state's first four values) -> x1 y1 x2 y2."""
    return np.stack([boxes[:, 0] - boxes[:, 2] / 2, boxes[:, 1] - boxes[:, 3] / 2,
                     boxes[:, 0] + boxes[:, 2] / 2, boxes[:, 1] + boxes[:, 3] / 2], axis=1)


def paired_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of each row of ``a`` with the same row of ``b`` (``(k, 4)`` x1 y1 x2 y2, no +1 pixel); ``(k,)``."""
    iw = np.clip(np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0]), 0, None)
    ih = np.clip(np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1]), 0, None)
    inter = iw * ih
    union = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter
    return inter / np.maximum(union, 1e-12)
