"""Installed like a library: the shipped configs found through ``config_dir()`` and named as ``vastmat::`` bases, in
this editable install and in a wheel installed into a clean virtual environment."""
import os
import os.path as osp
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile

import pytest
from mmengine.config import Config

import vastmat  # noqa: F401  (enables vastmat:: bases)
from helpers.common import REPO
from vastmat.utils.package_configs import config_dir, resolve_config

CONFIGS = osp.join(REPO, 'configs')
# the build reads the repository as `pip install .` does, less what it never packages
NOT_COPIED = shutil.ignore_patterns('.*', '__pycache__', '*.py[co]', '*.egg-info', 'build', 'dist', 'data',
                                    'work_dirs')


def plugin_config(folder, base: str, body: str = '') -> str:
    """A plugin-style config in ``folder`` whose base is the shipped config ``vastmat::<base>``."""
    path = osp.join(folder, 'plugin_config.py')
    with open(path, 'w') as f:
        f.write(f"_base_ = ['vastmat::{base}']\n{body}")
    return path


def run(args: list[str], **kwargs) -> str:
    """Run ``args``; its stdout, or an AssertionError with its output."""
    proc = subprocess.run(args, capture_output=True, text=True, **kwargs)
    assert proc.returncode == 0, f'{args} exited with {proc.returncode}:\n{proc.stdout}{proc.stderr}'
    return proc.stdout


def shipped_files(root: str) -> set[str]:
    """The config files under ``root``, relative to it."""
    return {osp.relpath(osp.join(d, f), root) for d, dirs, files in os.walk(root) if '__pycache__' not in d
            for f in files if not f.endswith(('.pyc', '.pyo'))}


def test_config_dir_of_the_editable_install_is_the_checkout():
    assert config_dir() == CONFIGS
    assert resolve_config('vastmat::bytetrack/bytetrack_cached-dets.py') == osp.join(
        CONFIGS, 'bytetrack', 'bytetrack_cached-dets.py')


@pytest.mark.parametrize('base', ['bytetrack/bytetrack_cached-dets.py', 'bytetrack/bytetrack_yolox-x_vastmat-p1.py'])
def test_a_plugin_config_inherits_a_vastmat_base(tmp_path, base):
    cfg = Config.fromfile(plugin_config(tmp_path, base, 'model = dict(tracker=dict(match_thresh=0.8))\n'))
    shipped = Config.fromfile(osp.join(CONFIGS, base))
    assert cfg.model.tracker.match_thresh == 0.8
    cfg.model.tracker.match_thresh = shipped.model.tracker.match_thresh
    for key in ('model', 'test_dataloader', 'test_evaluator', 'default_scope', 'default_hooks'):
        assert cfg[key] == shipped[key], key
    # the merged config a relative base path gives: no `_scope_` stamped on the vastmat base's dicts
    assert cfg.to_dict() == shipped.to_dict()


def test_a_missing_or_outside_vastmat_base_names_the_path(tmp_path):
    missing = plugin_config(tmp_path, 'bytetrack/no_such_config.py')
    with pytest.raises(FileNotFoundError, match=r'no_such_config\.py.*a base of .*plugin_config\.py.*no file '
                                                + osp.join(CONFIGS, 'bytetrack', 'no_such_config.py')):
        Config.fromfile(missing)
    with pytest.raises(ValueError, match='inside'):
        Config.fromfile(plugin_config(tmp_path, '../setup.py'))


@pytest.fixture(scope='module')
def wheel(tmp_path_factory) -> str:
    """A wheel built as ``python -m build`` builds it (an sdist, then the wheel from the sdist), from a copy of the
    repository, so no build output lands in it."""
    root = tmp_path_factory.mktemp('wheel')
    source, dist = root / 'source', root / 'dist'
    shutil.copytree(REPO, source, ignore=NOT_COPIED)
    run([sys.executable, '-c', f'from setuptools import build_meta; build_meta.build_sdist({str(dist)!r})'], cwd=source)
    sdist, = dist.glob('vastmat-*.tar.gz')
    run([sys.executable, '-m', 'pip', 'wheel', '-q', '--no-deps', '--no-build-isolation', '-w', str(dist), str(sdist)],
        cwd=root)
    built, = dist.glob('vastmat-*.whl')
    return str(built)


@pytest.mark.xdist_group('vastmat_wheel')  # one worker builds the wheel for both tests
def test_the_wheel_carries_every_config(wheel):
    """Every file of configs/ (through the sdist: MANIFEST.in grafts them, setup.py copies them into the wheel)."""
    prefix = 'vastmat/.mim/configs/'
    with zipfile.ZipFile(wheel) as archive:
        packaged = {name[len(prefix):] for name in archive.namelist() if name.startswith(prefix)}
    assert packaged == shipped_files(CONFIGS)


@pytest.mark.slow
@pytest.mark.xdist_group('vastmat_wheel')
def test_a_wheel_in_a_clean_venv_finds_its_configs(wheel, tmp_path):
    venv = tmp_path / 'venv'
    run([sys.executable, '-m', 'venv', '--without-pip', str(venv)])
    python = str(venv / 'bin' / 'python')
    site = run([python, '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']).strip()
    # the dependencies from this environment as a plain path: its .pth files (the editable vastmat's) are not run
    with open(osp.join(site, 'dependencies.pth'), 'w') as f:
        f.write(sysconfig.get_paths()['purelib'] + '\n')
    run([sys.executable, '-m', 'pip', '--python', python, 'install', '-q', '--no-deps', '--no-index', wheel])
    plugin = plugin_config(tmp_path, 'bytetrack/bytetrack_cached-dets.py',
                           'model = dict(tracker=dict(match_thresh=0.8))\n')
    snippet = textwrap.dedent(f'''
        import inspect
        import os.path as osp
        import vastmat
        from mmengine.config import Config
        from mmengine.registry import init_default_scope
        from vastmat.utils.package_configs import config_dir
        site = {site!r}
        assert vastmat.__file__.startswith(site + osp.sep), vastmat.__file__
        assert config_dir() == osp.join(site, 'vastmat', '.mim', 'configs'), config_dir()
        assert osp.isfile(osp.join(config_dir(), 'bytetrack', 'bytetrack_cached-dets.py'))
        cfg = Config.fromfile({plugin!r})
        assert cfg.model.tracker.match_thresh == 0.8 and cfg.model.tracker.track_thresh == 0.6, cfg.model.tracker
        assert cfg.test_dataloader.dataset.type == 'VastMATDataset'
        from vastmat.apis.inference import CONFIG_DIR, matcher_fragment
        assert CONFIG_DIR == config_dir() and matcher_fragment('iou')['type'] == 'IoU'
        from vastmat.models.trackers.zoo import CONFIG_ROOT
        assert CONFIG_ROOT == config_dir()
        from vastmat.registry import MODELS
        init_default_scope(cfg.default_scope)
        tracker = MODELS.build(cfg.model.tracker)
        assert inspect.getfile(type(tracker)).startswith(site + osp.sep), inspect.getfile(type(tracker))
        print('built', type(tracker).__name__)
    ''')
    env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'PYTHONHOME', 'PYTHONSAFEPATH')}
    assert 'built BYTETracker' in run([python, '-c', snippet], cwd=tmp_path, env=env)
