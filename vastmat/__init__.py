"""VastMAT: multi-animal tracking toolbox built on MMDetection 3.x."""
from .version import __version__

__all__ = ['__version__']
