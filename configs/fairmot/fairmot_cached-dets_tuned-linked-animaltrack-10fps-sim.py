# Tuned by tools/tune.py: fairmot_cached-dets_tuned-animaltrack-10fps-sim.py on animaltrack-10fps-sim (16 videos, 4 folds by video, seed 0).
# Data: ../shared/data/AnimalTrack-10fps-sim/gt; detections: work_dirs/at10_jde_inputs.
# (The base preset's simulated embeddings, written by
#   PYTHONPATH=tests python -c "from helpers.jde_inputs import write_inputs; write_inputs('work_dirs/at10_jde_inputs', 'animaltrack')"
# the linker's appearance term reads the JDE tracker's smoothed embeddings.)
# Space 'linking', 40 complete / 0 pruned trials (Optuna TPE, median pruner); study 'fairmot_cached-dets_tuned-animaltrack-10fps-sim-linking-2f69a91f2e'.
# Rule: preset: the complete trial of best COMBINED HOTA on all tuning videos; held-aside estimate: per fold, the best trial on the other folds scored on that fold.
# Trial 23: COMBINED HOTA 65.59 on the tuning videos (the base config: 62.42); held-aside estimate 65.39 vs 62.42.
_base_ = ['fairmot_cached-dets_tuned-animaltrack-10fps-sim.py']
model = dict(
    post_processors=[dict(type='GlobalLinker', new_identity_cost=1.7029283552491847, max_gap=64, motion_sigma=0.4369071037209742, motion_growth=0.2622981192913977, motion_gate=7.317937222013105, extrapolate_frames=8, size_weight=2.644976313711727, gap_weight=0.0215319164523107, window=4)])
