"""Models: association modules, motion models, trackers, whole MOT models."""
from . import mot, motion, trackers  # noqa: F401  (registers the modules)
