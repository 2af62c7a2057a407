# Tuned by tools/tune.py: bytetrack_cached-dets_tuned-animaltrack-10fps-sim.py on animaltrack-10fps-sim (16 videos, 4 folds by video, seed 0).
# Data: ../shared/data/AnimalTrack-10fps-sim/gt; detections: ../shared/data/AnimalTrack-10fps-sim/dets.
# Space 'linking', 40 complete / 0 pruned trials (Optuna TPE, median pruner); study 'bytetrack_cached-dets_tuned-animaltrack-10fps-sim-linking-5f7571dd50'.
# Rule: preset: the complete trial of best COMBINED HOTA on all tuning videos; held-aside estimate: per fold, the best trial on the other folds scored on that fold.
# Trial 39: COMBINED HOTA 71.70 on the tuning videos (the base config: 71.59); held-aside estimate 71.64 vs 71.59.
_base_ = ['bytetrack_cached-dets_tuned-animaltrack-10fps-sim.py']
model = dict(
    post_processors=[dict(type='GlobalLinker', new_identity_cost=2.093920228611615, max_gap=12, motion_sigma=0.4449598340733665, motion_growth=0.06843540102380212, motion_gate=3.358382898250844, extrapolate_frames=8, size_weight=3.989599674310495, gap_weight=0.08258916827100399, window=2)])
