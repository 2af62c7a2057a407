"""Box conversions between the forms VastMAT uses (numpy ``(k, 4)`` float64 arrays, float operations as the original
trackers do them):

* ``ltwh``: left, top, width, height (gt.txt, det.txt, results);
* ``xyxy``: x1, y1, x2, y2 (matchers, trackers, mmdet);
* ``xyah``: centre x, centre y, aspect w / h, height (the DeepSORT/ByteTrack Kalman state);
* ``cxcywh``: centre x, centre y, width, height (TrackTrack's Kalman state).

mmdet's ``mmdet.structures.bbox`` has tensor versions (``bbox_xyxy_to_cxcyah``); these work on the numpy arrays
the readers and trackers hold, without a torch round trip. Each is one compiled (numba) loop: a tracker converts
the tens of boxes of a frame several times per frame, where a numpy version's 4-8 operations cost ~5 us in call
overhead and the loop ~1 us. Inputs are taken as float64 (the readers' and trackers' dtype), outputs are
new float64 arrays; the arithmetic is the numpy expressions', in the same order.
"""
from __future__ import annotations

import numpy as np
from numba import njit


def _float64_boxes(boxes: np.ndarray, columns: int = 4) -> np.ndarray:
    """``(k, columns+)`` float64, C-contiguous (the trackers' arrays pass through without a copy; a strided view is
    copied, so each kernel has one compiled signature, the one ``vastmat.apis.compile_kernels`` caches)."""
    boxes = np.ascontiguousarray(boxes, dtype=np.float64)
    if boxes.ndim != 2 or boxes.shape[1] < columns:
        boxes = boxes.reshape(-1, columns)
    return boxes


@njit(cache=True, nogil=True)
def _ltwh_to_xyxy(b: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    out = np.empty((b.shape[0], 4))
    for k in range(b.shape[0]):
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = b[k, 0], b[k, 1], b[k, 0] + b[k, 2], b[k, 1] + b[k, 3]
    return out


@njit(cache=True, nogil=True)
def _xyxy_to_ltwh(b: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    out = np.empty((b.shape[0], 4))
    for k in range(b.shape[0]):
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = b[k, 0], b[k, 1], b[k, 2] - b[k, 0], b[k, 3] - b[k, 1]
    return out


@njit(cache=True, nogil=True)
def _xyxy_to_xyah(b: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    out = np.empty((b.shape[0], 4))
    for k in range(b.shape[0]):
        w, h = b[k, 2] - b[k, 0], b[k, 3] - b[k, 1]
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = b[k, 0] + w / 2, b[k, 1] + h / 2, w / h, h
    return out


@njit(cache=True, nogil=True)
def _ltwh_to_xyah(b: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    out = np.empty((b.shape[0], 4))
    for k in range(b.shape[0]):
        out[k, 0], out[k, 1] = b[k, 0] + b[k, 2] / 2, b[k, 1] + b[k, 3] / 2
        out[k, 2], out[k, 3] = b[k, 2] / b[k, 3], b[k, 3]
    return out


@njit(cache=True, nogil=True)
def _xyah_to_xyxy(b: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    out = np.empty((b.shape[0], 4))
    for k in range(b.shape[0]):
        w = b[k, 2] * b[k, 3]
        x1, y1 = b[k, 0] - w / 2, b[k, 1] - b[k, 3] / 2
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = x1, y1, x1 + w, y1 + b[k, 3]
    return out


@njit(cache=True, nogil=True)
def _xyxy_to_cxcywh(b: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    out = np.empty((b.shape[0], 4))
    for k in range(b.shape[0]):
        out[k, 0], out[k, 1] = (b[k, 0] + b[k, 2]) / 2, (b[k, 1] + b[k, 3]) / 2
        out[k, 2], out[k, 3] = b[k, 2] - b[k, 0], b[k, 3] - b[k, 1]
    return out


@njit(cache=True, nogil=True)
def _cxcywh_to_xyxy(b: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    out = np.empty((b.shape[0], 4))
    for k in range(b.shape[0]):
        out[k, 0], out[k, 1] = b[k, 0] - b[k, 2] / 2, b[k, 1] - b[k, 3] / 2
        out[k, 2], out[k, 3] = b[k, 0] + b[k, 2] / 2, b[k, 1] + b[k, 3] / 2
    return out


def ltwh_to_xyxy(boxes: np.ndarray) -> np.ndarray:
    """(k, 4) left, top, width, height -> x1, y1, x2, y2."""
    return _ltwh_to_xyxy(_float64_boxes(boxes))


def xyxy_to_ltwh(boxes: np.ndarray) -> np.ndarray:
    """(k, 4) x1, y1, x2, y2 -> left, top, width, height."""
    return _xyxy_to_ltwh(_float64_boxes(boxes))


def xyxy_to_xyah(boxes: np.ndarray) -> np.ndarray:
    """(k, 4) x1 y1 x2 y2 -> centre x, centre y, aspect w / h, height."""
    return _xyxy_to_xyah(_float64_boxes(boxes))


def ltwh_to_xyah(ltwh: np.ndarray) -> np.ndarray:
    """(k, 4) left top width height -> xyah (ByteTrack's ``STrack.tlwh_to_xyah``)."""
    return _ltwh_to_xyah(_float64_boxes(ltwh))


def xyah_to_xyxy(xyah: np.ndarray) -> np.ndarray:
    """(k, 4+) the box of a state's first four values (ByteTrack's ``STrack.tlbr``)."""
    return _xyah_to_xyxy(_float64_boxes(xyah))


def xyxy_to_cxcywh(boxes: np.ndarray) -> np.ndarray:
    """(k, 4) x1 y1 x2 y2 -> centre x, centre y, width, height (TrackTrack's ``cxcywh`` of a detection)."""
    return _xyxy_to_cxcywh(_float64_boxes(boxes))


def cxcywh_to_xyxy(boxes: np.ndarray) -> np.ndarray:
    """(k, 4+) centre x, centre y, width, height (a state's first four values) -> x1 y1 x2 y2."""
    return _cxcywh_to_xyxy(_float64_boxes(boxes))


def paired_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of each row of ``a`` with the same row of ``b`` (``(k, 4)`` x1 y1 x2 y2, no +1 pixel); ``(k,)``."""
    iw = np.clip(np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0]), 0, None)
    ih = np.clip(np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1]), 0, None)
    inter = iw * ih
    union = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter
    return inter / np.maximum(union, 1e-12)
