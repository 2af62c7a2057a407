"""Deterministic stand-ins for what a trained network would give a tracker, for benchmarks and golden tests without
a GPU: identity-consistent appearance features of simulated detections, and MOTIP ID-module weights that track by
feature similarity. Every draw is numpy's ``default_rng`` in float64, seeded with ``zlib.crc32`` of a text (the
weights: with a key's index), no global random state; these streams depend neither on the CPU nor on the kernels
torch picks (see :func:`deterministic_motip_weights`), so the official code fed the same arrays in a scratch
environment sees exactly what the port sees, on every machine.
"""
from __future__ import annotations

import zlib

import numpy as np
import torch

NOISE_STD = 0.6  # a matched detection's feature: its identity's base + NOISE_STD * noise
MATCH_IOU = 0.5  # a detection takes the identity of the ground-truth box it overlaps most, from this IoU on


def crc_seed(text: str) -> int:
    """The seed of a named random stream: crc32 of the UTF-8 text."""
    return zlib.crc32(text.encode('utf-8'))


def iou_matrix_ltwh(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Plain IoU (no +1) between ltwh boxes ``a (n, 4)`` and ``b (m, 4)``."""
    ax2, ay2 = a[:, 0] + a[:, 2], a[:, 1] + a[:, 3]
    bx2, by2 = b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]
    iw = np.clip(np.minimum(ax2[:, None], bx2[None]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    ih = np.clip(np.minimum(ay2[:, None], by2[None]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    inter = iw * ih
    union = (a[:, 2] * a[:, 3])[:, None] + (b[:, 2] * b[:, 3])[None] - inter
    return inter / np.maximum(union, 1e-12)


def simulated_features(video: str, frames: np.ndarray, boxes: np.ndarray, gt_frames: np.ndarray,
                       gt_ids: np.ndarray, gt_boxes: np.ndarray, feature_dim: int = 16,
                       frame_key: str = '{video}:{frame}', identity_key: str = '{video}:{gid}') -> np.ndarray:
    """L2-normalised ``(n, feature_dim)`` appearance features of detections (``frames``, ltwh ``boxes``, file order)
    that follow the ground truth's identities.

    Each detection is matched to the ground-truth box of its frame with the highest IoU (:func:`iou_matrix_ltwh`,
    first on ties) if that IoU >= :data:`MATCH_IOU`. Per frame, ``default_rng(crc_seed(frame_key))`` draws
    ``standard_normal((detections in the frame, feature_dim))`` once (rows in file order); a matched detection gets
    ``base(gid) + NOISE_STD * noise_row`` with ``base(gid) = default_rng(crc_seed(identity_key)).standard_normal(
    feature_dim)``, an unmatched one ``noise_row`` alone; every vector is then L2-normalised. ``frame_key`` /
    ``identity_key`` are formatted with ``video``, ``frame`` and ``gid`` (an integer).
    """
    feats = np.zeros((len(frames), feature_dim))
    bases: dict[int, np.ndarray] = {}
    for frame in np.unique(frames):
        rows = np.flatnonzero(frames == frame)  # file order (the reader keeps it)
        noise = np.random.default_rng(crc_seed(frame_key.format(video=video, frame=int(frame)))).standard_normal(
            (len(rows), feature_dim))
        g = np.flatnonzero(gt_frames == frame)
        best = np.full(len(rows), -1)
        if len(g):
            iou = iou_matrix_ltwh(boxes[rows], gt_boxes[g])
            arg = iou.argmax(axis=1)
            ok = iou[np.arange(len(rows)), arg] >= MATCH_IOU
            best[ok] = gt_ids[g[arg[ok]]]
        for k, row in enumerate(rows):
            if best[k] >= 0:
                gid = int(best[k])
                if gid not in bases:
                    seed = crc_seed(identity_key.format(video=video, gid=gid))
                    bases[gid] = np.random.default_rng(seed).standard_normal(feature_dim)
                feats[row] = bases[gid] + NOISE_STD * noise[k]
            else:
                feats[row] = noise[k]
    return feats / np.linalg.norm(feats, axis=1, keepdims=True)


def deterministic_motip_weights(module: torch.nn.Module, rule: str) -> None:
    """Load the rule's weights into a MOTIP ID module (the official TrajectoryModeling / IDDecoder or the port's:
    state-dict names and shapes are the same). The i-th state-dict key in sorted order draws ``noise =
    numpy.random.default_rng(i).standard_normal(shape)`` (float64), rounded once to float32. Not torch's float32
    ``randn``: its normal sampler takes a vectorised path under AVX2 / AVX-512 and a scalar one under
    ``ATEN_CPU_CAPABILITY=default`` that differ in the last bits; numpy's generator is plain C that no CPU feature
    changes, and the rest of the arithmetic below is float32 ``+``, ``*``, ``/`` (exactly rounded), so the weights
    are bitwise the same on every CPU. Keys sharing one tensor (the shared ``embed_to_word_layers``) take the value
    of the first of them in sorted order. LayerNorm weights (1-D ``*norm*.weight``) are ``1 + s * noise``, the rest
    ``s * noise``, with:

    * ``rule='random'``: ``s = 0.05`` (an untrained decoder: arbitrary but deterministic ID decisions);
    * ``rule='tracking'``: ``s = 0.01`` plus a hand-made decoder that tracks by feature similarity (feature_dim =
      id_dim = 256, head_dim 32): ``word_to_embed.weight = noise`` (std 1 word embeddings ``e_j``);
      ``embed_to_word_layers.*.weight = word_to_embed.weight.T / 64 + s * noise``; each ``cross_attn_layers.L``:
      ``in_proj_weight`` adds ``1.4 I`` on the feature block of the query and key rows (``[0:256, 0:256]``,
      ``[512:768, 0:256]``) and ``I`` from the trajectory token's id half to the first 256 value rows
      (``[1024:1280, 256:512]``), ``out_proj.weight`` adds ``2 I`` at ``[256:512, 0:256]`` (the attended id
      embeddings go to the id half); ``rel_pos_embeds[l, d, h]`` adds ``-0.1 d`` (recent frames first). Each of
      the 8 feature heads thus attends to the trajectory tokens whose features are similar and copies their id
      embedding: a detection of a tracked identity reads its label, an unknown one keeps the newborn word.
    """
    if rule not in ('random', 'tracking'):
        raise ValueError(f"deterministic_motip_weights: rule must be 'random' or 'tracking', got {rule!r}")
    scale = 0.05 if rule == 'random' else 0.01
    state = module.state_dict()
    names = sorted(state)

    def noise_of(name: str) -> torch.Tensor:
        draw = np.random.default_rng(names.index(name)).standard_normal(tuple(state[name].shape))
        return torch.from_numpy(draw.astype(np.float32))

    values, first_of = {}, {}
    for name in names:
        tensor = state[name]
        noise = noise_of(name)
        value = scale * noise
        if tensor.dim() == 1 and 'norm' in name and name.endswith('weight'):
            value = value + 1.0
        if rule == 'tracking':
            eye = torch.eye(256)
            if name == 'word_to_embed.weight':
                value = noise
            elif name.startswith('embed_to_word_layers.'):
                value = noise_of('word_to_embed.weight').T / 64 + value
            elif name.startswith('cross_attn_layers.') and name.endswith('in_proj_weight'):
                value[0:256, 0:256] += 1.4 * eye
                value[512:768, 0:256] += 1.4 * eye
                value[1024:1280, 256:512] += eye
            elif name.startswith('cross_attn_layers.') and name.endswith('out_proj.weight'):
                value[256:512, 0:256] += 2.0 * eye
            elif name == 'rel_pos_embeds':
                value += -0.1 * torch.arange(tensor.shape[1], dtype=torch.float32)[None, :, None]
        ptr = tensor.data_ptr()
        values[name] = values[first_of[ptr]] if ptr in first_of else value
        first_of.setdefault(ptr, name)
    module.load_state_dict(values, strict=True)


def detr_queries(data_root: str, video: str, key: str = 'motip', num_padding: int = 8,
                 padding_score_max: float = 0.28, feature_scale: float = 16.0, feature_dim: int = 256,
                 shuffle: bool = True, blackouts: bool = True, blackout_first: bool = False,
                 num_frames: int | None = None) -> dict:
    """Deformable-DETR-like outputs of one video of a simulated-detection root (``data_root/gt/<video>`` and
    ``data_root/dets/<video>.txt``, as AnimalTrack-10fps-sim), for the end-to-end trackers (MOTIP, TCEI).

    Per frame ``1 .. seqLength`` (or ``.. num_frames``): the frame's detections (file order) and ``num_padding``
    padding queries. Detection features: :func:`simulated_features` (keys ``{key}:{video}:{frame}`` and
    ``{key}:{video}:{gid}``) times ``feature_scale``. Padding (``default_rng(crc_seed('{key}-pad:<video>:<frame>'))``,
    in this order): normalised centre uniform(0.05, 0.95), size uniform(0.02, 0.2), score uniform(0,
    ``padding_score_max``), a unit normal feature times ``feature_scale``. ``blackouts``: frames with ``frame % 25
    == 13`` (and frames 1-2 with ``blackout_first``) have every score times 0.3. ``shuffle``: the queries in the order
    of ``default_rng(crc_seed('{key}-order:<video>:<frame>')).permutation``.

    Returns ``dict(image_hw, frames)``; ``frames[t]``: ``logits (Q, 1)`` (logit of the score clipped to [1e-4,
    1 - 1e-4]), ``boxes (Q, 4)`` normalised cx cy w h, ``features (Q, feature_dim)``, all float32 (what the official
    ``part='detr'`` returns), ``scores`` = float32 ``sigmoid(logits)`` as float64 and ``xyxy`` = the float64 pixel
    boxes of the float32 normalised boxes (what the port is fed).
    """
    import os.path as osp

    from vastmat.datasets.formats import read_detections, read_gt, read_seqinfo
    info = read_seqinfo(osp.join(data_root, 'gt', video, 'seqinfo.ini'))
    width, height, length = info['imWidth'], info['imHeight'], info['seqLength']
    dets = read_detections(osp.join(data_root, 'dets', f'{video}.txt'))
    gt = read_gt(osp.join(data_root, 'gt', video, 'gt', 'gt.txt'))
    feats = simulated_features(video, dets.frames, dets.boxes, gt.frames, gt.ids, gt.boxes, feature_dim,
                               frame_key=key + ':{video}:{frame}', identity_key=key + ':{video}:{gid}') * feature_scale
    frames = []
    for t in range(1, (length if num_frames is None else min(num_frames, length)) + 1):
        rows = np.flatnonzero(dets.frames == t)
        ltwh = dets.boxes[rows]
        cxcywh = np.column_stack([(ltwh[:, 0] + ltwh[:, 2] / 2) / width, (ltwh[:, 1] + ltwh[:, 3] / 2) / height,
                                  ltwh[:, 2] / width, ltwh[:, 3] / height])
        rng = np.random.default_rng(crc_seed(f'{key}-pad:{video}:{t}'))
        pad_boxes = np.column_stack([rng.uniform(0.05, 0.95, (num_padding, 2)),
                                     rng.uniform(0.02, 0.2, (num_padding, 2))])
        pad_scores = rng.uniform(0.0, padding_score_max, num_padding)
        pad_feats = rng.standard_normal((num_padding, feature_dim))
        pad_feats = pad_feats / np.linalg.norm(pad_feats, axis=1, keepdims=True) * feature_scale
        boxes = np.concatenate([cxcywh, pad_boxes])
        scores = np.concatenate([dets.scores[rows], pad_scores])
        features = np.concatenate([feats[rows], pad_feats])
        if (blackouts and t % 25 == 13) or (blackout_first and t <= 2):
            scores = scores * 0.3
        order = (np.random.default_rng(crc_seed(f'{key}-order:{video}:{t}')).permutation(len(scores)) if shuffle
                 else np.arange(len(scores)))
        logits = torch.logit(torch.from_numpy(np.clip(scores[order], 1e-4, 1 - 1e-4))).float()[:, None]
        boxes32 = boxes[order].astype(np.float32)
        b = boxes32.astype(np.float64)
        xyxy = np.column_stack([(b[:, 0] - 0.5 * b[:, 2]) * width, (b[:, 1] - 0.5 * b[:, 3]) * height,
                                (b[:, 0] + 0.5 * b[:, 2]) * width, (b[:, 1] + 0.5 * b[:, 3]) * height])
        frames.append(dict(logits=logits.numpy(), boxes=boxes32, features=features[order].astype(np.float32),
                           scores=logits.sigmoid()[:, 0].numpy().astype(np.float64), xyxy=xyxy))
    return dict(image_hw=(height, width), frames=frames)
