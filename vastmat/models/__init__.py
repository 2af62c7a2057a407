"""Models: association modules, motion models, trackers, whole MOT models."""
