"""What the tests share besides fixtures: the repository's paths, running tools (in this process, in a forked one or
as a subprocess), building models in vastmat's scope, comparing result files, markers for the real data of
../shared/data (``tests/conftest.py`` holds the fixtures; this is a plain module so that a test imports it by name)."""
import contextlib
import os
import os.path as osp
import socket
import subprocess
import sys

import pytest

TESTS = osp.dirname(osp.dirname(osp.abspath(__file__)))
REPO = osp.dirname(TESTS)
FIXTURES_ROOT = osp.join(TESTS, 'fixtures')
SHARED_DATA = osp.join(osp.dirname(REPO), 'shared', 'data')
DEBUG_YOLOX = osp.join(REPO, 'configs', 'yolox', 'yolox_debug_1xb4-2it_vastmat-demo.py')


def run(args, cwd=REPO, env=None, check=True, timeout=600):
    """Run a command with this interpreter's environment; return the CompletedProcess (stdout and stderr joined)."""
    full_env = dict(os.environ)
    full_env['PYTHON'] = sys.executable
    full_env['PATH'] = osp.dirname(sys.executable) + os.pathsep + full_env.get('PATH', '')
    full_env['PYTHONPATH'] = os.pathsep.join(p for p in (REPO, full_env.get('PYTHONPATH')) if p)
    full_env.update(env or {})
    proc = subprocess.run(args, cwd=cwd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f'{" ".join(map(str, args))} exited with {proc.returncode}:\n{proc.stdout[-6000:]}')
    return proc


def python(*args, **kwargs):
    return run([sys.executable, *map(str, args)], **kwargs)


_TOOLS = {}


def tool_module(script: str):
    """The module of a script under tools/, loaded once in this process."""
    import importlib.util
    if script not in _TOOLS:
        spec = importlib.util.spec_from_file_location(f'vastmat_tool_{len(_TOOLS)}', osp.join(REPO, script))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _TOOLS[script] = module
    return _TOOLS[script]


def tool(script: str, *args):
    """Run ``main(argv)`` of a script under tools/ in this process (no interpreter start, no second import of
    torch and mmdet) and return what it returns."""
    return tool_module(script).main([str(a) for a in args])


def _forked_tool_main(script: str, args: list, log: str, env: dict, cwd: str | None, threads: int | None) -> None:
    os.environ.update(env)
    if threads is not None:
        import torch
        os.environ['OMP_NUM_THREADS'] = str(threads)
        torch.set_num_threads(threads)
    if cwd is not None:
        os.chdir(cwd)
    sys.stdout = sys.stderr = open(log, 'w', buffering=1)
    tool(script, *args)


def forked_tool(script: str, *args, log: str, env: dict | None = None, cwd: str | None = None,
                threads: int | None = None):
    """:func:`tool` in a process forked from this one, started (torch, mmdet and the tool already imported: no
    interpreter start, which costs about 6 CPU-seconds), with ``env`` added to its environment, in ``cwd`` (None:
    this one's), at ``threads`` torch threads (None: this process's) and its output to ``log``. Returns the
    ``multiprocessing.Process``: exit code 0 when ``main`` returned, 1 when it raised."""
    import multiprocessing
    proc = multiprocessing.get_context('fork').Process(
        target=_forked_tool_main, args=(script, [str(a) for a in args], str(log), env or {}, cwd, threads))
    proc.start()
    return proc


def set_aside_logs(work_dir) -> None:
    """Rename the log folders of the runs that ended in ``work_dir`` (mmengine names each ``<start time in seconds>``)
    to ``0-<that name>``, which sorts before every start time: a run that starts in the same second, such as a
    resumed one, then writes a folder of its own, not into theirs (in place of waiting for the next second)."""
    import re
    for name in os.listdir(work_dir):
        if re.fullmatch(r'\d{8}_\d{6}', name) and osp.isdir(osp.join(work_dir, name)):
            os.rename(osp.join(work_dir, name), osp.join(work_dir, f'0-{name}'))


