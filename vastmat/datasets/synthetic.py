"""Rendered images of animal-like shapes with exact boxes, for smoke runs of detectors without real data.

Each animal is a textured ellipse body with a head, legs and a tail, rotated and scaled at random, over a smooth
textured background; its box is the bounding box of its rendered pixels (minus what later animals cover), so the
annotations are exact. Deterministic for a seed.
"""
from __future__ import annotations

import json
import os
import os.path as osp

import cv2
import numpy as np

from vastmat.utils.io import write_json_atomic

CLASSES = ('animal',)


def _background(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """Smooth colour noise (grass, sand, water) at a few scales."""
    base = rng.uniform(40, 200, size=3)
    image = np.empty((height, width, 3), np.float32)
    image[:] = base
    for scale, amplitude in ((8, 40.0), (32, 20.0), (128, 8.0)):
        noise = rng.normal(0, 1, size=(max(2, height // scale * 4), max(2, width // scale * 4), 3))
        image += amplitude * cv2.resize(noise.astype(np.float32), (width, height), interpolation=cv2.INTER_CUBIC)
    return image


def _animal_mask(rng: np.random.Generator, height: int, width: int, cx: float, cy: float,
                 length: float) -> np.ndarray:
    """A body ellipse, a head, four legs and a tail, rotated by a random angle."""
    mask = np.zeros((height, width), np.uint8)
    angle = rng.uniform(0, 360)
    aspect = rng.uniform(0.35, 0.6)
    axes = (int(length / 2), max(2, int(length * aspect / 2)))
    cv2.ellipse(mask, (int(cx), int(cy)), axes, angle, 0, 360, 255, -1)
    theta = np.deg2rad(angle)
    direction = np.array([np.cos(theta), np.sin(theta)])
    normal = np.array([-direction[1], direction[0]])
    head = np.array([cx, cy]) + direction * length * 0.55
    cv2.circle(mask, tuple(int(v) for v in head), max(2, int(length * rng.uniform(0.14, 0.22))), 255, -1)
    for along in (-0.3, 0.3):
        for side in (-1, 1):
            start = np.array([cx, cy]) + direction * along * length + normal * side * axes[1] * 0.6
            end = start + normal * side * length * rng.uniform(0.2, 0.35)
            cv2.line(mask, tuple(int(v) for v in start), tuple(int(v) for v in end), 255,
                     max(1, int(length * 0.06)))
    tail_start = np.array([cx, cy]) - direction * length * 0.5
    tail_end = tail_start - direction * length * 0.25 + normal * length * rng.uniform(-0.15, 0.15)
    cv2.line(mask, tuple(int(v) for v in tail_start), tuple(int(v) for v in tail_end), 255,
             max(1, int(length * 0.04)))
    return mask > 0


def _texture(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """Fur colour with stripes or spots."""
    colour = rng.uniform(0, 255, size=3).astype(np.float32)
    texture = np.empty((height, width, 3), np.float32)
    texture[:] = colour
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    if rng.random() < 0.5:
        period, angle = rng.uniform(4, 12), rng.uniform(0, np.pi)
        stripes = np.sin((xx * np.cos(angle) + yy * np.sin(angle)) * 2 * np.pi / period) > 0
        texture[stripes] *= 0.4
    else:
        spots = rng.normal(0, 1, size=(max(2, height // 6), max(2, width // 6))).astype(np.float32)
        spots = cv2.resize(spots, (width, height), interpolation=cv2.INTER_LINEAR) > 0.8
        texture[spots] = 255 - colour
    return texture


def render_image(rng: np.random.Generator, height: int, width: int, max_animals: int,
                 min_size: float = 12.0) -> tuple[np.ndarray, list[list[float]]]:
    """One image and its boxes (xywh, pixels) of 1..max_animals animals."""
    image = _background(rng, height, width)
    masks = []
    for _ in range(int(rng.integers(1, max_animals + 1))):
        length = rng.uniform(0.12, 0.35) * min(height, width)
        cx, cy = rng.uniform(0.1, 0.9) * width, rng.uniform(0.1, 0.9) * height
        mask = _animal_mask(rng, height, width, cx, cy, length)
        image[mask] = _texture(rng, height, width)[mask]
        masks = [previous & ~mask for previous in masks] + [mask]  # later animals occlude earlier ones
    boxes = []
    for mask in masks:
        ys, xs = np.nonzero(mask)
        if len(xs) == 0:
            continue
        x0, y0, x1, y1 = xs.min(), ys.min(), xs.max() + 1, ys.max() + 1
        if min(x1 - x0, y1 - y0) >= min_size:
            boxes.append([float(x0), float(y0), float(x1 - x0), float(y1 - y0)])
    image += rng.normal(0, 4, size=image.shape).astype(np.float32)
    return np.clip(image, 0, 255).astype(np.uint8), boxes


def make_detection_set(root: str, split: str, num_images: int = 8, height: int = 128, width: int = 160,
                       max_animals: int = 4, seed: int = 0) -> str:
    """Write ``root/images/<split>/*.jpg`` and ``root/annotations/<split>.json`` (COCO, one class ``animal``).

    Returns:
        The path of the annotation file.
    """
    if num_images < 1:
        raise ValueError(f'num_images must be >= 1, got {num_images}')
    rng = np.random.default_rng(seed)
    image_dir = osp.join(root, 'images', split)
    os.makedirs(image_dir, exist_ok=True)
    images, annotations = [], []
    for index in range(num_images):
        image, boxes = render_image(rng, height, width, max_animals)
        file_name = f'{index:06d}.jpg'
        cv2.imwrite(osp.join(image_dir, file_name), image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        images.append(dict(id=index + 1, file_name=file_name, height=height, width=width))
        for x, y, w, h in boxes:
            annotations.append(dict(id=len(annotations) + 1, image_id=index + 1, category_id=1,
                                    bbox=[x, y, w, h], area=w * h, iscrowd=0))
    coco = dict(images=images, annotations=annotations,
                categories=[dict(id=i + 1, name=name) for i, name in enumerate(CLASSES)])
    path = osp.join(root, 'annotations', f'{split}.json')
    write_json_atomic(coco, path)
    return path
