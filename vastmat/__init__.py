"""VastMAT: multi-animal tracking toolbox built on MMDetection 3.x."""
from .utils.compat import shield_mmpretrain_from_transformers
from .utils.config_index import memoise_config_files
from .utils.package_configs import enable_vastmat_bases
from .version import __version__

# before anything imports mmdet.models (mmpretrain 1.2.0 breaks where transformers 5 is installed; see the module)
shield_mmpretrain_from_transformers()
# a config may name a shipped config as its base: _base_ = ['vastmat::bytetrack/bytetrack_cached-dets.py']
enable_vastmat_bases()
# a config file and its bases parsed once per process and version of their text (mmengine parses them at each load)
memoise_config_files()

__all__ = ['__version__']
