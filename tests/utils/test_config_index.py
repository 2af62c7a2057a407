"""vastmat/utils/config_index.py: configs load as mmengine loads them, parsed once per process and version of their
files' text; configs with an mmdet:: base read mmdet's metafiles once per process."""
import os.path as osp

import pytest
import yaml
from mmengine.config import Config
from mmengine.config import utils as config_utils

from helpers.common import REPO
from vastmat.utils.config_index import memoise_package_metafiles

YOLOX_X = osp.join(REPO, 'configs', 'yolox', 'yolox_x_8xb4-80e_vastmat-p1.py')
QDTRACK = osp.join(REPO, 'configs', 'qdtrack', 'qdtrack_faster-rcnn_r50_fpn_8xb2-4e_vastmat-p1.py')


def test_metafiles_read_once_and_the_configs_resolve_as_before(monkeypatch):
    import vastmat.registry  # noqa: F401  (installs it)
    memoised = config_utils.load
    assert memoised.reads_metafiles_once
    memoise_package_metafiles()
    assert config_utils.load is memoised  # idempotent
    memoised.cache_clear()
    Config._file2dict.cache_clear()  # (and the parses kept: each would find its files again)
    Config._get_cfg_path.cache_clear()
    reads = []
    real_yaml_load = yaml.load
    monkeypatch.setattr(yaml, 'load', lambda *args, **kwargs: reads.append(1) or real_yaml_load(*args, **kwargs))
    ours = Config.fromfile(YOLOX_X).to_dict()
    first = len(reads)
    assert first > 100  # the model index and its metafiles
    assert Config.fromfile(YOLOX_X).to_dict() == ours and Config.fromfile(QDTRACK) and len(reads) == first
    monkeypatch.setattr(config_utils, 'load', memoised.original)  # mmengine as installed
    _mmengine_as_installed(monkeypatch)
    assert Config.fromfile(YOLOX_X).to_dict() == ours and len(reads) == 2 * first


def _mmengine_as_installed(monkeypatch):
    """Config loading without :func:`memoise_config_files` (mmengine's own parse of every file at each load) and
    with mmengine's own search for another package's base (no ``vastmat::`` bases)."""
    monkeypatch.setattr(Config, '_file2dict', staticmethod(Config._file2dict.original))
    monkeypatch.setattr(Config, '_is_lazy_import', staticmethod(Config._is_lazy_import.original))
    monkeypatch.setattr(Config, '_get_cfg_path', staticmethod(Config._get_cfg_path.original))


def test_every_shipped_config_loads_as_mmengine_loads_it(monkeypatch):
    """Each shipped config, memoised (its first load and a second, from the kept parses), equals mmengine's own load:
    values, text and file name."""
    from vastmat.benchmarks.shipped_configs import shipped_configs
    from vastmat.utils.package_configs import config_dir
    assert Config._file2dict.memoised  # installed by import vastmat
    paths = [osp.join(config_dir(), name) for name in shipped_configs()]
    Config._file2dict.cache_clear()
    loads = [[Config.fromfile(path) for path in paths] for _ in range(2)]
    _mmengine_as_installed(monkeypatch)
    for path, first, second in zip(paths, *loads):
        plain = Config.fromfile(path)
        for memoised in (first, second):
            assert memoised.to_dict() == plain.to_dict() and memoised.text == plain.text, path
            assert memoised.filename == plain.filename, path


def test_a_changed_base_is_parsed_again_and_each_load_is_a_copy(tmp_path, monkeypatch):
    base, child = tmp_path / 'base.py', tmp_path / 'child.py'
    base.write_text('model = dict(type="A", depth=1)\n')
    child.write_text('_base_ = ["./base.py"]\nmodel = dict(width=2)\n')
    first = Config.fromfile(str(child))
    assert first.model == dict(type='A', depth=1, width=2)
    first.model.depth = 99  # the caller's change stays in its copy
    assert Config.fromfile(str(child)).model.depth == 1
    # the same size and, where the file system's clock is coarse, the same time stamp: the text decides
    base.write_text('model = dict(type="A", depth=7)\n')
    assert Config.fromfile(str(child)).model.depth == 7
    child.write_text('_base_ = ["./base.py"]\nmodel = dict(width=5)\n')
    assert Config.fromfile(str(child)).model == dict(type='A', depth=7, width=5)


def test_environment_variables_and_errors_are_not_kept(tmp_path, monkeypatch):
    config = tmp_path / 'env.py'
    config.write_text('value = "{{$VASTMAT_CONFIG_INDEX_TEST:one}}"\n')
    monkeypatch.delenv('VASTMAT_CONFIG_INDEX_TEST', raising=False)
    assert Config.fromfile(str(config)).value == 'one'
    monkeypatch.setenv('VASTMAT_CONFIG_INDEX_TEST', 'two')
    assert Config.fromfile(str(config)).value == 'two'
    broken = tmp_path / 'broken.py'
    broken.write_text('model = dict(type=\n')
    for _ in range(2):
        with pytest.raises(SyntaxError):
            Config.fromfile(str(broken))
    broken.write_text('model = dict(type="B")\n')
    assert Config.fromfile(str(broken)).model.type == 'B'


def test_a_config_holding_a_function_loads_each_time():
    """A value pickle cannot copy (a lambda inside a dict): the parse is not kept, the config loads as mmengine's."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        path = osp.join(folder, 'fn.py')
        with open(path, 'w') as f:
            f.write('hook = dict(score=lambda x: 2 * x)\n')
        for _ in range(2):
            assert Config.fromfile(path).hook.score(3) == 6
