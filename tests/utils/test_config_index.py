"""Configs with an mmdet:: base: mmdet's metafiles read once per process, the configs resolved as mmengine resolves
them."""
import os.path as osp

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
    reads = []
    real_yaml_load = yaml.load
    monkeypatch.setattr(yaml, 'load', lambda *args, **kwargs: reads.append(1) or real_yaml_load(*args, **kwargs))
    ours = Config.fromfile(YOLOX_X).to_dict()
    first = len(reads)
    assert first > 100  # the model index and its metafiles
    assert Config.fromfile(YOLOX_X).to_dict() == ours and Config.fromfile(QDTRACK) and len(reads) == first
    monkeypatch.setattr(config_utils, 'load', memoised.original)  # mmengine as installed
    assert Config.fromfile(YOLOX_X).to_dict() == ours and len(reads) == 2 * first
