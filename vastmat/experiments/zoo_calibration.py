"""The zoo's test thresholds: the rule, the grid, the search and its record.

The rule: each tiny zoo model declares its official score thresholds (``zoo_official_thresholds``) and is tested at
the official ones times the scale of :data:`THRESHOLD_SCALES` that tracks the protocol's dev videos (train videos held
for tuning) best, at its last checkpoint; never chosen on the test videos. Minutes of CPU training leave each model's
scores less confident by its own amount, which differs between models and between runs (the scales each run chose: the
zoo's JSON and docs/zoo.md). A config may give a threshold a grid of its own (``zoo_threshold_scales``: MOTIP's
detection threshold, whose config says why); the zoo then tries each of its scales with each of this grid's.

The grid (:func:`threshold_grid`, its points named by :func:`grid_label` and :func:`grid_text`) and the choice
(:func:`best_label`, :func:`calibration_record`) are pure; :func:`calibrate_thresholds` runs the tests they choose
from.
"""
from __future__ import annotations

import copy
import itertools
import os.path as osp
from typing import Callable, Sequence

from mmengine.config import Config

from vastmat.models.mot.frame_outputs import keep_frame_outputs

from .zoo_testing import test_tracking_model
from .zoo_training import Training

THRESHOLD_SCALES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def threshold_grid(cfg: Config, scales: Sequence[float], own_grids: bool = True) -> list[dict[str, float]]:
    """The calibration grid of a tiny zoo config, each point ``{dotted key: scale}`` over the score thresholds it
    declares in ``zoo_official_thresholds`` (empty when it declares none). They share one scale of ``scales``,
    except a threshold with a grid of its own in ``zoo_threshold_scales`` (``{key: scales}``; ignored unless
    ``own_grids``), which takes each of its scales with each of the others'."""
    official = cfg.get('zoo_official_thresholds') or {}
    own = dict(cfg.get('zoo_threshold_scales') or {}) if own_grids else {}
    unknown = sorted(set(own) - set(official))
    if unknown:
        raise KeyError(f'zoo_threshold_scales: {", ".join(unknown)} not in zoo_official_thresholds '
                       f'({", ".join(official) or "none declared"})')
    shared = [key for key in official if key not in own]
    axes = [[{key: scale for key in shared} for scale in scales]] if shared else []
    axes += [[{key: scale} for scale in own[key]] for key in official if key in own]
    points = [{key: scale for part in point for key, scale in part.items()} for point in itertools.product(*axes)]
    return [{key: point[key] for key in official} for point in points]


def calibration_grid(cfg: Config, split: str | None, scales: Sequence[float],
                     own_grids: bool = True) -> list[dict[str, float]]:
    """The points the zoo tests ``cfg`` at on the ``split`` videos before its test (:func:`threshold_grid`); none
    where nothing is calibrated (``split`` None: the configs' own thresholds) or the config declares no official
    thresholds."""
    if split is None or not cfg.get('zoo_official_thresholds'):
        return []
    return threshold_grid(cfg, scales, own_grids)


def _own_scales(point: dict[str, float]) -> list[tuple[str, float]] | None:
    """``[(the key's last part, scale), ...]`` of a grid point whose thresholds differ in scale; None where all share
    one."""
    if len(set(point.values())) <= 1:
        return None
    return [(key.rsplit('.', 1)[-1], scale) for key, scale in point.items()]


def grid_label(point: dict[str, float]) -> str:
    """A grid point's name (zoo.json, folders): its scale where all thresholds share one (``0.8``), else each
    threshold's last key part and scale (``det_thresh1.33_newborn_thresh0.8``)."""
    own = _own_scales(point)
    if own is None:
        return f'{next(iter(point.values()), 1.0):g}'
    return '_'.join(f'{name}{scale:.3g}' for name, scale in own)


def grid_text(point: dict[str, float]) -> str:
    """A grid point as the tables and logs show it: ``x0.8``, ``det_thresh x1.33, newborn_thresh x0.8``."""
    own = _own_scales(point)
    if own is None:
        return f'x{grid_label(point)}'
    return ', '.join(f'{name} x{scale:.3g}' for name, scale in own)


def scaled_thresholds(cfg: Config, point: dict[str, float]) -> dict[str, float]:
    """``{dotted key: official value x its scale in point}`` of the thresholds of ``zoo_official_thresholds``, for
    ``Config.merge_from_dict``."""
    return {key: round(value * point[key], 4) for key, value in (cfg.get('zoo_official_thresholds') or {}).items()}


def best_label(hota: dict[str, float], points: dict[str, dict[str, float]]) -> str:
    """The label of the grid point that tracks best: the highest HOTA; ties: the larger scales."""
    return max(hota, key=lambda label: (hota[label], tuple(points[label].values())))


def calibration_record(cfg: Config, split: str, hota: dict[str, float],
                       points: dict[str, dict[str, float]]) -> dict:
    """What the search chose and why, as zoo.json keeps it: ``dict(label, scales, thresholds, split, hota={label:
    HOTA})`` (``points``: each tested label's grid point)."""
    best = best_label(hota, points)
    return dict(label=best, scales=points[best], thresholds=scaled_thresholds(cfg, points[best]), split=split,
                hota=hota)


def calibration_text(record: dict, points: dict[str, dict[str, float]], num_scales: int) -> str:
    """The record as the run's log line: the chosen point and each point's HOTA, or the range of a crossed grid
    (more points than ``num_scales``)."""
    hota, best = record['hota'], record['label']
    if len(hota) <= num_scales:
        scores = ', '.join(f'{grid_text(points[label])} {100 * h:.1f}' for label, h in hota.items())
    else:  # a crossed grid: its range (every point's HOTA is in zoo.json)
        scores = (f'{100 * hota[best]:.1f}, the {len(hota)} points {100 * min(hota.values()):.1f} to '
                  f'{100 * max(hota.values()):.1f}')
    return (f'thresholds {grid_text(points[best])} of the official ones '
            f'(HOTA on the {record["split"]} videos: {scores})')


def calibrate_thresholds(cfg: Config, training: Training, name: str, data_root: str, protocol: str, preset: str,
                         split: str | None, scales: Sequence[float], own_grids: bool = True,
                         log: Callable[[str], None] = print) -> dict | None:
    """Test tracker ``name`` (``cfg``) at every point of its :func:`calibration_grid` on the protocol's ``split``
    videos at the last checkpoint of ``training`` (each run under ``training.work_dir/tests/<name>/<preset>/
    calibration``, reused when done) and keep the best: its :func:`calibration_record`, logged; None where the grid
    is empty."""
    grid = calibration_grid(cfg, split, scales, own_grids)
    if not grid:
        return None
    from vastmat.datasets.sequences import read_split
    videos = read_split(data_root, protocol, split)
    iteration, checkpoint = training.checkpoints[-1]
    hota, points = {}, {}
    with keep_frame_outputs():  # one checkpoint on the same frames at every point (MOTIP: its DETR runs once)
        for point in grid:
            label = grid_label(point)
            scaled = copy.deepcopy(cfg)
            scaled.merge_from_dict(scaled_thresholds(cfg, point))
            run_dir = osp.join(training.work_dir, 'tests', name, preset, 'calibration', f'{split}_x{label}',
                               f'iter_{iteration}')
            metrics = test_tracking_model(scaled, checkpoint, videos, run_dir, preset, split=split)
            hota[label], points[label] = metrics['COMBINED']['HOTA'], point
    record = calibration_record(cfg, split, hota, points)
    log(f'  {name}: {calibration_text(record, points, len(scales))}')
    return record
