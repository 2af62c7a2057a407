"""VastMAT: multi-animal tracking toolbox built on MMDetection 3.x."""
from .utils.compat import shield_mmpretrain_from_transformers
from .utils.package_configs import enable_vastmat_bases
from .version import __version__

# before anything imports mmdet.models (mmpretrain 1.2.0 breaks where transformers 5 is installed; see the module)
shield_mmpretrain_from_transformers()
# a config may name a shipped config as its base: _base_ = ['vastmat::bytetrack/bytetrack_cached-dets.py']
enable_vastmat_bases()

__all__ = ['__version__']
