# TrackTrack on cached detections with the matcher of configs/matchers/cda_motion_adaptive.py as TPA's geometric term
# (per-track IoU / centre weights; the appearance, confidence and direction terms, penalties and the gate unchanged).
_base_ = ['./tracktrack_cached-dets.py', '../matchers/cda_motion_adaptive.py']

model = dict(tracker=dict(matcher=dict(_delete_=True, **_base_.matcher)))