def forked_ranks(script: str, *args, logs: list, master_port, master_addr: str = '127.0.0.1',
                 timeout: float = 600) -> list[str]:
    """The ranks of a one-machine torchrun launch of ``script``: one :func:`forked_tool` process each (as many as
    ``logs``, each writing its own), in the environment torchrun gives its workers; waits for them, asserts that each
    ended with exit code 0 and returns their logs' text. Several ranks run at torchrun's thread count for several
    ranks a machine: OMP_NUM_THREADS, 1 where it is not set. At one thread, a rank forked from a process whose OpenMP
    threads have started does not wait for them (GNU OpenMP's pool does not survive a fork), as it would at more."""
    ranks = len(logs)
    base = dict(WORLD_SIZE=str(ranks), LOCAL_WORLD_SIZE=str(ranks), GROUP_RANK='0', MASTER_ADDR=master_addr,
                MASTER_PORT=str(master_port))
    threads = int(os.environ.get('OMP_NUM_THREADS') or 1) if ranks > 1 else None
    procs = [forked_tool(script, *args, log=log, env=dict(base, RANK=str(rank), LOCAL_RANK=str(rank)),
                         threads=threads) for rank, log in enumerate(logs)]
    for proc in procs:
        proc.join(timeout)
    outputs = [open(log).read() for log in logs]
    assert [proc.exitcode for proc in procs] == [0] * ranks, [output[-3000:] for output in outputs]
    return outputs


def npz_arrays(path: str) -> dict:
    """Every array of an ``.npz`` fixture, read into memory (the file closed)."""
    import numpy as np
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def vastmat_scope(*modules: str) -> None:
    """Import vastmat's datasets and models (and ``modules``) so that their registries are filled, and make
    'vastmat' mmengine's default scope (what a config's ``default_scope`` does for the tools)."""
    import importlib

    from mmengine.registry import init_default_scope
    for module in ('vastmat.datasets', 'vastmat.models', *modules):
        importlib.import_module(module)
    init_default_scope('vastmat')


def build_model(cfg, seed=None):
    """A model built from a copy of ``cfg`` (MODELS), after ``torch.manual_seed(seed)`` when a seed is given."""
    import copy

    import torch

    from vastmat.registry import MODELS
    if seed is not None:
        torch.manual_seed(seed)
    return MODELS.build(copy.deepcopy(cfg))


def read_results(path):
    from vastmat.datasets.formats import read_results as read
    return read(str(path))


