"""Building a tracking model from its config and running it on cached detections without a runner.

The fast path of the zoo benchmark and of parameter sweeps: the videos' detections are read once, each frame goes
straight to :meth:`TrackingByDetection.track_video` (the same per-frame steps as ``tools/test.py``), and the tracks
come back as arrays; scoring is :mod:`vastmat.evaluation`'s.
"""
from __future__ import annotations

import copy
import inspect
import os
import os.path as osp
from typing import Any, Iterator

import numpy as np
from mmengine.config import Config

from vastmat.datasets.detections import VideoDetections, cached_frames
from vastmat.datasets.formats import read_results, track_rows_to_results, write_results
from vastmat.datasets.sequences import load_sequence, parse_split_name, select_videos
from vastmat.structures.bbox import ltwh_to_xyxy
from vastmat.structures.tracking import TrackingFrame
from vastmat.utils.package_configs import config_dir


# the shipped configs (the checkout's configs/ in an editable install, the wheel's copy otherwise)
CONFIG_DIR = config_dir()


def load_config(config: str | Config, cfg_options: dict | None = None) -> Config:
    """A config from a file (or a copy of one), with ``cfg_options`` set (checked, a dict replacing the whole entry,
    as on the command line) and the plugins' ``vastmat_adjust_config`` applied, as ``tools/test.py`` does."""
    from vastmat.engine.config_options import apply_cfg_options
    from vastmat.plugins import adjust_config
    cfg = Config.fromfile(config) if isinstance(config, str) else Config(config.to_dict(), filename=config.filename)
    return adjust_config(apply_cfg_options(cfg, cfg_options))


MATCHER_DIR = osp.join(CONFIG_DIR, 'matchers')
OWN_MATCHER = 'original'  # the name of a tracker's own matcher (its config's, or its constructor's default)


def matcher_names() -> list[str]:
    """The names of the matcher fragments, ``configs/matchers/<name>.py``."""
    return sorted(osp.splitext(f)[0] for f in os.listdir(MATCHER_DIR) if f.endswith('.py'))


def matcher_fragment(name: str, **overrides: Any) -> dict:
    """The complete ``matcher`` dict of ``configs/matchers/<name>.py`` (``-`` and ``_`` alike), with ``overrides``."""
    from vastmat.utils.errors import UserInputError
    found = [n for n in matcher_names() if n.replace('-', '_') == name.replace('-', '_')]
    if not found:
        raise UserInputError(f'matcher {name!r}: no {osp.join(MATCHER_DIR, name + ".py")}; the fragments are '
                             f'{", ".join(matcher_names())}')
    return dict(Config.fromfile(osp.join(MATCHER_DIR, found[0] + '.py')).matcher.to_dict(), **overrides)


def swap_matcher(cfg: Config, name: str | None, **overrides: Any) -> Config:
    """A copy of ``cfg`` whose tracker (``model.tracker``) associates with the matcher ``name`` of
    ``configs/matchers/`` (replacing its own whole), then the tracker class's own keys for that matcher
    (``matcher_overrides``, see :class:`~vastmat.models.trackers.base_tracker.BaseTracker`), then ``overrides``.

    ``name`` ``'original'`` or None keeps the tracker's own matcher (``overrides`` update the config's). ``name`` may
    carry keys as the command line gives them, ``NAME,key=value,...`` (:func:`parse_matcher_option`; ``overrides``
    come after them). A tracker whose constructor takes no ``matcher`` is an error, and so is an unknown name (the
    message lists the fragments).
    """
    from vastmat.registry import MODELS
    from vastmat.utils.errors import UserInputError
    if name is not None and ',' in name:
        name, given = parse_matcher_option(name)
        overrides = {**given, **overrides}
    out = copy.deepcopy(cfg)
    if (name is None or name == OWN_MATCHER) and not overrides:
        return out
    label = osp.basename(cfg.filename) if cfg.filename else 'the config'
    tracker = cfg.get('model', {}).get('tracker')
    if not tracker or not tracker.get('type'):
        raise UserInputError(f'{label}: no model.tracker to swap a matcher into')
    cls = MODELS.get(tracker['type'])
    if cls is None:
        raise UserInputError(f'{label}: model.tracker.type={tracker["type"]!r} is not a registered tracker')
    if 'matcher' not in inspect.signature(cls.__init__).parameters:
        raise UserInputError(f'{label}: {tracker["type"]} takes no matcher (its association is its own)')
    if name is None or name == OWN_MATCHER:
        if not isinstance(tracker.get('matcher'), dict):
            raise UserInputError(f'{label}: {tracker["type"]} sets no matcher in its config for '
                                 f'{", ".join(overrides)} to override; name one of configs/matchers/')
        out.model.tracker.matcher.update(overrides)
        return out
    key = name.replace('-', '_')
    own = next((v for k, v in (getattr(cls, 'matcher_overrides', None) or {}).items()
                if k.replace('-', '_') == key), {})
    out.model.tracker.matcher = matcher_fragment(name, **{**own, **overrides})
    return out


