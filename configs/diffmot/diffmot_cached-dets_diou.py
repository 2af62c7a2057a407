# DiffMOT on cached detections with the matcher of configs/matchers/diou.py
# in its three association stages.
_base_ = ['./diffmot_cached-dets.py', '../matchers/diou.py']

model = dict(tracker=dict(matcher=dict(_delete_=True, **_base_.matcher)))
