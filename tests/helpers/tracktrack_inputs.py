"""Deterministic inputs for the TrackTrack golden tests (``tests/fixtures/tracktrack_official``).

The official TrackTrack tracker (kamkyu94/TrackTrack, ``3. Tracker``) consumes, per video, YOLOX detections at two NMS
levels (0.80 and 0.95) with FastReID features appended, and a precomputed camera-motion (GMC) file. The shared
simulated AnimalTrack data (``shared/data/AnimalTrack-10fps-sim``) has one detection set and no images, so this
module derives everything else from it, deterministically (numpy ``Generator`` seeded by ``zlib.crc32``, no global
state). The golden files were made by feeding exactly these files to the official code (see the fixtures'
README.md); a port's test writes them again with :func:`write_inputs` and feeds them the same way.

Files written under ``out_dir`` (``<video>`` = name of ``dets/<video>.txt`` in the data root):

``dets/<video>.txt``
    The shared det rows in file order, their ten det.txt columns ``frame,-1,left,top,width,height,score,-1,-1,-1``
    copied as text (the original tokens), then ``feature_dim`` feature columns (``%.6f``): a simulated ReID
    feature. Each detection is matched to the ground-truth box of its frame with the highest IoU (plain IoU of the
    ltwh boxes, no +1; first on ties) if that IoU >= 0.5. A frame generator
    ``np.random.default_rng(zlib.crc32(f'{video}:{frame}'.encode()))`` draws once per frame
    ``standard_normal((n_dets_in_frame, feature_dim))`` (rows in file order). A matched detection gets
    ``base(gt_id) + 0.6 * noise_row`` with ``base(gt_id) = default_rng(crc32(f'{video}:{gt_id}')).standard_normal(
    feature_dim)`` (gt_id printed as an integer); an unmatched one gets ``noise_row`` alone. Every vector is
    L2-normalised, then written with 6 decimals (the consumer uses the parsed 6-decimal values).
``dets95/<video>.txt``
    The NMS-0.95 set (the source of TrackTrack's "deleted detections"): every row of ``dets/`` in order; right after
    each row whose index within its frame (0-based, file order) is a multiple of 4 and whose score is > 0.3, an extra
    row with left + 0.15 * width (written ``%.4f``), the same top/width/height tokens, score ``round(score * 0.9, 4)``
    (written ``%.4f``) and the same feature tokens.
``gmc/GMC-<video>.txt``
    The official GMC file format (``trackers/cmc/GMC-*.txt``): one line per frame 1..seqLength, tab separated
    ``frame-1, a11, a12, a13, a21, a22, a23`` with a trailing tab, ``%.6f``. A synthetic similarity warp: rotation
    ``theta = 0.0005 * sin(0.1 f)``, scale 1, translation ``(2 sin(0.05 f), 1.5 cos(0.07 f))`` px; the identity at
    frame 1. Row ``[cos, -sin, tx; sin, cos, ty]``; a value that rounds to -0.000000 is written 0.000000.

:func:`aflink_weights` gives deterministic random weights for the AFLink ``PostLinker`` (the official checkpoint
``AFLink_epoch20.pth`` is absent from the mirror), and :func:`load_frames` turns a written det file into the per-frame
arrays the official ``run.py`` feeds its tracker.
"""
from __future__ import annotations

import os
import os.path as osp

import numpy as np

from vastmat.datasets.formats import read_detections, read_gt, read_seqinfo
from vastmat.benchmarks.simulated_inputs import simulated_features  # noqa: F401

DEFAULT_DATA_ROOT = osp.normpath(osp.join(osp.dirname(osp.abspath(__file__)), '..', '..', '..', 'shared', 'data',
                                          'AnimalTrack-10fps-sim'))
EXTRA_EVERY = 4
EXTRA_MIN_SCORE = 0.3
EXTRA_SHIFT = 0.15
EXTRA_SCORE_FACTOR = 0.9


def det_tokens(det_path: str, line_numbers: np.ndarray) -> list[list[str]]:
    """The ten det.txt tokens (as text) of each given 1-based line of ``det_path``."""
    with open(det_path, encoding='utf-8') as f:
        lines = f.read().splitlines()
    tokens = [[t.strip() for t in lines[n - 1].split(',')][:10] for n in line_numbers]
    bad = [n for n, t in zip(line_numbers, tokens) if len(t) != 10]
    if bad:
        raise ValueError(f'{det_path}:{bad[0]}: expected ten det.txt columns')
    return tokens


def gmc_matrix(frame: int) -> np.ndarray:
    """The synthetic 2x3 warp of ``frame`` (1-based); the identity at frame 1."""
    if frame == 1:
        return np.eye(2, 3)
    theta = 0.0005 * np.sin(0.1 * frame)
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, 2.0 * np.sin(0.05 * frame)], [s, c, 1.5 * np.cos(0.07 * frame)]])


def _fmt(value: float, decimals: int) -> str:
    return f'{value + 0.0:.{decimals}f}'.replace('-0.' + '0' * decimals, '0.' + '0' * decimals)


