"""The matcher axis of the trackers' search spaces (``search_spaces`` on a tracker class, read by
:mod:`vastmat.experiments.tuning`): each ``configs/matchers/`` name with the space of the keys tuned for it.
Kinds as in :mod:`vastmat.experiments.tuning.space`: ``('float', low, high[, 'log'])``, ``('int', low, high)``,
``('categorical', [choices])``."""

MATCHER_AXIS = dict(
    iou={},
    diou={},
    cda_fixed=dict(alpha=('float', 0.0, 1.0)),  # the paper's IoU weight (Table 20's axis)
    cda_adaptive=dict(k=('float', 0.0, 0.1), alpha_ref=('float', 0.0, 1.0)),  # Table 23's slope, the reference weight
    # the motion ratio from which a track is fast, and the IoU weight of a fast isolated track
    cda_motion_adaptive=dict(r_high=('float', 0.005, 0.6, 'log'), a_fast=('float', 0.0, 1.0)),
)
