"""DiffMOT's tracks of one video: a :class:`.TrackStore` kind with the columns of the official ``STrack``.

Its own module so that :mod:`.motion_context` can tell a DiffMOT table by its kind without importing the tracker
(which imports :mod:`.motion_context`).
"""
from __future__ import annotations

import numpy as np

from vastmat.structures.bbox import ltwh_to_xyxy

from .track_store import TrackStore, column

HISTORY = 5  # the official `interval`: D2MP conditions on the last 5 states


def store_boxes(store: DiffMOTTracks, rows: np.ndarray) -> np.ndarray:
    """x1 y1 x2 y2 of the current boxes of rows of a track store (official ``STrack.tlbr``)."""
    return ltwh_to_xyxy(store.ltwh[rows])


class DiffMOTTracks(TrackStore):
    """DiffMOT's tracks of one video as rows of arrays (the bookkeeping and lifecycle columns, and these).

    Args:
        duplicate_thresh: IoU distance below which a tracked and a lost track are duplicates (official 0.15).
    """

    ltwh: np.ndarray = column((4, ))  # the current box
    conds: np.ndarray = column((HISTORY, 8))  # the last D2MP conditions [cx, cy, w, h, dcx, dcy, dw, dh], oldest first
    num_conds: np.ndarray = column((), np.int64)  # how many of ``conds`` are filled
    # the last two entries of the official "all" (prediction or detection) and "observation" memories, xywh
    all_last: np.ndarray = column((4, ))
    all_prev: np.ndarray = column((4, ))
    obs_last: np.ndarray = column((4, ))
    obs_prev: np.ndarray = column((4, ))
    emb: np.ndarray = column((0, ))  # the embedding (dimension set by the first frame with features; zeros: none)

    def __init__(self, duplicate_thresh: float = 0.15) -> None:
        super().__init__(boxes=store_boxes, duplicate_thresh=duplicate_thresh)
