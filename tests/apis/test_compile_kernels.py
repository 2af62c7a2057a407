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
