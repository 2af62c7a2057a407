# DiffMOT on cached detections with the matcher of configs/matchers/cda_motion_adaptive.py (per-track IoU /
# centre weights) in its three association stages.
_base_ = ['./diffmot_cached-dets.py', '../matchers/cda_motion_adaptive.py']

# DiffMOT's own defaults, chosen as the fragment's (same selection half and criterion, with the D2MP of the README's
# matcher table; 16 grid points over a_fast, r_low, r_high, crowd_full): crowding ignored, a fast track gets the
# centre term alone, and a track counts as fast only from 0.6 of its diagonal a frame (D2MP gives no position std).
model = dict(
    tracker=dict(
        matcher=dict(_delete_=True, **dict(_base_.matcher, r_low=0.02, r_high=0.6, crowd_full=None, a_fast=0.0))))
