# ByteTrack on cached detections with the matcher of configs/matchers/cda_motion_adaptive.py (per-track IoU /
# centre weights) in its three association stages.
_base_ = ['./bytetrack_cached-dets.py', '../matchers/cda_motion_adaptive.py']

model = dict(tracker=dict(matcher=dict(_delete_=True, **_base_.matcher)))
