"""Models: association modules, motion models, online trackers, per-video post-processing, whole MOT models."""
from . import mot, motion, post, trackers  # noqa: F401  (registers the modules)
from . import reid  # noqa: F401  (registers the appearance models' parts)
from . import backbones, dense_heads  # noqa: F401  (registers DLASeg, FairMOTHead)
