"""MOTIP's training targets: per-clip random ID labels, trajectory augmentation, feature gathering and the ID loss.

Ports of the official (MCG-NJU/MOTIP, HEAD 5cfbcd4) ``data/transforms.py`` ``GenerateIDLabels`` and
``TurnIntoTrajectoryAndUnknown``, ``data/util.py`` ``collate_fn`` (padding), ``train.py`` ``prepare_for_motip`` and
``models/motip/id_criterion.py`` (cross-entropy variant, the published configs' ``USE_FOCAL_LOSS: False``).

Layout: a clip of T frames has N identities (columns); G groups are independent random label assignments of the same
clip. ``ann_idxs[g, t, n]`` is the row of frame t's ground truth that column n takes (-1 where absent); ``masks`` are
True where absent. Time indices are the frame positions ``0..T-1``.

Randomness is drawn exactly as the official transforms draw it, from Python's ``random`` (occlusion spans) and
torch's global generator (label permutations, identity subsampling, switches), in the same order and with the same
calls, so that under the same seeds the outputs are identical to the official ones.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F
from mmengine.dist import all_reduce, get_world_size
from torch import Tensor


@dataclass
class ClipIDLabels:
    """ID labels of one clip, each ``(G, T, N)``: ``id_labels`` (int64 in ``[0, K)``, the same for a column over
    all frames), ``id_masks`` (bool, True = the identity is absent from the frame), ``ann_idxs`` (int64, row of the
    frame's ground truth, -1 where absent)."""
    id_labels: Tensor
    id_masks: Tensor
    ann_idxs: Tensor


@dataclass
class MOTIPClipTargets:
    """Trajectory (input) and unknown (query) tokens of one clip, each field ``(G, T, N)``.

    ``unknown_id_labels`` are the supervision: the column's label once the identity has appeared in the (augmented)
    trajectory at an earlier frame, else the newborn label K. ``*_times`` are the frame positions.
    """
    trajectory_id_labels: Tensor
    trajectory_masks: Tensor
    trajectory_ann_idxs: Tensor
    trajectory_times: Tensor
    unknown_id_labels: Tensor
    unknown_masks: Tensor
    unknown_ann_idxs: Tensor
    unknown_times: Tensor


def generate_id_labels(gt_ids: Sequence[Tensor], num_id_vocabulary: int, num_groups: int,
                       num_training_ids: int | None = None) -> ClipIDLabels:
    """Random ID labels for a clip (official ``GenerateIDLabels``).

    Args:
        gt_ids: ``gt_ids[t]`` = frame t's ground-truth identities, one per GT row (1-D integers, unique per frame).
        num_id_vocabulary: K.
        num_groups: G, independent label assignments (official ``AUG_NUM_GROUPS``).
        num_training_ids: at most this many identities are kept (official ``NUM_TRAINING_IDS``, default K; must be
            <= K so the labels of a group can be distinct).

    Returns:
        :class:`ClipIDLabels` with ``N = min(#identities, num_training_ids)`` columns. Column order: the
        identities in the iteration order of a Python ``set`` filled frame by frame (the official order; for small
        non-negative ids this is ascending), then, if there are more than ``num_training_ids`` identities, the subset
        ``torch.randperm(#identities)[:num_training_ids]`` in that permuted order. Each group's labels are
        ``torch.randperm(K)[:N]`` (one call per group, after the subsampling call).
    """
    K = int(num_id_vocabulary)
    if K < 1:
        raise ValueError(f'generate_id_labels: num_id_vocabulary must be >= 1, got {num_id_vocabulary}')
    if num_groups < 1:
        raise ValueError(f'generate_id_labels: num_groups must be >= 1, got {num_groups}')
    keep = K if num_training_ids is None else int(num_training_ids)
    if not 1 <= keep <= K:
        raise ValueError(f'generate_id_labels: num_training_ids must lie in [1, num_id_vocabulary={K}], got '
                         f'{num_training_ids} (more identities than ID words cannot get distinct labels)')
    T = len(gt_ids)
    if T == 0:
        raise ValueError('generate_id_labels: the clip has no frames (gt_ids is empty)')
    frames = []
    for t, ids in enumerate(gt_ids):
        ids = torch.as_tensor(ids)
        if ids.dim() != 1 or (ids.numel() and (ids.dtype.is_floating_point or ids.dtype == torch.bool)):
            raise ValueError(f'generate_id_labels: gt_ids[{t}] must be a 1-D integer tensor, got dtype {ids.dtype} '
                             f'and shape {tuple(ids.shape)}')
        values = ids.tolist()
        if len(set(values)) != len(values):
            raise ValueError(f'generate_id_labels: gt_ids[{t}] (frame {t} of the clip) has duplicate ids {values}')
        frames.append(values)

    id_set: set = set()
    for values in frames:
        id_set.update(set(values))
    columns = {gid: n for n, gid in enumerate(id_set)}
    N = len(columns)
    base_masks = torch.ones((T, N), dtype=torch.bool)
    base_ann_idxs = torch.full((T, N), -1, dtype=torch.int64)
    for t, values in enumerate(frames):
        for row, gid in enumerate(values):
            base_masks[t, columns[gid]] = False
            base_ann_idxs[t, columns[gid]] = row
    if N > keep:  # official: N > K or N > num_training_ids -> keep min(num_training_ids, K) at random
        chosen = torch.randperm(N)[:keep]
        base_masks, base_ann_idxs = base_masks[:, chosen], base_ann_idxs[:, chosen]
        N = keep
    id_labels = torch.stack([torch.randperm(K)[:N] for _ in range(num_groups)])  # (G, N), one call per group
    return ClipIDLabels(id_labels=id_labels[:, None, :].expand(num_groups, T, N).clone(),
                        id_masks=base_masks[None].expand(num_groups, T, N).clone(),
                        ann_idxs=base_ann_idxs[None].expand(num_groups, T, N).clone())


def trajectory_and_unknown(labels: ClipIDLabels, num_id_vocabulary: int, occlusion_prob: float,
                           switch_prob: float) -> MOTIPClipTargets:
    """Trajectory and unknown tokens with trajectory augmentation (official ``TurnIntoTrajectoryAndUnknown``).

    1. Occlusion (if ``occlusion_prob > 0``): for each (group, column) in group-major order, if
       ``random.random() < occlusion_prob``: ``begin = random.randint(0, T - 1)``,
       ``end = begin + ceil((T - 1 - begin) * random.random())``; frames ``[begin, end)`` of that column are masked
       in BOTH the trajectory and the unknown tokens (as the official code does).
    2. Switch (if ``switch_prob > 0``), trajectory only: for each (group, frame) in group-major order,
       ``torch.bernoulli(torch.ones(N) * switch_prob)`` selects columns; when more than one is selected their
       ``ann_idxs`` and masks are permuted by ``torch.randperm`` (the labels stay: the features move to other labels).
    3. Newborn rule: the unknown label at frame t is K unless the column is unmasked in the augmented trajectory at
       some frame < t (so frame 0 is always newborn).
    """
    K = int(num_id_vocabulary)
    for name, p in (('occlusion_prob', occlusion_prob), ('switch_prob', switch_prob)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f'trajectory_and_unknown: {name} must lie in [0, 1], got {p}')
    id_labels, id_masks, ann_idxs = labels.id_labels, labels.id_masks, labels.ann_idxs
    if not (id_labels.dim() == 3 and id_labels.shape == id_masks.shape == ann_idxs.shape):
        raise ValueError('trajectory_and_unknown: id_labels, id_masks and ann_idxs must share one (G, T, N) shape, got '
                         f'{tuple(id_labels.shape)}, {tuple(id_masks.shape)}, {tuple(ann_idxs.shape)}')
    if id_labels.numel() and (int(id_labels.min()) < 0 or int(id_labels.max()) >= K):
        raise ValueError(f'trajectory_and_unknown: id_labels must lie in [0, num_id_vocabulary={K}), got values in '
                         f'[{int(id_labels.min())}, {int(id_labels.max())}]')
    G, T, N = id_labels.shape
    traj_masks = id_masks.clone()
    unk_masks = id_masks.clone()
    traj_ann_idxs = ann_idxs.clone()

    if occlusion_prob > 0.0:
        for i in range(G * N):
            if random.random() < occlusion_prob:
                begin = random.randint(0, T - 1)
                end = begin + math.ceil((T - 1 - begin) * random.random())
                g, n = divmod(i, N)
                traj_masks[g, begin:end, n] = True
                unk_masks[g, begin:end, n] = True

    if switch_prob > 0.0:
        for i in range(G * T):
            chosen = torch.nonzero(torch.bernoulli(torch.ones((N,)) * switch_prob))[:, 0]
            if len(chosen) > 1:
                shuffled = chosen[torch.randperm(len(chosen))]
                g, t = divmod(i, T)
                traj_ann_idxs[g, t, chosen] = traj_ann_idxs[g, t, shuffled]
                traj_masks[g, t, chosen] = traj_masks[g, t, shuffled]

    # Seen in the trajectory strictly before frame t (cumulative count over the frames before t).
    seen_before = torch.cumsum((~traj_masks).to(torch.int64), dim=1) > 0
    seen_before = torch.cat([torch.zeros((G, 1, N), dtype=torch.bool), seen_before[:, :-1]], dim=1)
    unknown_id_labels = id_labels.masked_fill(~seen_before, K)
    times = torch.arange(T, dtype=torch.int64)[None, :, None].expand(G, T, N).clone()
    return MOTIPClipTargets(trajectory_id_labels=id_labels.clone(), trajectory_masks=traj_masks,
                            trajectory_ann_idxs=traj_ann_idxs, trajectory_times=times,
                            unknown_id_labels=unknown_id_labels, unknown_masks=unk_masks,
                            unknown_ann_idxs=ann_idxs.clone(), unknown_times=times.clone())


def gather_clip_features(targets: Sequence[MOTIPClipTargets],
                         frame_features: Sequence[Sequence[Tensor]]) -> dict[str, Tensor]:
    """Batch the clips' targets and pick each token's feature (official ``collate_fn`` + ``prepare_for_motip``).

    Args:
        targets: one :class:`MOTIPClipTargets` per clip (same G and T for all clips).
        frame_features: ``frame_features[b][t]`` ``(num_gt of frame t of clip b, C)``; row i is GT row i's feature
            (the matched query's last decoder embedding).

    Returns:
        dict of ``(B, G, T, N[, C])`` tensors on the features' device, N = the largest N of the batch; keys
        ``trajectory_features``, ``trajectory_id_labels``, ``trajectory_times``, ``trajectory_masks``,
        ``unknown_features``, ``unknown_id_labels``, ``unknown_times``, ``unknown_masks``. Padding columns (official
        collate): labels -1, masks True, times t, features 0; masked tokens have zero features. Gradients flow to
        ``frame_features``.
    """
    if len(targets) == 0:
        raise ValueError('gather_clip_features: no clips given')
    if len(frame_features) != len(targets):
        raise ValueError(f'gather_clip_features: {len(targets)} clips of targets but {len(frame_features)} clips of '
                         'frame features')
    G, T, _ = targets[0].trajectory_id_labels.shape
    first = None
    for b, clip in enumerate(frame_features):
        if len(clip) != T:
            raise ValueError(f'gather_clip_features: clip {b} has {len(clip)} frames of features, expected T={T}')
        for t, feats in enumerate(clip):
            if feats.dim() != 2:
                raise ValueError(f'gather_clip_features: frame_features[{b}][{t}] must be (num_gt, C), got '
                                 f'{tuple(feats.shape)}')
            first = feats if first is None else first
            if feats.shape[1] != first.shape[1]:
                raise ValueError(f'gather_clip_features: frame_features[{b}][{t}] has {feats.shape[1]} channels, '
                                 f'expected {first.shape[1]}')
    C, device, dtype = first.shape[1], first.device, first.dtype
    max_n = max(tgt.trajectory_id_labels.shape[2] for tgt in targets)
    out: dict[str, list[Tensor]] = {key: [] for key in (
        'trajectory_features', 'trajectory_id_labels', 'trajectory_times', 'trajectory_masks',
        'unknown_features', 'unknown_id_labels', 'unknown_times', 'unknown_masks')}
    for b, tgt in enumerate(targets):
        shape = tgt.trajectory_id_labels.shape
        fields = {k: getattr(tgt, k) for k in MOTIPClipTargets.__dataclass_fields__}
        for key, value in fields.items():
            if value.shape != shape:
                raise ValueError(f'gather_clip_features: targets[{b}].{key} has shape {tuple(value.shape)}, expected '
                                 f'{tuple(shape)} like trajectory_id_labels')
        if shape[:2] != (G, T):
            raise ValueError(f'gather_clip_features: targets[{b}] has (G, T) = {tuple(shape[:2])}, expected {(G, T)} '
                             'like targets[0]')
        pad = max_n - shape[2]
        for kind in ('trajectory', 'unknown'):
            masks = fields[f'{kind}_masks'].to(device)
            ann_idxs = fields[f'{kind}_ann_idxs'].to(device)
            per_frame = []
            for t in range(T):
                feats = frame_features[b][t].to(dtype)
                rows = feats.shape[0]
                idx, msk = ann_idxs[:, t], masks[:, t]  # (G, N)
                bad = ~msk & ((idx < 0) | (idx >= rows))
                if bool(bad.any()):
                    raise ValueError(f'gather_clip_features: targets[{b}].{kind}_ann_idxs at frame {t} point at GT '
                                     f'rows {idx[bad].unique().tolist()}, but frame_features[{b}][{t}] has {rows} rows')
                # A zero row appended at index `rows` is what masked tokens pick.
                table = torch.cat([feats, feats.new_zeros(1, C)], dim=0)
                per_frame.append(table[idx.masked_fill(msk, rows)])  # (G, N, C)
            feats = torch.stack(per_frame, dim=1)  # (G, T, N, C)
            times = torch.arange(T, dtype=torch.int64, device=device)[None, :, None]
            out[f'{kind}_features'].append(F.pad(feats, (0, 0, 0, pad)))
            out[f'{kind}_id_labels'].append(F.pad(fields[f'{kind}_id_labels'].to(device), (0, pad), value=-1))
            out[f'{kind}_masks'].append(F.pad(masks, (0, pad), value=True))
            out[f'{kind}_times'].append(torch.cat(
                [fields[f'{kind}_times'].to(device), times.expand(G, T, pad)], dim=2))
    return {key: torch.stack(values) for key, values in out.items()}


def id_loss(logits: Tensor, labels: Tensor, masks: Tensor) -> Tensor:
    """The official ``IDCriterion`` (cross-entropy) on ``(B, G, T, N, K + 1)`` logits.

    Frames ``t >= 1`` only (frame 0 has no trajectory before it), unmasked unknowns only; the summed cross-entropy is
    divided by the number of such tokens, averaged over the distributed ranks and clamped to at least 1 (so every
    rank divides by the same count). The loss weight is applied by the caller.
    """
    if logits.dim() != 5 or tuple(labels.shape) != tuple(logits.shape[:4]) or labels.shape != masks.shape:
        raise ValueError(f'id_loss: expected logits (B, G, T, N, C) and labels / masks (B, G, T, N), got '
                         f'{tuple(logits.shape)}, {tuple(labels.shape)}, {tuple(masks.shape)}')
    if masks.dtype != torch.bool:
        raise TypeError(f'id_loss: masks must be bool (True = absent), got {masks.dtype}')
    keep = ~masks[:, :, 1:]
    flat_logits = logits[:, :, 1:][keep]
    flat_labels = labels[:, :, 1:][keep].to(device=logits.device, dtype=torch.long)
    num_classes = logits.shape[-1]
    if flat_labels.numel() and (int(flat_labels.min()) < 0 or int(flat_labels.max()) >= num_classes):
        raise ValueError(f'id_loss: unmasked labels must lie in [0, {num_classes}), got values in '
                         f'[{int(flat_labels.min())}, {int(flat_labels.max())}]')
    loss = F.cross_entropy(flat_logits, flat_labels, reduction='none').sum()
    count = torch.tensor([float(len(flat_labels))], device=logits.device)
    all_reduce(count)  # sum over ranks; a no-op outside distributed runs
    count = max(float(count.item()) / get_world_size(), 1.0)
    return loss / count