def parse_matcher_option(text: str, flag: str = '--matcher') -> tuple[str, dict[str, Any]]:
    """``NAME[,key=value...]`` (``cda_fixed,alpha=0.25``) -> ``(NAME, {key: value})``, values read as
    ``--cfg-options`` values (:mod:`vastmat.utils.options`)."""
    from vastmat.utils.options import OptionError, parse_option, split_top_level
    try:
        name, *items = split_top_level(text)
    except OptionError as exc:
        raise OptionError(f'{flag} {exc}') from None
    if not name or '=' in name:
        raise OptionError(f'{flag} {text!r}: expected NAME[,key=value...] (NAME of configs/matchers/)')
    return name, dict(parse_option(item, f'{flag} {name}') for item in items)


def run_tracking_test(config: str | Config, data_root: str, det_root: str, work_dir: str,
                      cfg_options: dict | None = None, workers: int | None = None) -> dict:
    """``tools/test.py CONFIG --det-root DET_ROOT --data-root DATA_ROOT --work-dir WORK_DIR`` in this process: the
    config's test loop on cached detections by a runner, the metrics printed and written to
    ``work_dir/metrics.json`` (the evaluator writes ``metrics_per_video.json`` beside it); returns the metrics."""
    import argparse

    from vastmat.engine.cli import print_metrics_table
    from vastmat.engine.runner_builder import build_runner
    from vastmat.engine.tracking_options import apply_tracking_options
    from vastmat.utils.io import write_json_atomic
    cfg = load_config(config, cfg_options)
    cfg.launcher, cfg.work_dir = 'none', work_dir
    apply_tracking_options(cfg, argparse.Namespace(det_root=det_root, data_root=data_root, workers=workers))
    metrics = build_runner(cfg).test()
    if metrics:
        print_metrics_table(metrics, title=osp.basename(cfg.filename or work_dir))
        write_json_atomic(metrics, osp.join(work_dir, 'metrics.json'))
    return metrics


def init_model(config: str | Config, checkpoint: str | None = None, device: str = 'cpu',
               cfg_options: dict | None = None, detector: bool = True) -> Any:
    """Build the config's MOT model (``cfg.model``) in eval mode, with the checkpoint's weights (weights-only).

    Args:
        detector: False drops ``model.detector`` (cached detections feed the tracker).
    """
    from mmengine.registry import init_default_scope
    from mmengine.runner import load_checkpoint

    import vastmat.engine  # noqa: F401  (weights-only checkpoint loading)
    from vastmat.registry import MODELS

    cfg = load_config(config, cfg_options)
    init_default_scope(cfg.get('default_scope', 'vastmat'))
    model_cfg = cfg.model.copy()
    if not detector and 'detector' in model_cfg:
        model_cfg.detector = None
    model = MODELS.build(model_cfg)
    if checkpoint is not None:
        load_checkpoint(model, checkpoint, map_location='cpu', logger='current')
    model.cfg = cfg
    return model.to(device).eval()