def write_video_inputs(out_dir: str, video: str, data_root: str = DEFAULT_DATA_ROOT,
                       feature_dim: int = 16) -> dict:
    """Write the three input files of one video; returns ``{'dets', 'dets95', 'gmc', 'seqinfo'}`` paths."""
    det_path = osp.join(data_root, 'dets', f'{video}.txt')
    seqinfo_path = osp.join(data_root, 'gt', video, 'seqinfo.ini')
    seq_length = int(read_seqinfo(seqinfo_path)['seqLength'])
    dets = read_detections(det_path, seq_length)
    gt = read_gt(osp.join(data_root, 'gt', video, 'gt', 'gt.txt'), seq_length)
    tokens = det_tokens(det_path, dets.line_numbers)
    feats = simulated_features(video, dets.frames, dets.boxes, gt.frames, gt.ids, gt.boxes, feature_dim)
    feat_tokens = [[f'{v:.6f}' for v in row] for row in feats]

    paths = {'seqinfo': seqinfo_path}
    for sub in ('dets', 'dets95', 'gmc'):
        os.makedirs(osp.join(out_dir, sub), exist_ok=True)
    paths['dets'] = osp.join(out_dir, 'dets', f'{video}.txt')
    paths['dets95'] = osp.join(out_dir, 'dets95', f'{video}.txt')
    paths['gmc'] = osp.join(out_dir, 'gmc', f'GMC-{video}.txt')

    out, out95 = [], []
    index_in_frame, previous = 0, None
    for i, (tok, ftok) in enumerate(zip(tokens, feat_tokens)):
        line = ','.join(tok + ftok)
        out.append(line)
        out95.append(line)
        frame = int(dets.frames[i])
        index_in_frame = index_in_frame + 1 if frame == previous else 0
        previous = frame
        score = float(dets.scores[i])
        if index_in_frame % EXTRA_EVERY == 0 and score > EXTRA_MIN_SCORE:
            left, width = float(dets.boxes[i, 0]), float(dets.boxes[i, 2])
            extra = list(tok)
            extra[2] = f'{round(left + EXTRA_SHIFT * width, 4):.4f}'
            extra[6] = f'{round(score * EXTRA_SCORE_FACTOR, 4):.4f}'
            out95.append(','.join(extra + ftok))
    for path, rows in ((paths['dets'], out), (paths['dets95'], out95)):
        with open(path, 'w', encoding='utf-8') as f:
            f.write(''.join(r + '\n' for r in rows))
    with open(paths['gmc'], 'w', encoding='utf-8') as f:
        for frame in range(1, seq_length + 1):
            m = gmc_matrix(frame)
            f.write(f'{frame - 1}\t' + ''.join(_fmt(v, 6) + '\t' for v in m.ravel()) + '\n')
    return paths


def list_videos(data_root: str = DEFAULT_DATA_ROOT) -> list[str]:
    """The videos of the data root (``dets/*.txt``), sorted."""
    return sorted(n[:-4] for n in os.listdir(osp.join(data_root, 'dets')) if n.endswith('.txt'))


def write_inputs(out_dir: str, videos: list[str] | None = None, feature_dim: int = 16,
                 data_root: str = DEFAULT_DATA_ROOT) -> dict:
    """Write ``dets/``, ``dets95/`` and ``gmc/`` for ``videos`` (default: all) under ``out_dir``.

    Returns:
        ``{video: {'dets': path, 'dets95': path, 'gmc': path, 'seqinfo': path}}``.
    """
    videos = list_videos(data_root) if videos is None else list(videos)
    return {v: write_video_inputs(out_dir, v, data_root, feature_dim) for v in videos}


def load_frames(det_path: str, seq_length: int) -> dict:
    """``{frame: (n, 6 + d) float64 array [x1, y1, x2, y2, score, 0, feats...] or None}`` for frames
    1..seq_length, rows in file order (x2 = left + width, y2 = top + height), as the official ``run.py`` gets them
    from its pickles."""
    dets = read_detections(det_path, seq_length)
    table = np.concatenate([dets.boxes[:, :2], dets.boxes[:, :2] + dets.boxes[:, 2:], dets.scores[:, None],
                            np.zeros((len(dets), 1)), dets.features], axis=1)
    return {f: (table[dets.frames == f] if (dets.frames == f).any() else None) for f in range(1, seq_length + 1)}


def aflink_weights(state_dict: dict) -> dict:
    """Deterministic random weights for an AFLink ``PostLinker`` state dict (official key names).

    For the keys in sorted order, one ``np.random.default_rng(0)`` draws ``standard_normal(shape)`` (float64, then
    cast to the reference tensor's dtype):

    * ``num_batches_tracked``: 0 (no draw);
    * ``running_mean``: ``0.1 * normal``; ``running_var``: ``1 + 0.1 * |normal|``;
    * a BatchNorm ``weight`` (a key whose module also has a ``running_mean``): ``1 + 0.1 * normal``;
    * any other ``bias``: ``0.1 * normal``;
    * any other ``weight`` (conv, linear): ``normal * sqrt(2 / fan_in)``, ``fan_in = prod(shape[1:])``.

    (Small ``0.05 * normal`` weights everywhere, BatchNorm scales included, make the network's output exactly
    constant in float32, p = 0.4825 for every pair, so AFLink would not depend on its input; these He-scaled
    weights give input-dependent costs, 1 - p in about 0.60..0.91 on the golden videos.)

    Returns:
        ``{key: torch.Tensor}`` with the shapes and dtypes of ``state_dict``.
    """
    import torch  # only this helper needs torch
    rng = np.random.default_rng(0)
    out = {}
    for key in sorted(state_dict):
        ref = state_dict[key]
        shape = tuple(ref.shape)
        is_bn = key.rsplit('.', 1)[0] + '.running_mean' in state_dict
        if key.endswith('num_batches_tracked'):
            value = np.zeros(shape)
        elif key.endswith('running_mean'):
            value = 0.1 * rng.standard_normal(shape)
        elif key.endswith('running_var'):
            value = 1.0 + 0.1 * np.abs(rng.standard_normal(shape))
        elif is_bn and key.endswith('.weight'):
            value = 1.0 + 0.1 * rng.standard_normal(shape)
        elif key.endswith('.bias'):
            value = 0.1 * rng.standard_normal(shape)
        else:
            value = rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))
        out[key] = torch.as_tensor(value).to(ref.dtype)
    return out
