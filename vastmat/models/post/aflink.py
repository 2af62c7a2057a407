"""AFLink, the appearance-free link of StrongSORT as TrackTrack runs it (``3. Tracker/AFLink/``): the ``PostLinker``
model, its training wrapper, and the per-video post-processor ``AFLink``.

``AFLink`` ports the official ``AFLink.link()`` (TrackTrack = StrongSORT), not mmdet's ``AppearanceFreeLink``, which
stores matrix indices as track ids when it relabels and uses ``<=`` on the upper temporal bound.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from mmdet.models.task_modules.tracking.aflink import Classifier, FusionBlock
from mmdet.models.task_modules.tracking.aflink import TemporalBlock as MMDetTemporalBlock
from mmengine.model import BaseModel
from torch import nn

from vastmat.datasets.aflink_pairs import fill_or_cut, normalize_windows
from vastmat.models.association.solvers import Hungarian
from vastmat.registry import MODELS, TASK_UTILS

INFINITY = 1e5  # the official's "no link" cost


class TemporalBlock(MMDetTemporalBlock):
    """mmdet's (= the official) block with the per-column batch norm written out of place: the official assigns
    the normalised columns back into the convolution's output, which autograd refuses in training since torch 1.x
    ("modified by an inplace operation"). Same parameters, same values."""

    def bn(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([self.bnf(x[:, :, :, 0]), self.bnx(x[:, :, :, 1]), self.bny(x[:, :, :, 2])], dim=3)


@MODELS.register_module()
class PostLinker(nn.Module):
    """The official ``AFLink/model.py`` ``PostLinker`` (state-dict keys identical, so ``AFLink_epoch20.pth`` and any
    state dict with the official names load with ``strict=True``).

    Two temporal stacks (Conv2d (7, 1) + a BatchNorm1d for each of the columns frame, x, y; channels 1-32-64-128-256),
    a fusion block each (Conv2d (1, 3) + BatchNorm2d), average pooling, and a classifier on the concatenation
    (512-128-2). Built from mmdet's ``aflink.py`` blocks (same structure and names).

    ``forward(x1, x2)``: windows ``(B, 1, L, C >= 3)`` of the former and the latter track; returns ``(B, 2)`` logits
    in training mode and softmax probabilities (column 1: "same object") in eval mode, as the official.
    """

    def __init__(self) -> None:
        super().__init__()
        channels = (1, 32, 64, 128, 256)
        self.TemporalModule_1 = nn.Sequential(*[TemporalBlock(a, b) for a, b in zip(channels[:-1], channels[1:])])
        self.TemporalModule_2 = nn.Sequential(*[TemporalBlock(a, b) for a, b in zip(channels[:-1], channels[1:])])
        self.FusionBlock_1 = FusionBlock(256, 256)
        self.FusionBlock_2 = FusionBlock(256, 256)
        self.pooling = nn.AdaptiveAvgPool2d((1, 1))
        self.classifier = Classifier(256, 2)

    def features(self, x1: torch.Tensor, x2: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The pooled 256-d features of both windows (only the columns frame, x, y are used)."""
        x1 = self.FusionBlock_1(self.TemporalModule_1(x1[:, :, :, :3]))
        x2 = self.FusionBlock_2(self.TemporalModule_2(x2[:, :, :, :3]))
        return self.pooling(x1).squeeze(-1).squeeze(-1), self.pooling(x2).squeeze(-1).squeeze(-1)

    def forward(self, x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
        y = self.classifier(*self.features(x1, x2))
        return y if self.training else torch.softmax(y, dim=1)

    @torch.no_grad()
    def link_probability(self, x1: torch.Tensor, x2: torch.Tensor, chunk: int = 1024) -> np.ndarray:
        """Eval-mode probability of "same object" for a batch of pairs, float32, in chunks of ``chunk`` pairs.

        The official ``AFLink.predict`` calls the model on one pair at a time; batched convolutions and matrix
        products round differently (about one float32 ulp, tested), far below the distances of link probabilities
        from the threshold in practice (the golden test compares the links with the official code's).
        """
        if len(x1) == 0:
            return np.zeros(0, np.float32)
        was_training = self.training
        self.eval()
        out = []
        try:
            for start in range(0, len(x1), chunk):
                f1, f2 = self.features(x1[start:start + chunk], x2[start:start + chunk])
                out.append(torch.softmax(self.classifier(f1, f2), dim=1)[:, 1])
        finally:
            self.train(was_training)
        return torch.cat(out).numpy()


@MODELS.register_module()
class PostLinkerModel(BaseModel):
    """Training wrapper of :class:`PostLinker` for ``tools/train.py`` (the official ``AFLink/train.py``).

    Takes batches of :class:`~vastmat.datasets.aflink_pairs.AFLinkPairs` items (``track1``, ``track2``: ``(B, 4,
    1, L, 5)``, ``labels``: ``(B, 4)``, or lists of the per-item tensors), flattens the four pairs of each item in the
    official order (all first pairs of the batch, then all second pairs, ...) and computes the official loss,
    ``nn.CrossEntropyLoss`` (mean) on the logits. Its checkpoint (keys ``linker.*``) is what
    ``AFLink(checkpoint=...)`` loads.

    ``mode='predict'``: the probabilities ``(4B, 2)``; ``mode='tensor'``: the logits.
    """

    def __init__(self, data_preprocessor: dict | None = None, init_cfg: dict | None = None) -> None:
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        self.linker = PostLinker()

    @staticmethod
    def _flatten(x: torch.Tensor | list) -> torch.Tensor:
        x = torch.stack(list(x)) if isinstance(x, (list, tuple)) else x
        return x.transpose(0, 1).reshape(-1, *x.shape[2:])  # (B, 4, ...) -> pair type major, as torch.cat

    def forward(self, track1: Any, track2: Any, labels: Any = None, mode: str = 'tensor') -> Any:
        x1, x2 = self._flatten(track1), self._flatten(track2)
        if mode == 'loss':
            if labels is None:
                raise ValueError('PostLinkerModel: mode="loss" needs labels')
            return dict(loss=F.cross_entropy(self.linker(x1, x2), self._flatten(labels)))
        if mode == 'predict':
            logits = self.linker.classifier(*self.linker.features(x1, x2))
            return torch.softmax(logits, dim=1)
        if mode == 'tensor':
            return self.linker.classifier(*self.linker.features(x1, x2))
        raise ValueError(f'PostLinkerModel: mode must be "loss", "predict" or "tensor", got {mode!r}')


OFFICIAL_FIRST_KEY = 'TemporalModule_1.0.conv.weight'


def linker_state_dict(checkpoint: Any, where: str = 'checkpoint') -> dict:
    """The PostLinker weights of a checkpoint, with the official key names.

    Accepts the official raw state dict (``AFLink_epoch20.pth``), an mmengine runner checkpoint of
    :class:`PostLinkerModel` (``state_dict`` with keys ``linker.*``) or of a model that holds an ``AFLink``
    post-processor (``post_processor0.linker.*``): the prefix is the one in front of the official first key.

    Raises:
        KeyError: no PostLinker weights in it, or more than one set (the message lists the prefixes).
    """
    state = checkpoint.get('state_dict', checkpoint) if isinstance(checkpoint, dict) else None
    if not isinstance(state, dict):
        raise KeyError(f'{where}: not a state dict or a runner checkpoint (got {type(checkpoint).__name__})')
    prefixes = sorted(k[:-len(OFFICIAL_FIRST_KEY)] for k in state if k.endswith(OFFICIAL_FIRST_KEY))
    if len(prefixes) != 1:
        found = f'several PostLinkers, under prefixes {prefixes}' if prefixes else \
            f'no key ending in {OFFICIAL_FIRST_KEY!r} (first keys: {list(state)[:5]})'
        raise KeyError(f'{where}: expected the weights of one PostLinker, found {found}')
    prefix = prefixes[0]
    return {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}


def load_linker(linker: PostLinker, checkpoint: str | os.PathLike | dict) -> None:
    """Load PostLinker weights (a file, read weights-only, or an already loaded dict) with ``strict=True``."""
    where = str(checkpoint) if not isinstance(checkpoint, dict) else 'checkpoint'
    if not isinstance(checkpoint, dict):
        # the project's weights-only loader (vastmat.engine sits beside the models: imported when needed)
        from vastmat.engine.checkpoint import safe_load
        checkpoint = safe_load(checkpoint, map_location='cpu')
    state = linker_state_dict(checkpoint, where)
    try:
        linker.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise KeyError(f'{where}: the PostLinker weights do not fit the official model: {exc}') from None


@TASK_UTILS.register_module()
class AFLink(nn.Module):
    """Appearance-free link (StrongSORT, as TrackTrack runs it) as a per-video post-processor: ``rows -> rows``.

    Rows are ``frame, id, x1, y1, x2, y2, score``. The official reads a results file (``frame, id, left, top, width,
    height, ...``) and uses ``frame, left, top`` (= ``x1, y1``), plus width and height only as unused model-input
    columns; the boxes and scores are passed through unchanged, only ids change and rows are dropped. Steps, as
    ``AFLink.link()``:

    1. Sort the rows by frame (``np.argsort``, as the official, so that ties fall the same way) and gather the tracks
       in order of first appearance.
    2. For each ordered pair of tracks (i, j), i != j, with ``thrT[0] <= f_j,start - f_i,end < thrT[1]`` and the
       distance of the top-left corners of i's last and j's first box ``<= thrS``: the PostLinker's probability
       ``p`` on the windows (last 30 rows of i, first 30 of j, joint min-max normalisation); cost ``1 - p`` (float32)
       is kept when ``<= thrP``, else the cost is ``1e5``.
    3. "Compression": keep the rows and columns whose minimum is ``< thrP``; Hungarian (scipy); pairs with cost
       ``< thrP`` give ``id2id[row id] = column id``.
    4. Chains: in ``id2id``'s order, ``ID2ID[v] = ID2ID[k] if k in ID2ID else k``; then ids are replaced one
       mapping after the other (``ID2ID`` order), so i -> j -> k all become i.
    5. Deduplicate on (frame, id) (``np.unique(axis=0)``, first row kept); the output is sorted by frame, then id.

    The model calls are batched, with the same per-pair results as the official one-pair calls (see
    :meth:`PostLinker.link_probability`); no ``.cuda()``. Comparisons of the float32 cost with ``thrP`` follow
    numpy 2 (``thrP`` taken as float32), as the official does under numpy 2.

    Args:
        thrT: temporal window ``(low, high)`` of ``f_j,start - f_i,end``: ``low <= d < high`` (TrackTrack (0, 20)).
        thrS: largest distance in pixels of the top-left corners (TrackTrack 100).
        thrP: largest link cost ``1 - p`` (TrackTrack 0.05).
        checkpoint: PostLinker weights: the official ``AFLink_epoch20.pth`` (raw state dict) or a checkpoint of
            :class:`PostLinkerModel` from ``tools/train.py`` (``work_dirs/.../epoch_20.pth``). None: the weights
            come from a checkpoint of the whole tracking model (``post_processorN.linker.*``) or are random.
        round_input: round left, top, width, height to 0.1 px and scores to 0.01 first, as the official tracker's
            results file that the official post-processing reads (``write_results``); the output carries the
            rounded boxes. Only for reproducing the official pipeline's numbers.
    """

    def __init__(self, thrT: tuple[int, int] = (0, 20), thrS: float = 100, thrP: float = 0.05,
                 checkpoint: str | None = None, round_input: bool = False) -> None:
        super().__init__()
        if len(thrT) != 2:
            raise ValueError(f'AFLink: thrT must be (low, high), got {thrT!r}')
        self.thrT, self.thrS, self.thrP = (thrT[0], thrT[1]), thrS, thrP
        self.round_input = round_input
        self.input_len = 30
        self.linker = PostLinker()
        if checkpoint is not None:
            load_linker(self.linker, checkpoint)
        self.linker.eval()

    def train(self, mode: bool = True) -> 'AFLink':
        """The linker always runs in eval mode (the official calls ``model.eval()``), even in a model set to train."""
        super().train(mode)
        self.linker.eval()
        return self

    def forward(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, np.float64).reshape(-1, 7)
        if len(rows) == 0:
            return rows.copy()
        if self.round_input:
            rows = round_like_results_file(rows)
        rows = rows[np.argsort(rows[:, 0])]  # the official: np.argsort(self.track[:, 0]) (default kind)
        ids, costs = self._costs(rows)
        chains = self._link(ids, costs)
        out = rows.copy()
        for k, v in chains.items():  # one mapping after the other, as the official
            out[out[:, 1] == k, 1] = v
        _, index = np.unique(out[:, :2], return_index=True, axis=0)
        return out[index]

    def _costs(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Track ids in order of first appearance and the ``(n, n)`` cost matrix (``INFINITY`` where not linked)."""
        uniq, first = np.unique(rows[:, 1], return_index=True)
        ids = uniq[np.argsort(first)]  # dict insertion order of the official id2info
        order = np.argsort(rows[:, 1], kind='stable')  # each track's rows in frame order
        sorted_ids = rows[order, 1]
        bounds, ends = np.searchsorted(sorted_ids, ids), np.searchsorted(sorted_ids, ids, side='right')
        # [f, x, y, w, h] per row, as the official gather_info reads from an ltwh results file
        info = np.column_stack([rows[:, 0], rows[:, 2], rows[:, 3], rows[:, 4] - rows[:, 2], rows[:, 5] - rows[:, 3]])
        tracks = [info[order[b:e]] for b, e in zip(bounds, ends)]
        n = len(ids)
        f_end = np.array([t[-1, 0] for t in tracks])
        f_start = np.array([t[0, 0] for t in tracks])
        xy_end = np.array([t[-1, 1:3] for t in tracks])
        xy_start = np.array([t[0, 1:3] for t in tracks])
        gap = f_start[None, :] - f_end[:, None]  # [i, j] = fj - fi
        dx = xy_end[:, None, 0] - xy_start[None, :, 0]
        dy = xy_end[:, None, 1] - xy_start[None, :, 1]
        distance = np.sqrt(dx ** 2 + dy ** 2)
        candidate = (self.thrT[0] <= gap) & (gap < self.thrT[1]) & ~(self.thrS < distance) & ~np.eye(n, dtype=bool)
        cost_matrix = np.ones((n, n)) * INFINITY
        pi, pj = np.nonzero(candidate)
        if len(pi):
            tails = np.stack([fill_or_cut(t, self.input_len, True) for t in tracks])
            heads = np.stack([fill_or_cut(t, self.input_len, False) for t in tracks])
            x1, x2 = normalize_windows(tails[pi], heads[pj])
            p = self.pair_probabilities(np.column_stack([ids[pi], ids[pj]]), x1[:, None], x2[:, None])
            cost = np.float32(1) - p  # float32, as the official `1 - score`
            keep = cost <= self.thrP
            cost_matrix[pi[keep], pj[keep]] = cost[keep]
        return ids, cost_matrix

    def pair_probabilities(self, id_pairs: np.ndarray, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
        """float32 probability of "same object" for each candidate pair: ``id_pairs`` ``(P, 2)`` (former id, latter
        id), their normalised windows ``(P, 1, 30, 5)``. The PostLinker's; a seam for tests and other linkers."""
        return self.linker.link_probability(torch.from_numpy(x1), torch.from_numpy(x2))

    def _link(self, ids: np.ndarray, cost_matrix: np.ndarray) -> dict:
        """Compression, Hungarian and the id chains (``ID2ID``: later id -> the id it takes)."""
        mask_row = cost_matrix.min(axis=1) < self.thrP
        mask_col = cost_matrix.min(axis=0) < self.thrP
        matrix, ids_row, ids_col = cost_matrix[mask_row][:, mask_col], ids[mask_row], ids[mask_col]
        id2id = {}
        for i, j in Hungarian()(matrix).matches.tolist():  # scipy's minimum-cost assignment, rows in order
            if matrix[i, j] < self.thrP:
                id2id[ids_row[i]] = ids_col[j]
        chains = {}
        for k, v in id2id.items():
            chains[v] = chains[k] if k in chains else k
        return chains


def round_like_results_file(rows: np.ndarray) -> np.ndarray:
    """Rows ``frame, id, x1, y1, x2, y2, score`` as they come back from TrackTrack's ``write_results``: left, top,
    width, height rounded to 1 decimal and the score to 2 (numpy rounding: the official rounds numpy scalars)."""
    ltwh = np.round(np.column_stack([rows[:, 2:4], rows[:, 4:6] - rows[:, 2:4]]), 1)
    return np.column_stack([rows[:, :2], ltwh[:, :2], ltwh[:, :2] + ltwh[:, 2:], np.round(rows[:, 6], 2)])
