"""Rendering of animal-like shapes with exact annotations (used by :mod:`vastmat.datasets.demo_data`).

An animal is a textured ellipse body with a head, four legs and a tail, drawn at a position, size and heading; its
box is the bounding box of its visible pixels (what later-drawn animals cover is removed), so the annotations are
exact, and its visibility is visible / drawn pixels. Everything is deterministic for a seed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np


@dataclass
class Appearance:
    """How one animal looks: fur colour, stripes or spots, body proportions."""

    colour: np.ndarray
    striped: bool
    period: float
    pattern_angle: float
    aspect: float  # body width / length
    head: float  # head radius / length

    @classmethod
    def random(cls, rng: np.random.Generator) -> 'Appearance':
        return cls(rng.uniform(0, 255, size=3).astype(np.float32), bool(rng.random() < 0.5), rng.uniform(4, 12),
                   rng.uniform(0, np.pi), rng.uniform(0.35, 0.6), rng.uniform(0.14, 0.22))


def background(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """Smooth colour noise (grass, sand, water) at a few scales, float32 HxWx3."""
    image = np.empty((height, width, 3), np.float32)
    image[:] = rng.uniform(40, 200, size=3)
    for scale, amplitude in ((8, 40.0), (32, 20.0), (128, 8.0)):
        noise = rng.normal(0, 1, size=(max(2, height // scale * 4), max(2, width // scale * 4), 3))
        image += amplitude * cv2.resize(noise.astype(np.float32), (width, height), interpolation=cv2.INTER_CUBIC)
    return image


def animal_mask(height: int, width: int, look: Appearance, cx: float, cy: float, length: float,
                heading_deg: float, stride_phase: float = 0.0, stretch: float = 1.0) -> np.ndarray:
    """Boolean mask of one animal; ``stride_phase`` swings the legs, ``stretch`` deforms the body."""
    mask = np.zeros((height, width), np.uint8)
    body = (max(1, int(length * stretch / 2)), max(1, int(length * look.aspect / stretch / 2)))
    cv2.ellipse(mask, (int(round(cx)), int(round(cy))), body, heading_deg, 0, 360, 255, -1)
    theta = math.radians(heading_deg)
    direction = np.array([math.cos(theta), math.sin(theta)])
    normal = np.array([-direction[1], direction[0]])
    centre = np.array([cx, cy])

    def point(p: np.ndarray) -> tuple[int, int]:
        return int(round(p[0])), int(round(p[1]))

    cv2.circle(mask, point(centre + direction * length * stretch * 0.55), max(1, int(length * look.head)), 255, -1)
    for k, along in enumerate((-0.3, 0.3)):
        for side in (-1, 1):
            swing = 0.25 * math.sin(stride_phase + k * math.pi + (side > 0) * math.pi / 2)
            start = centre + direction * along * length + normal * side * body[1] * 0.6
            end = start + (normal * side + direction * swing) * length * 0.3
            cv2.line(mask, point(start), point(end), 255, max(1, int(length * 0.06)))
    tail = centre - direction * length * stretch * 0.5
    cv2.line(mask, point(tail), point(tail - direction * length * 0.25 + normal * length * 0.1 *
                                      math.sin(stride_phase)), 255, max(1, int(length * 0.04)))
    return mask > 0


def paint(image: np.ndarray, mask: np.ndarray, look: Appearance, cx: float, cy: float) -> None:
    """Fill ``mask`` with the animal's fur; the pattern moves with the animal."""
    ys, xs = np.nonzero(mask)
    if not len(xs):
        return
    u = (xs - cx) * math.cos(look.pattern_angle) + (ys - cy) * math.sin(look.pattern_angle)
    v = -(xs - cx) * math.sin(look.pattern_angle) + (ys - cy) * math.cos(look.pattern_angle)
    colour = np.broadcast_to(look.colour, (len(xs), 3)).copy()
    if look.striped:
        colour[np.sin(u * 2 * np.pi / look.period) > 0] *= 0.4
    else:
        spots = (np.sin(u * 2 * np.pi / look.period) * np.sin(v * 2 * np.pi / look.period)) > 0.55
        colour[spots] = 255 - look.colour
    image[ys, xs] = colour


def visible_boxes(masks: list[np.ndarray]) -> list[tuple[list[float] | None, float]]:
    """Box (ltwh) and visibility of each mask after the masks drawn later cover it; None when fully hidden."""
    out = []
    for k, mask in enumerate(masks):
        full = mask.sum()
        visible = mask.copy()
        for later in masks[k + 1:]:
            visible &= ~later
        ys, xs = np.nonzero(visible)
        if not len(xs) or full == 0:
            out.append((None, 0.0))
            continue
        box = [float(xs.min()), float(ys.min()), float(xs.max() + 1 - xs.min()), float(ys.max() + 1 - ys.min())]
        out.append((box, float(visible.sum() / full)))
    return out


def render_image(rng: np.random.Generator, height: int, width: int, max_animals: int,
                 min_size: float = 12.0) -> tuple[np.ndarray, list[list[float]]]:
    """One still image with 1..max_animals animals and their boxes (ltwh)."""
    image = background(rng, height, width)
    masks = []
    for _ in range(int(rng.integers(1, max_animals + 1))):
        look = Appearance.random(rng)
        length = rng.uniform(0.12, 0.35) * min(height, width)
        cx, cy = rng.uniform(0.1, 0.9) * width, rng.uniform(0.1, 0.9) * height
        mask = animal_mask(height, width, look, cx, cy, length, rng.uniform(0, 360), rng.uniform(0, 2 * np.pi))
        paint(image, mask, look, cx, cy)
        masks.append(mask)
    boxes = [box for box, _ in visible_boxes(masks) if box is not None and min(box[2], box[3]) >= min_size]
    image += rng.normal(0, 4, size=image.shape).astype(np.float32)
    return np.clip(image, 0, 255).astype(np.uint8), boxes
