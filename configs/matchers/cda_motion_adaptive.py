# Motion-adaptive CDA: S = a_i IoU + (1 - a_i) CenterSim with a per-track IoU weight
#   a_i = a_still - (a_still - a_fast) fast_i (1 - crowded_i),
#   fast_i    = clip((r_i - r_low) / (r_high - r_low), 0, 1),
#   r_i       = max(displacement per frame, motion model's position std) / track box diagonal,
#   crowded_i = clip(crowd_i / crowd_full, 0, 1), crowd_i = other detections within crowd_radius mean diagonals
# (a still or crowded track gets a_still, a fast isolated one a_fast; vastmat/models/association/motion_adaptive.py).
# Tracks without motion in the frame context get the fallback CDA's frame weight (adaptive CDA, forward).
# Defaults: chosen for ByteTrack (official match_thresh 0.9) by the largest worst-case HOTA margin on the selection
# half of AnimalTrack train (the 16 videos at odd positions, 1st, 3rd, ..., of its 32 in name order) over six rows:
# 10 FPS against IoU, 5 and 3 FPS and the sparsest third of each setting against the better of CDA fixed / adaptive;
# 197 grid points (README, "Association modules"). TrackTrack and DiffMOT set their own, chosen alike
# (matcher_overrides on their classes, applied by vastmat.apis.swap_matcher).
matcher = dict(
    type='MotionAdaptiveCDA',
    r_low=0.0,  # motion ratio up to which a track is still
    r_high=0.05,  # motion ratio from which a track is fast
    crowd_radius=1.0,  # "near": centre distance below 1 mean diagonal of the pair
    crowd_full=4.0,  # this many other detections near a track make it fully crowded (a_still); None: ignored
    n_full=None,  # optional frame term: N / n_full as a floor of every track's crowding (None: off)
    a_still=1.0,  # IoU weight of a still or crowded track (1: IoU)
    a_fast=0.25,  # IoU weight of a fast isolated track (0: CenterSim)
    fallback=dict(type='CDA', mode='forward', k=0.05, n_ref=10, alpha_ref=0.5, alpha_min=0.0, alpha_max=1.0))
