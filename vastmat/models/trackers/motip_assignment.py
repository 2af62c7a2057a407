"""The official assignment protocols of MOTIP's runtime tracker (module docstring of :mod:`.motip_tracker`):
:class:`MOTIPAssignmentMixin`, ID labels from the ID decoder's word probabilities."""
from __future__ import annotations

import torch
from torch import Tensor

from vastmat.models.association.solvers import Hungarian

ASSIGNMENT_PROTOCOLS = ('object-max', 'hungarian', 'id-max')


class MOTIPAssignmentMixin:
    """:meth:`assign` and the three protocols, mixed into :class:`~.motip_tracker.MOTIPTracker`; they read the
    tracker's ``assignment_protocol``, ``num_id_vocabulary`` (``K``, the newborn word), ``id_thresh`` and
    ``window_labels``."""

    def assign(self, id_scores: Tensor) -> list[int]:
        """ID labels (``K`` = newborn) of detections with word probabilities ``id_scores (n, K + 1)``, by
        ``assignment_protocol``."""
        if self.assignment_protocol == 'object-max':
            return self.object_max_assignment(id_scores)
        if self.assignment_protocol == 'hungarian':
            return self.hungarian_assignment(id_scores)
        return self.id_max_assignment(id_scores)

    def object_max_assignment(self, id_scores: Tensor) -> list[int]:
        """The official ``_object_max_assignment``."""
        newborn = self.num_id_vocabulary
        in_window = self.window_labels
        confs, words = id_scores.max(dim=-1)
        confs, words = confs.tolist(), words.tolist()
        best: dict[int, float] = {}  # the highest probability any detection gives each word
        for conf, word in zip(confs, words):
            best[word] = max(best.get(word, conf), conf)
        if newborn in best:
            best[newborn] = 0.0
        labels: list[int] = []
        for conf, word in zip(confs, words):
            if word not in in_window or conf < self.id_thresh or conf < best[word] or word in labels:
                labels.append(newborn)
            else:
                labels.append(word)
        return labels

    def hungarian_assignment(self, id_scores: Tensor) -> list[int]:
        """The official ``_hungarian_assignment`` (scipy's ``linear_sum_assignment`` on ``1 - p``)."""
        newborn = self.num_id_vocabulary
        if len(id_scores) > 1:  # one newborn column per detection
            id_scores = torch.cat((id_scores, id_scores[:, -1:].repeat(1, len(id_scores) - 1)), dim=-1)
        in_window = self.window_labels
        matches = Hungarian()((1 - id_scores).cpu().numpy()).matches  # scipy's, every row matched, rows in order
        labels = []
        for row, col in matches.tolist():
            if col not in in_window or col >= newborn or bool(id_scores[row, col] < self.id_thresh):  # float32 compare
                labels.append(newborn)
            else:
                labels.append(col)
        return labels

    def id_max_assignment(self, id_scores: Tensor) -> list[int]:
        """The official ``_id_max_assignment``."""
        labels = [self.num_id_vocabulary] * len(id_scores)
        in_window = self.window_labels
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
            if conf < self.id_thresh or conf < best[obj] or word not in in_window:
                continue
            labels[obj] = word
        return labels
