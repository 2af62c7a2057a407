# Tuned by tools/tune.py: sort_cached-dets.py on animaltrack-10fps-sim (16 videos, 4 folds by video, seed 0).
# Data: ../shared/data/AnimalTrack-10fps-sim/gt; detections: ../shared/data/AnimalTrack-10fps-sim/dets.
# Space 'default+linking', 77 complete / 3 pruned trials (Optuna TPE, median pruner); study 'sort_cached-dets-default+linking-5e61286d60'.
# Rule: preset: the complete trial of best COMBINED HOTA on all tuning videos; held-aside estimate: per fold, the best trial on the other folds scored on that fold.
# Trial 77: COMBINED HOTA 72.75 on the tuning videos (the base config: 56.50); held-aside estimate 72.45 vs 56.50.
_base_ = ['sort_cached-dets.py']
model = dict(
    tracker=dict(
        max_age=2,
        min_hits=1,
        iou_threshold=0.3460593954650203),
    post_processors=[dict(type='GlobalLinker', new_identity_cost=3.691391612501707, max_gap=76, motion_sigma=0.5292506865389434, motion_growth=0.013064015098435376, motion_gate=8.631713215976541, extrapolate_frames=2, size_weight=2.136288725973489, gap_weight=0.13810524945373734, window=8)])
