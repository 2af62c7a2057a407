# TrackTrack on cached detections with the matcher of configs/matchers/cda_motion_adaptive.py as TPA's geometric term
# (per-track IoU / centre weights; the appearance, confidence and direction terms, penalties and the gate unchanged).
_base_ = ['./tracktrack_cached-dets.py', '../matchers/cda_motion_adaptive.py']

# TrackTrack's own defaults, chosen as the fragment's (same selection half, rows and criterion; 128 grid points,
# a_fast = a_still ones, i.e. fixed CDA, excluded): its TPA scores and thresholds favour the centre term on every
# track (CDA fixed beats IoU even at 10 FPS), so a still or crowded track keeps 3/4 of it (a_still 0.25) and an
# isolated one (no other detection within one mean diagonal) that moves at all gets the centre term alone.
model = dict(
    tracker=dict(
        matcher=dict(_delete_=True, **dict(_base_.matcher, r_low=0.0, r_high=0.005, crowd_radius=1.0, crowd_full=1.0,
                                           a_still=0.25, a_fast=0.0))))