def video_list(data_root: str, split: str | None = None, videos: list[str] | None = None) -> list[str]:
    """The videos to track: ``videos`` if given, else those of ``split`` (``protocol1/test``), else all."""
    if videos:
        return list(videos)
    protocol, part = parse_split_name(split)
    return select_videos(data_root, protocol, part)


def cached_video_frames(data_root: str, det_root: str, name: str, stride: int = 1,
                        extra_det_roots: dict[str, str] | None = None) -> Iterator[TrackingFrame]:
    """The tracker inputs of video ``name`` of ``data_root`` (at ``stride``) from its cached detections in
    ``det_root`` and the named extra sets ``extra_det_roots``, each file read and checked once."""
    sequence = load_sequence(data_root, name, stride=stride, with_gt=False)
    tracked = sequence.source_frames()
    detections = VideoDetections.for_video(det_root, name, sequence.source_length, tracked)
    extra = {set_name: VideoDetections.for_video(root, name, sequence.source_length, tracked)
             for set_name, root in (extra_det_roots or {}).items()}
    return cached_frames(detections, name, tracked.tolist(), sequence.frame_rate or None, sequence.image_size,
                         extra)


def track_cached(model: Any, data_root: str, det_root: str, videos: list[str], stride: int = 1,
                 progress: Any = None, extra_det_roots: dict[str, str] | None = None) -> dict[str, np.ndarray]:
    """Track every video of ``videos`` on cached detections; ``{video: rows frame, id, x1, y1, x2, y2, score}``.

    Args:
        model: a :class:`TrackingByDetection` (its detector, if any, is not used).
        extra_det_roots: named extra detection sets (``dict(nms95=DIR)``), read like ``det_root``.
        progress: called with each finished video's name (e.g. a progress bar's advance).
    """
    out = {}
    for name in videos:
        out[name] = model.track_video(cached_video_frames(data_root, det_root, name, stride, extra_det_roots))
        if progress is not None:
            progress(name)
    return out


def track_and_score(model: Any, data_root: str, det_root: str, videos: list[str], out_dir: str,
                    preset: str = 'vastmat', progress: Any = None,
                    extra_det_roots: dict[str, str] | None = None) -> tuple[dict, float]:
    """Track ``videos`` on cached detections, write ``out_dir/results/<video>.txt`` and ``out_dir/metrics.json``
    (per video and COMBINED, TrackEval's names; written last, so its presence marks a finished run); returns the
    metrics and the tracking seconds."""
    import time

    from vastmat.evaluation.mot_eval import evaluate, sequence_specs
    from vastmat.utils.io import write_json_atomic
    start = time.perf_counter()
    tracks = track_cached(model, data_root, det_root, videos, progress=progress, extra_det_roots=extra_det_roots)
    seconds = time.perf_counter() - start
    results = osp.join(out_dir, 'results')
    write_results_folder(tracks, results)
    specs, _ = sequence_specs(data_root, results, videos)
    metrics = evaluate(specs, preset)
    write_json_atomic(metrics, osp.join(out_dir, 'metrics.json'))
    return metrics, seconds


def write_track_rows(rows: np.ndarray, path: str) -> None:
    """Write rows ``frame, id, x1, y1, x2, y2, score`` as a MOT results file (atomically)."""
    write_results(path, track_rows_to_results(rows), decimals=3)


def read_track_rows(path: str, seq_length: int | None = None) -> np.ndarray:
    """A MOT results file as rows ``frame, id, x1, y1, x2, y2, score`` (the inverse of :func:`write_track_rows`)."""
    results = read_results(path, seq_length)
    return np.column_stack([results.frames, results.ids, ltwh_to_xyxy(results.boxes), results.scores]).reshape(-1, 7)


def write_results_folder(tracks: dict[str, np.ndarray], folder: str) -> list[str]:
    """``folder/<video>.txt`` for every video; returns the paths."""
    paths = []
    for name, rows in tracks.items():
        path = osp.join(folder, f'{name}.txt')
        write_track_rows(rows, path)
        paths.append(path)
    return paths
