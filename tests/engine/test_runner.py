"""VastMATRunner's config text: written once, without yapf, and read back as the same config."""
import copy
from unittest import mock

from mmengine.config import Config
from yapf.yapflib.yapf_api import FormatCode

from helpers.common import DEBUG_YOLOX
from vastmat.engine.runner import FormattedOnceConfig


def test_config_text_is_written_once_without_yapf_and_reads_back_as_the_same_config(tmp_path):
    cfg = Config.fromfile(DEBUG_YOLOX)
    once = copy.deepcopy(cfg)
    object.__setattr__(once, '__class__', FormattedOnceConfig)
    with mock.patch('mmengine.config.config.FormatCode', wraps=FormatCode) as format_code:
        text = once.pretty_text
        assert copy.deepcopy(once).pretty_text == text and once.pretty_text == text
    assert format_code.call_count == 0
    assert once.model.type == 'YOLOX' and 'model' in once.to_dict()
    # the same text mmengine writes with format_python_code=False, and a config file that reads back unchanged
    plain = copy.deepcopy(cfg)
    object.__setattr__(plain, '_format_python_code', False)
    assert text == plain.pretty_text
    (tmp_path / 'dumped.py').write_text(text)
    assert Config.fromfile(str(tmp_path / 'dumped.py')).to_dict() == cfg.to_dict()
