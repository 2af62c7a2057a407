"""Compile the package's numba kernels into numba's on-disk cache ahead of use (``tools/setup_env.sh`` runs it).

The box conversions, pair quantities, solvers, Kalman steps and tracker loops are ``@njit(cache=True)`` functions:
numba compiles each on its first call in a process and keeps the machine code beside the module
(``__pycache__/*.nbi, *.nbc``), valid while the source file keeps its modification time. In a new clone every
process compiled them again until one had written the cache (about 18 s of CPU for the trackers' kernels; the test
workers and their subprocesses each paid it). Here every tracker of the registry tracks a short synthetic sequence
with its defaults, every matcher scores one frame and every box conversion converts it, which
calls each kernel with the argument types a real run gives it. A second run loads the cache (about 3 s, the imports
included).

    python -m vastmat.apis.compile_kernels
"""
from __future__ import annotations

import argparse
import inspect
import time

import numpy as np

from vastmat.registry import MATCHERS, MODELS
from vastmat.structures import bbox
from vastmat.structures.tracking import FrameDetections, TrackingFrame

NUM_FRAMES = 12
FEATURE_DIM = 256  # the official MOTIP's DETR width, which its ID decoder reads; any width for the others
# constructor settings a tracker needs to build without a file (the kernels are the same)
BUILD_OVERRIDES = {'DiffMOTTracker': dict(allow_untrained_motion=True)}


def synthetic_frames(num_frames: int = NUM_FRAMES, seed: int = 0) -> list[TrackingFrame]:
    """Five animals moving across a 640 x 480 frame, with a clutter box, scores above and below the usual
    thresholds, unit appearance features and the same boxes as the extra sets the trackers read (``nms95``,
    ``tracking``)."""
    rng = np.random.default_rng(seed)
    starts = rng.uniform(50, 400, size=(5, 2))
    sizes = rng.uniform(30, 80, size=(5, 2))
    velocity = rng.uniform(-4, 4, size=(5, 2))
    identity_features = rng.normal(size=(6, FEATURE_DIM))
    frames = []
    for frame_id in range(1, num_frames + 1):
        corners = starts + velocity * frame_id
        boxes = np.concatenate([corners, corners + sizes], axis=1)
        boxes = np.concatenate([boxes, [[300.0, 300.0, 340.0, 360.0]]])  # clutter
        scores = np.array([0.95, 0.9, 0.8, 0.55, 0.3, 0.2])
        features = identity_features + 0.1 * rng.normal(size=identity_features.shape)
        features /= np.linalg.norm(features, axis=1, keepdims=True)
        detections = FrameDetections(boxes, scores, features=features)
        frames.append(TrackingFrame(detections, frame_id, video_name='compile_kernels', frame_rate=10.0,
                                    source_frame=frame_id, image_size=(480, 640),
                                    extra_dets={'nms95': detections, 'tracking': detections}))
    return frames


def tracker_types() -> list[str]:
    """Every registered tracker class (plugins' included), by name."""
    from vastmat.models.trackers import BaseTracker
    return sorted(name for name, cls in MODELS.module_dict.items()
                  if inspect.isclass(cls) and issubclass(cls, BaseTracker) and cls is not BaseTracker)


def _score(component, tracks: np.ndarray, dets: np.ndarray) -> None:
    """Call a component of the MATCHERS registry the way a tracker does: a solver on a cost matrix, a gate or a
    matcher on track and detection boxes (``N`` high-confidence detections: 3)."""
    parameters = list(inspect.signature(component.__call__).parameters)
    if parameters[0] == 'cost':
        component(1.0 - np.eye(len(tracks), len(dets)))
    elif 'num_high_conf' in parameters:
        component(tracks, dets, num_high_conf=3)
    else:
        component(tracks, dets)


def _reason(exc: Exception) -> str:
    """Why a tracker or matcher did not run: the exception's type and the first line of its message."""
    return f'{type(exc).__name__}: {(str(exc).splitlines() or [""])[0]}'


def compile_kernels() -> dict[str, str]:
    """Track :func:`synthetic_frames` with every tracker that builds from its defaults, score one frame with every
    matcher and convert its boxes with every conversion of :mod:`vastmat.structures.bbox`; returns what ran
    (``'ok'``) and what did not, with the reason (a tracker that needs a network, a file or an input the synthetic
    frames lack)."""
    import vastmat.models  # noqa: F401  (fills the registries)
    frames = synthetic_frames()
    ran: dict[str, str] = {}
    for name in tracker_types():
        try:
            tracker = MODELS.build(dict(type=name, **BUILD_OVERRIDES.get(name, {})))
            for frame in frames:
                tracker.update(frame)
            ran[name] = 'ok'
        except Exception as exc:  # noqa: BLE001 (reported: this tracker's kernels compile at their first use)
            ran[name] = _reason(exc)
    tracks, dets = frames[0].bboxes[:4], frames[1].bboxes
    for name in [n for n in dir(bbox) if '_to_' in n and not n.startswith('_')]:  # the public box conversions
        getattr(bbox, name)(dets)
    for name in sorted(MATCHERS.module_dict):
        try:
            cls = MATCHERS.get(name)
            required = {key: 0.5 for key, param in inspect.signature(cls.__init__).parameters.items()
                        if key != 'self' and param.default is inspect.Parameter.empty
                        and param.kind is param.POSITIONAL_OR_KEYWORD}  # a threshold or cost limit
            _score(cls(**required), tracks, dets)
            ran[f'matcher {name}'] = 'ok'
        except Exception as exc:  # noqa: BLE001 (reported as above)
            ran[f'matcher {name}'] = _reason(exc)
    return ran


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--verbose', action='store_true', help='print each tracker and matcher and how it went')
    args = parser.parse_args(argv)
    start = time.perf_counter()
    ran = compile_kernels()
    if args.verbose:
        for name, outcome in ran.items():
            print(f'{name:32s} {outcome}')
    done = sum(outcome == 'ok' for outcome in ran.values())
    print(f'numba kernels compiled and cached: {done} of {len(ran)} trackers and matchers ran '
          f'({time.perf_counter() - start:.1f} s)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
