# TrackTrack on cached detections with the matcher of configs/matchers/cda_fixed.py as TPA's geometric term
# (1 - S replaces 1 - HMIoU; the appearance, confidence and direction terms, penalties and the gate are unchanged).
_base_ = ['./tracktrack_cached-dets.py', '../matchers/cda_fixed.py']

model = dict(tracker=dict(matcher=dict(_delete_=True, **_base_.matcher)))
