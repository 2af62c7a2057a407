# DiffMOT on cached detections with the matcher of configs/matchers/cda_motion_adaptive.py (per-track IoU /
# centre weights) in its three association stages.
_base_ = ['./diffmot_cached-dets.py', '../matchers/cda_motion_adaptive.py']

# DiffMOT's own defaults, chosen as the fragment's (same selection half, rows and criterion, with the D2MP of the
# README's matcher table; 20 grid points over a_fast, r_low, r_high, crowd_full, crowd_radius): a track counts as fast
# only from 0.6 of its diagonal a frame (D2MP gives no position std) and then gets the centre term alone unless
# crowded.
model = dict(
    tracker=dict(
        matcher=dict(_delete_=True, **dict(_base_.matcher, r_low=0.02, r_high=0.6, crowd_radius=2.0, crowd_full=8.0,
                                           a_still=1.0, a_fast=0.0))))
