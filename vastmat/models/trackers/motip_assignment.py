"""The official assignment protocols of MOTIP's runtime tracker (module docstring of :mod:`.motip_tracker`): pure
functions from the ID decoder's word probabilities ``id_scores (n, K + 1)``, the window's labels, ``K`` (the
newborn word) and ``id_thresh`` to the detections' ID labels (``K`` = newborn), and :data:`ASSIGNMENT_PROTOCOLS`,
the protocols by name."""
from __future__ import annotations

from collections.abc import Collection
from typing import Callable

import torch
from torch import Tensor

from vastmat.models.association.solvers import Hungarian


def object_max_assignment(id_scores: Tensor, window_labels: Collection[int], num_id_vocabulary: int,
                          id_thresh: float) -> list[int]:
    """The official ``_object_max_assignment``: each detection takes its argmax word if it is in ``window_labels``,
    has probability ``>= id_thresh``, no detection claims it more strongly and no earlier one took it."""
    newborn = num_id_vocabulary
    confs, words = id_scores.max(dim=-1)
    confs, words = confs.tolist(), words.tolist()
    best: dict[int, float] = {}  # the highest probability any detection gives each word
    for conf, word in zip(confs, words):
        best[word] = max(best.get(word, conf), conf)
    if newborn in best:
        best[newborn] = 0.0
    labels: list[int] = []
    for conf, word in zip(confs, words):
        if word not in window_labels or conf < id_thresh or conf < best[word] or word in labels:
            labels.append(newborn)
        else:
            labels.append(word)
    return labels


def hungarian_assignment(id_scores: Tensor, window_labels: Collection[int], num_id_vocabulary: int,
                         id_thresh: float) -> list[int]:
    """The official ``_hungarian_assignment`` (scipy's ``linear_sum_assignment`` on ``1 - p``, the newborn column
    repeated ``n - 1`` times)."""
    newborn = num_id_vocabulary
    if len(id_scores) > 1:  # one newborn column per detection
        id_scores = torch.cat((id_scores, id_scores[:, -1:].repeat(1, len(id_scores) - 1)), dim=-1)
    matches = Hungarian()((1 - id_scores).cpu().numpy()).matches  # scipy's, every row matched, rows in order
    labels = []
    for row, col in matches.tolist():
        if col not in window_labels or col >= newborn or bool(id_scores[row, col] < id_thresh):  # float32 compare
            labels.append(newborn)
        else:
            labels.append(col)
    return labels


def id_max_assignment(id_scores: Tensor, window_labels: Collection[int], num_id_vocabulary: int,
                      id_thresh: float) -> list[int]:
    """The official ``_id_max_assignment``: each word takes the detection it gives the highest probability, if no
    word claims that detection more strongly (ties: the last word), ``p >= id_thresh`` and the word is in
    ``window_labels``."""
    labels = [num_id_vocabulary] * len(id_scores)
    confs, objs = id_scores.max(dim=0)
    confs, objs = confs.tolist(), objs.tolist()
    best: dict[int, float] = {}  # the highest probability any word gives each detection
    for conf, obj in zip(confs, objs):
        if obj not in best:
            best[obj] = conf
        else:
            if conf == best[obj]:  # the official tie rule (no effect on the maximum)
                conf = conf - 0.0001
            best[obj] = max(best[obj], conf)
    for word, (conf, obj) in enumerate(zip(confs, objs)):
        if conf < id_thresh or conf < best[obj] or word not in window_labels:
            continue
        labels[obj] = word
    return labels


#: The protocols by name: ``fn(id_scores, window_labels, num_id_vocabulary, id_thresh) -> labels``.
ASSIGNMENT_PROTOCOLS: dict[str, Callable[[Tensor, Collection[int], int, float], list[int]]] = {
    'object-max': object_max_assignment, 'hungarian': hungarian_assignment, 'id-max': id_max_assignment}


def assign_id_labels(id_scores: Tensor, window_labels: Collection[int], num_id_vocabulary: int, id_thresh: float,
                     protocol: str = 'object-max') -> list[int]:
    """ID labels (``num_id_vocabulary`` = ``K`` = newborn) of detections with word probabilities ``id_scores
    (n, K + 1)`` against the window's labels, by ``protocol`` (a key of :data:`ASSIGNMENT_PROTOCOLS`)."""
    return ASSIGNMENT_PROTOCOLS[protocol](id_scores, window_labels, num_id_vocabulary, id_thresh)
