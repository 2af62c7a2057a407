"""The stack where transformers 5 is installed (vastmat/utils/compat.py): mmpretrain 1.2.0, imported by mmdet's ReID
components, breaks there; importing vastmat first shields it. tools/setup_env.sh installs the real transformers 5
(and what it needs that the environment lacks) into a site directory beside the environment, never into it; the
tests put it on the path of fresh interpreters."""
import os.path as osp
import sys

import pytest

from helpers.common import run

# what mmdet.models and the ReID model of the zoo need from mmpretrain, run where transformers 5 is on the path
USE_REID = '''
import importlib.metadata
assert importlib.metadata.version('transformers').split('.')[0] == '5', importlib.metadata.version('transformers')
import vastmat, mmdet.models, mmpretrain.utils.dependency as dependency
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope
from vastmat.registry import MODELS
assert dependency.WITH_MULTIMODAL is False
DefaultScope.get_instance('transformers5', scope_name='vastmat')
model = MODELS.build(Config.fromfile('configs/reid/reid_tiny_zoo_vastmat-demo.py').model).eval()
data = model.data_preprocessor(dict(inputs=[torch.zeros(3, 64, 32, dtype=torch.uint8)]), False)
with torch.no_grad():
    print('features', tuple(model(data['inputs'], mode='tensor').shape))
'''


@pytest.fixture(scope='module')
def transformers5_site():
    site = osp.join(sys.prefix, 'test-sites', 'transformers5')
    if not osp.isfile(osp.join(site, '.complete')):
        pytest.skip(f'no transformers 5 at {site}: tools/setup_env.sh installs it from the package index')
    return site


def test_versions_that_break_mmpretrain():
    from vastmat.utils.compat import transformers_breaks_mmpretrain
    assert [transformers_breaks_mmpretrain(v) for v in (None, '4.57.1', '5.0.0', '5.25.0', '6.1', 'dev')] == [
        False, False, True, True, True, False]


def test_mmdet_breaks_without_the_shield_and_works_with_it(transformers5_site):
    env = {'PYTHONPATH': transformers5_site}
    plain = run([sys.executable, '-c', 'import mmdet.models'], env=env, check=False)
    assert plain.returncode != 0 and 'TypeError' in plain.stdout  # the breakage is real ...
    shielded = run([sys.executable, '-c', USE_REID], env=env)  # ... and importing vastmat first prevents it
    assert 'features (1, 32)' in shielded.stdout, shielded.stdout[-2000:]
