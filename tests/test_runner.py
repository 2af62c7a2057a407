"""VastMATRunner's config formatted once: the same text as mmengine's, yapf run a single time."""
import copy
from unittest import mock

from mmengine.config import Config
from yapf.yapflib.yapf_api import FormatCode

from conftest import DEBUG_YOLOX
from vastmat.engine.runner import FormattedOnceConfig


def test_config_is_formatted_once_with_the_same_text():
    cfg = Config.fromfile(DEBUG_YOLOX)
    expected = cfg.pretty_text
    once = copy.deepcopy(cfg)
    object.__setattr__(once, '__class__', FormattedOnceConfig)
    with mock.patch('mmengine.config.config.FormatCode', wraps=FormatCode) as format_code:
        assert once.pretty_text == expected
        assert copy.deepcopy(once).pretty_text == expected and once.pretty_text == expected
    assert format_code.call_count == 1
    assert once.model.type == 'YOLOX' and 'model' in once.to_dict()
