"""Deterministic inputs for the JDE (FairMOT) tracker golden tests (``tests/fixtures/jde_official``).

FairMOT's ``JDETracker.update`` consumes, per frame, the network's decoded detections ``[x1, y1, x2, y2, score]``
and one L2-normalised identity embedding per detection. The shared data has detections without embeddings, so this
module adds a simulated embedding to every detection, deterministically (numpy ``Generator`` seeded by
``zlib.crc32``, no global state). The golden files were made by feeding exactly these files to the official
tracker (see the fixtures' README.md); the port's test writes them again with :func:`write_inputs` and reads them
through the project's cached-detection reader, so both sides see the same float64 values.

Sources (``SOURCES``): ``animaltrack`` (``shared/data/AnimalTrack-10fps-sim``: ``dets/<video>.txt`` and
``gt/<video>/``) and ``tud`` (``shared/data/MOT15-TUD/train``: ``<video>/det/det.txt`` and ``<video>/gt/``).

File written per video, ``<out_dir>/<video>.txt``: the source det rows in file order, their ten det.txt columns
``frame,-1,left,top,width,height,score,-1,-1,-1`` copied as text (the original tokens), then ``FEATURE_DIM`` feature
columns (``%.6f``). Each detection is matched to the ground-truth box of its frame with the highest IoU (plain IoU
of the ltwh boxes, no +1; the first on ties) if that IoU >= ``MATCH_IOU`` (0.5). One frame generator
``np.random.default_rng(zlib.crc32(f'jde:{video}:{frame}'.encode()))`` draws ``standard_normal((n, FEATURE_DIM))``
for the frame's ``n`` detections (rows in file order). A matched detection gets ``identity(gt_id) + NOISE_STD (0.6) *
noise_row``, with ``identity(gt_id) = default_rng(crc32(f'jde:{video}:id{gt_id}')).standard_normal(FEATURE_DIM)``
(gt_id printed as an integer); an unmatched one (a false positive) gets ``noise_row`` alone. Every vector is
L2-normalised and written with 6 decimals; the consumers use the parsed 6-decimal values as they are. The recipe
is :mod:`tracktrack_inputs`' (its constants), with these seeds.
"""
from __future__ import annotations

import os
import os.path as osp

import numpy as np

from vastmat.datasets.detections import VideoDetections, detection_file
from vastmat.datasets.formats import read_detections, read_gt, read_seqinfo

from . import tracktrack_inputs

SHARED_DATA = osp.normpath(osp.join(osp.dirname(osp.abspath(__file__)), '..', '..', '..', 'shared', 'data'))
# name: (ground-truth root with <video>/seqinfo.ini and <video>/gt/gt.txt, detection root)
SOURCES = {
    'animaltrack': (osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim', 'gt'),
                    osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim', 'dets')),
    'tud': (osp.join(SHARED_DATA, 'MOT15-TUD', 'train'), osp.join(SHARED_DATA, 'MOT15-TUD', 'train')),
}
FEATURE_DIM = 16


def simulated_features(video: str, frames: np.ndarray, boxes: np.ndarray, gt_frames: np.ndarray,
                       gt_ids: np.ndarray, gt_boxes: np.ndarray, feature_dim: int = FEATURE_DIM) -> np.ndarray:
    """L2-normalised ``(n, feature_dim)`` embeddings of detections (file order), as the module docstring says: the
    TrackTrack inputs' recipe with this module's seeds."""
    return tracktrack_inputs.simulated_features(video, frames, boxes, gt_frames, gt_ids, gt_boxes, feature_dim,
                                                frame_key='jde:{video}:{frame}', identity_key='jde:{video}:id{gid}')


def list_videos(source: str) -> list[str]:
    """The videos of a source (those with a seqinfo.ini), sorted."""
    gt_root = SOURCES[source][0]
    return sorted(v for v in os.listdir(gt_root) if osp.isfile(osp.join(gt_root, v, 'seqinfo.ini')))


def seq_length(source: str, video: str) -> int:
    return int(read_seqinfo(osp.join(SOURCES[source][0], video, 'seqinfo.ini'))['seqLength'])


def write_video_inputs(out_dir: str, source: str, video: str, feature_dim: int = FEATURE_DIM) -> str:
    """Write ``<out_dir>/<video>.txt`` (the source's det rows plus simulated embeddings); returns its path."""
    gt_root, det_root = SOURCES[source]
    det_path = detection_file(det_root, video)
    length = seq_length(source, video)
    dets = read_detections(det_path, length)
    gt = read_gt(osp.join(gt_root, video, 'gt', 'gt.txt'), length)
    tokens = tracktrack_inputs.det_tokens(det_path, dets.line_numbers)
    feats = simulated_features(video, dets.frames, dets.boxes, gt.frames, gt.ids, gt.boxes, feature_dim)
    os.makedirs(out_dir, exist_ok=True)
    path = osp.join(out_dir, f'{video}.txt')
    with open(path, 'w', encoding='utf-8') as f:
        f.write(''.join(','.join(tok + [f'{v:.6f}' for v in row]) + '\n' for tok, row in zip(tokens, feats)))
    return path


def write_inputs(out_dir: str, source: str, videos: list[str] | None = None,
                 feature_dim: int = FEATURE_DIM) -> dict[str, str]:
    """Write the inputs of ``videos`` (default: all of the source) under ``out_dir``; ``{video: path}``."""
    videos = list_videos(source) if videos is None else list(videos)
    return {v: write_video_inputs(out_dir, source, v, feature_dim) for v in videos}


def load_frames(det_path: str, length: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per frame 1..length: ``(dets (n, 5) float64 [x1, y1, x2, y2, score], features (n, d) float64)`` in file
    order, read with the project's cached-detection reader (``x2 = left + width``), i.e. the values the port's
    ``TrackingFrame`` holds; this is what the official ``JDETracker.update`` was fed instead of the network's output.
    """
    reader = VideoDetections(det_path, length)
    out = []
    for frame in range(1, length + 1):
        d = reader.get(frame)
        out.append((np.column_stack([d.bboxes, d.scores]).reshape(-1, 5), d.features.reshape(len(d.scores), -1)))
    return out
