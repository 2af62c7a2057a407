# Tuned by tools/tune.py: tracktrack_cached-dets_tuned-animaltrack-10fps-sim.py on animaltrack-10fps-sim (16 videos, 4 folds by video, seed 0).
# Data: ../shared/data/AnimalTrack-10fps-sim/gt; detections: ../shared/data/AnimalTrack-10fps-sim/dets.
# Space 'linking', 40 complete / 0 pruned trials (Optuna TPE, median pruner); study 'tracktrack_cached-dets_tuned-animaltrack-10fps-sim-linking-6370e622af'.
# Rule: preset: the complete trial of best COMBINED HOTA on all tuning videos; held-aside estimate: per fold, the best trial on the other folds scored on that fold.
# Trial 17: COMBINED HOTA 72.63 on the tuning videos (the base config: 72.48); held-aside estimate 72.36 vs 72.48.
_base_ = ['tracktrack_cached-dets_tuned-animaltrack-10fps-sim.py']
model = dict(
    post_processors=[dict(type='GlobalLinker', new_identity_cost=1.6166319535953753, max_gap=10, motion_sigma=0.47122762502297016, motion_growth=0.017705320089857052, motion_gate=3.744674066361854, extrapolate_frames=5, size_weight=4.1550418724324265, gap_weight=0.019433793382398472, window=3)])
