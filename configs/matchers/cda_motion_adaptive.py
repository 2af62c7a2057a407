# Motion-adaptive CDA: S = a_i IoU + (1 - a_i) CenterSim with a per-track IoU weight
#   a_i = 1 - fast_i (1 - crowded_i),
#   fast_i    = clip((r_i - r_low) / (r_high - r_low), 0, 1),
#   r_i       = max(displacement per frame, motion model's position std) / track box diagonal,
#   crowded_i = clip(crowd_i / crowd_full, 0, 1), crowd_i = other detections within crowd_radius mean diagonals
# (a still or crowded track gets IoU, a fast isolated one CenterSim; vastmat/models/association/motion_adaptive.py).
# Tracks without motion in the frame context get the fallback CDA's frame weight (adaptive CDA, forward).
# PROVISIONAL defaults (chosen by hand, not by a study yet).
matcher = dict(
    type='MotionAdaptiveCDA',
    r_low=0.05,  # motion ratio up to which a track is still (IoU)
    r_high=0.25,  # motion ratio from which a track is fast (CenterSim unless crowded)
    crowd_radius=2.0,  # "near": centre distance below 2 mean diagonals of the pair
    crowd_full=2.0,  # this many other detections near a track make it fully crowded (IoU)
    n_full=None,  # optional frame term: N / n_full as a floor of every track's crowding (None: off)
    fallback=dict(type='CDA', mode='forward', k=0.05, n_ref=10, alpha_ref=0.5, alpha_min=0.0, alpha_max=1.0))
