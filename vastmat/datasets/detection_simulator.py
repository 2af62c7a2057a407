"""Detections simulated from ground truth: a stand-in for cached detector output in association experiments.

Per ground-truth box (valid rows only): it is missed with a probability that grows for small boxes; otherwise its
box is jittered with noise proportional to its size and scored by the jittered box's quality (IoU with the truth)
plus noise; some get a duplicate (a second, lower-scored jittered box). False positives are added near animals
(displaced, resized copies of true boxes) and away from them (random boxes in the image), with low scores.
Deterministic for a seed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .formats import Detections, GroundTruth
from .statistics import pairwise_iou_ltwh


@dataclass
class SimulationConfig:
    """Rates and noise levels (defaults give detections in the range of a strong detector on animals)."""

    jitter: float = 0.05  # std of box edge noise, as a fraction of the box width / height
    miss_rate: float = 0.05  # miss probability of a large box
    small_miss_rate: float = 0.35  # extra miss probability of a tiny box, decaying with sqrt(area) / small_size
    small_size: float = 32.0  # px
    duplicate_rate: float = 0.03  # probability of a second box for a detected animal
    near_fp_per_frame: float = 0.3  # mean number of false positives near animals per frame
    far_fp_per_frame: float = 0.2  # mean number of false positives away from animals per frame
    score_noise: float = 0.05
    fp_score_range: tuple[float, float] = (0.05, 0.6)


def _jitter(rng: np.random.Generator, boxes: np.ndarray, scale: float) -> np.ndarray:
    """ltwh boxes with each edge moved by N(0, scale * size)."""
    x1, y1 = boxes[:, 0], boxes[:, 1]
    x2, y2 = x1 + boxes[:, 2], y1 + boxes[:, 3]
    w, h = boxes[:, 2:3], boxes[:, 3:4]
    noise = rng.normal(0, scale, size=(len(boxes), 4)) * np.hstack([w, h, w, h])
    x1, y1, x2, y2 = x1 + noise[:, 0], y1 + noise[:, 1], x2 + noise[:, 2], y2 + noise[:, 3]
    out = np.column_stack([np.minimum(x1, x2), np.minimum(y1, y2), np.abs(x2 - x1), np.abs(y2 - y1)])
    out[:, 2:] = np.maximum(out[:, 2:], 1.0)
    return out


def simulate_detections(gt: GroundTruth, image_size: tuple[int, int], num_frames: int,
                        rng: np.random.Generator, cfg: SimulationConfig = SimulationConfig()) -> Detections:
    """Detections for one video (``image_size`` = (width, height); frames 1..num_frames)."""
    width, height = image_size
    rows = np.flatnonzero(gt.valid == 1)
    boxes, frames = gt.boxes[rows], gt.frames[rows]
    area = boxes[:, 2] * boxes[:, 3]
    p_miss = cfg.miss_rate + cfg.small_miss_rate * np.exp(-np.sqrt(area) / cfg.small_size)
    detected = rng.random(len(rows)) >= p_miss
    out_boxes, out_frames, out_scores = [], [], []

    def add(found_boxes: np.ndarray, truth: np.ndarray, found_frames: np.ndarray, offset: float) -> None:
        quality = pairwise_iou_ltwh(found_boxes, truth)
        score = np.clip(0.35 + 0.6 * quality - offset + rng.normal(0, cfg.score_noise, len(quality)), 0.01, 0.99)
        out_boxes.append(found_boxes)
        out_frames.append(found_frames)
        out_scores.append(score)

    add(_jitter(rng, boxes[detected], cfg.jitter), boxes[detected], frames[detected], 0.0)
    dup = detected & (rng.random(len(rows)) < cfg.duplicate_rate)
    add(_jitter(rng, boxes[dup], 2 * cfg.jitter), boxes[dup], frames[dup], 0.15)
    # false positives near animals: a true box displaced by 0.5-1.5 of its size and resized
    n_near = rng.poisson(cfg.near_fp_per_frame * num_frames) if len(rows) else 0
    if n_near:
        pick = rng.integers(0, len(rows), n_near)
        base = boxes[pick].copy()
        shift = rng.uniform(0.5, 1.5, size=(n_near, 2)) * rng.choice([-1, 1], size=(n_near, 2))
        base[:, :2] += shift * base[:, 2:]
        base[:, 2:] *= rng.uniform(0.6, 1.4, size=(n_near, 2))
        out_boxes.append(base)
        out_frames.append(frames[pick])
        out_scores.append(rng.uniform(*cfg.fp_score_range, n_near))
    # false positives away from animals: random boxes anywhere
    n_far = rng.poisson(cfg.far_fp_per_frame * num_frames)
    if n_far:
        size = rng.uniform(0.05, 0.3, size=(n_far, 2)) * np.array([width, height])
        corner = rng.uniform(0, 1, size=(n_far, 2)) * (np.array([width, height]) - size)
        out_boxes.append(np.hstack([corner, size]))
        out_frames.append(rng.integers(1, num_frames + 1, n_far))
        out_scores.append(rng.uniform(*cfg.fp_score_range, n_far))
    all_boxes = np.concatenate(out_boxes) if out_boxes else np.zeros((0, 4))
    all_frames = np.concatenate(out_frames).astype(np.int64) if out_frames else np.zeros(0, np.int64)
    all_scores = np.concatenate(out_scores) if out_scores else np.zeros(0)
    order = np.lexsort((-all_scores, all_frames))
    n = len(order)
    return Detections(all_frames[order], all_boxes[order], all_scores[order], np.zeros((n, 0)),
                      np.arange(1, n + 1))


def simulate_video_folder(data_root: str, name: str, out: str, stride: int = 1, seed: int = 0,
                          cfg: SimulationConfig | None = None) -> int:
    """Video ``name`` of ``data_root`` as a MOTChallenge folder ``out/<name>/``: ``det/det.txt`` simulated from its
    ground truth (at ``stride``), ``gt/gt.txt`` and ``seqinfo.ini`` at the same stride; returns the detections'
    count. One generator per video, seeded by ``seed`` and the video name: a video's detections do not depend on
    which other videos are simulated with it."""
    import os.path as osp
    import zlib

    from .formats import write_detections, write_gt, write_seqinfo
    from .sequences import load_sequence
    sequence = load_sequence(data_root, name, stride=stride)
    if sequence.gt is None:
        raise FileNotFoundError(f'{sequence.directory}/gt/gt.txt: missing; detections are simulated from it')
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    size = (sequence.info.get('imWidth') or 1920, sequence.info.get('imHeight') or 1080)
    dets = simulate_detections(sequence.gt, size, sequence.length, rng, cfg or SimulationConfig())
    write_detections(osp.join(out, name, 'det', 'det.txt'), dets)
    write_gt(osp.join(out, name, 'gt', 'gt.txt'), sequence.gt)
    write_seqinfo(osp.join(out, name, 'seqinfo.ini'), dict(sequence.info, imDir=osp.relpath(
        osp.join(sequence.directory, sequence.info.get('imDir', 'img1')), osp.join(out, name))))
    return len(dets)
