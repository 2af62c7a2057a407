"""VastMAT: multi-animal tracking toolbox built on MMDetection 3.x."""
from .utils.compat import shield_mmpretrain_from_transformers
from .version import __version__

# before anything imports mmdet.models (mmpretrain 1.2.0 breaks where transformers 5 is installed; see the module)
shield_mmpretrain_from_transformers()

__all__ = ['__version__']
