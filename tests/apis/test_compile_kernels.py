"""vastmat.apis.compile_kernels, which tools/setup_env.sh runs: every tracker and matcher of the registry runs on the
synthetic frames, and with it every numba kernel of the package is compiled (the inlined helpers compile into their
callers)."""
import importlib
import importlib.util
import pathlib
import pkgutil

import numpy as np
from numba.core.registry import CPUDispatcher

import vastmat
from vastmat.apis.compile_kernels import main, synthetic_frames


def kernels() -> dict[str, CPUDispatcher]:
    """Every numba function of the package that is compiled on its own (not inlined), by module and name."""
    found = {}
    for info in pkgutil.walk_packages(vastmat.__path__, 'vastmat.'):
        source = importlib.util.find_spec(info.name)
        if info.ispkg or source is None or 'njit' not in pathlib.Path(source.origin).read_text():
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (isinstance(value, CPUDispatcher) and value.py_func.__module__ == info.name
                    and value.targetoptions.get('inline') != 'always'):
                found[f'{info.name}.{name}'] = value
    return found


def test_every_tracker_and_matcher_runs_and_every_kernel_compiles(capsys):
    assert main(['--verbose']) == 0  # what tools/setup_env.sh runs (without --verbose)
    lines = capsys.readouterr().out.splitlines()
    ran = {line[:32].strip(): line[33:] for line in lines[:-1]}  # a name padded to 32 characters, the outcome
    assert {'BYTETracker', 'JDETracker', 'TrackTrackTracker', 'DiffMOTTracker', 'matcher CDA'} <= set(ran)
    assert all(outcome == 'ok' for outcome in ran.values()), {k: v for k, v in ran.items() if v != 'ok'}
    assert f'{len(ran)} of {len(ran)} trackers and matchers ran' in lines[-1]
    found = kernels()
    assert len(found) >= 20, sorted(found)
    assert not [name for name, kernel in found.items() if not kernel.signatures], 'kernels no tracker called'


def test_synthetic_frames():
    frames = synthetic_frames(num_frames=3)
    assert [f.frame_id for f in frames] == [1, 2, 3]
    first = frames[0]
    assert first.bboxes.shape == (6, 4) and np.all(first.bboxes[:, 2:] > first.bboxes[:, :2])
    assert np.allclose(np.linalg.norm(first.features, axis=1), 1.0)
    assert set(first.extra_dets) == {'nms95', 'tracking'}
    assert frames[1].bboxes[0].tolist() != first.bboxes[0].tolist()  # the animals move


def test_strided_float32_and_transposed_inputs_reuse_the_one_compiled_signature():
    """The wrappers hand their kernels C-contiguous float64 arrays, so the signature that compile_kernels caches is
    the only one (a strided view compiled a second signature in the first processes of every new clone)."""
    from vastmat.models.association.solvers import Greedy, LapJV
    from vastmat.models.trackers.tracktrack_costs import angle_distance
    from vastmat.structures import bbox
    rng = np.random.default_rng(0)
    wide = rng.uniform(0, 50, size=(5, 7))
    wide[:, 3:5] += 60  # columns 1-4: boxes with x2 > x1 and y2 > y1
    boxes = wide[:, 1:5]  # a strided view
    conversions = [getattr(bbox, name) for name in ('ltwh_to_xyxy', 'xyxy_to_ltwh', 'xyxy_to_xyah', 'ltwh_to_xyah',
                                                    'xyah_to_xyxy', 'xyxy_to_cxcywh', 'cxcywh_to_xyxy')]
    cost = rng.uniform(size=(4, 6))
    velocity, scores = rng.normal(size=(5, 4, 2)), rng.uniform(size=3)

    def run(boxes, cost, pairs):
        out = [convert(boxes) for convert in conversions]
        out.append(angle_distance(velocity, boxes, boxes[:3], scores, pairs=pairs))
        out += [LapJV(0.8)(cost).matches, Greedy(0.8)(cost).matches]
        return out

    contiguous = run(np.ascontiguousarray(boxes), np.ascontiguousarray(cost.T), None)
    signatures = {name: list(kernel.signatures) for name, kernel in kernels().items()}
    others = run(boxes, cost.T, np.ones((5, 3), bool))  # a view, a transposed matrix, numpy's strided indices
    run(boxes.astype(np.float32), cost.T.astype(np.float32), None)
    assert {name: list(kernel.signatures) for name, kernel in kernels().items()} == signatures
    for a, b in zip(contiguous, others, strict=True):
        np.testing.assert_array_equal(a, b)