def assert_same_tracks(ours, theirs, where: str, atol: float = 1e-2) -> int:
    """Two result files hold the same boxes in every frame (to ``atol`` px; within a frame, rows paired by the
    assignment of least largest coordinate difference, as the files may order a frame's rows differently) and the
    same ids up to one relabelling for the whole video; returns the number of rows."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment
    assert len(ours) == len(theirs), f'{where}: {len(ours)} rows, the official output {len(theirs)}'
    pairs = set()
    for frame in np.unique(theirs.frames):
        a, b = np.flatnonzero(ours.frames == frame), np.flatnonzero(theirs.frames == frame)
        assert len(a) == len(b), f'{where} frame {frame}: {len(a)} boxes, the official output {len(b)}'
        difference = np.abs(ours.boxes[a][:, None, :] - theirs.boxes[b][None, :, :]).max(axis=2)
        rows, cols = linear_sum_assignment(difference)
        worst = difference[rows, cols].max()
        assert worst <= atol, f'{where} frame {frame}: a box differs by {worst:.3f} px'
        pairs |= set(zip(ours.ids[a[rows]].tolist(), theirs.ids[b[cols]].tolist()))
    assert len(pairs) == len({p for p, _ in pairs}) == len({q for _, q in pairs}), f'{where}: ids not a relabelling'
    return len(ours)


def detection_boxes_moved(tracker_class, frames, **options) -> int:
    """Track ``frames`` with ``reported_box='kalman'`` and ``'detection'`` side by side: the same ids every frame,
    each detection-mode box one of the frame's detections; returns how many reported boxes differ by > 0.5 px
    (the Kalman state is not the detection). A bad ``reported_box`` is refused by name."""
    import numpy as np
    trackers = {box: tracker_class(reported_box=box, **options) for box in ('kalman', 'detection')}
    moved = 0
    for frame in frames:
        kalman, detection = (trackers[box].update(frame) for box in ('kalman', 'detection'))
        assert kalman.ids.tolist() == detection.ids.tolist()
        gaps = np.abs(detection.bboxes[:, None] - frame.bboxes[None]).max(axis=2).min(axis=1)
        assert (gaps < 1e-9).all(), frame.frame_id
        moved += int((np.abs(kalman.bboxes - detection.bboxes).max(axis=1) > 0.5).sum())
    with pytest.raises(ValueError, match="reported_box must be one of \\('kalman', 'detection'\\)"):
        tracker_class(reported_box='mean')
    return moved


@contextlib.contextmanager
def uninitialised_memory_filled_with_nan():
    """PyTorch's deterministic mode with uninitialised memory filled with NaN (torch.empty and friends), restored
    afterwards: a model that reads memory it never wrote then shows it."""
    import torch
    was = torch.are_deterministic_algorithms_enabled(), torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was[0])
        torch.utils.deterministic.fill_uninitialized_memory = was[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def data_root_options(root: str) -> list:
    """--cfg-options that point the debug YOLOX config at a generated demo dataset."""
    root = root.rstrip('/') + '/'
    return [f'train_dataloader.dataset.dataset.data_root={root}', f'val_dataloader.dataset.data_root={root}',
            f'test_dataloader.dataset.data_root={root}']


def video_data_root_options(root: str, with_val: bool = False) -> list:
    """--cfg-options that point a video-mode model config (configs/_base_/datasets/vastmat_video.py: QDTrack,
    FairMOT, TransTrack) at a generated demo dataset; ``with_val`` for a config that validates."""
    root = root.rstrip('/') + '/'
    loaders = ('train_dataloader', 'val_dataloader', 'test_dataloader') if with_val else ('train_dataloader',
                                                                                          'test_dataloader')
    return [f'{loader}.dataset.data_root={root}' for loader in loaders]


ANIMALTRACK = osp.join(SHARED_DATA, 'AnimalTrack', 'train')
needs_animaltrack = pytest.mark.skipif(not osp.isdir(ANIMALTRACK),
                                       reason=f'real data not found at {ANIMALTRACK} (../shared/data beside the clone)')


@contextlib.contextmanager
def plugin_registrations_undone():
    """What plugins register inside the block leaves vastmat's registries at its end, and the plugins are loaded
    again (their site off sys.path by then: :func:`plugins_from` given a ``monkeypatch.context()`` that ends inside
    the block), so that later tests in the same worker see the registries (the zoo's tracker list) as they were.
    vastmat's own classes that a first import inside the block registered stay: their modules stay imported."""
    from vastmat import registry
    from vastmat.plugins import load_plugins
    registries = [r for r in vars(registry).values() if isinstance(r, registry.VastMATRegistry)]
    before = [set(r.module_dict) for r in registries]
    try:
        yield
    finally:
        for r, names in zip(registries, before):
            for name in set(r.module_dict) - names:
                if r.module_dict[name].__module__.split('.')[0] != 'vastmat':
                    r._module_dict.pop(name)
        load_plugins(reload=True)


def plugins_from(site: str, monkeypatch):
    """The plugins installed in ``site`` loaded in this process, as a user's ``pip install`` makes them load: the
    site on sys.path (until the test ends), the entry points read again. Returns vastmat's plugin state."""
    from vastmat.plugins import load_plugins
    monkeypatch.syspath_prepend(site)
    return load_plugins(reload=True)


def mot_specs(benchmark: str, tracker: str):
    """SequenceSpecs of one tracker on one of the MOTChallenge folders of ../shared/data."""
    from vastmat.datasets.formats import read_seqinfo
    from vastmat.evaluation.mot_eval import SequenceSpec
    root = osp.join(SHARED_DATA, benchmark, 'train')
    return [SequenceSpec(seq, osp.join(root, seq, 'gt', 'gt.txt'),
                         osp.join(SHARED_DATA, benchmark, 'trackers', tracker, f'{seq}.txt'),
                         read_seqinfo(osp.join(root, seq, 'seqinfo.ini'))['seqLength'])
            for seq in sorted(os.listdir(root))]


needs_mot = pytest.mark.skipif(not osp.isdir(osp.join(SHARED_DATA, 'MOT17')),
                               reason=f'real data not found at {SHARED_DATA} (../shared/data beside the clone)')


def postgres_bin() -> str | None:
    """The folder of PostgreSQL's programs (initdb, pg_ctl, createdb): where pg_ctl on PATH points, else Debian's
    /usr/lib/postgresql/<version>/bin (the newest; Debian puts them off PATH), else None."""
    import glob
    import shutil
    on_path = shutil.which('pg_ctl')
    if on_path and osp.isfile(osp.join(osp.dirname(osp.realpath(on_path)), 'createdb')):
        return osp.dirname(osp.realpath(on_path))
    found = glob.glob('/usr/lib/postgresql/*/bin/pg_ctl')
    if not found:
        return None
    return osp.dirname(max(found, key=lambda p: int(p.split('/')[-3]) if p.split('/')[-3].isdigit() else -1))
