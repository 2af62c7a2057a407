# Tuned by tools/tune.py: sort_cached-dets.py on AnimalTrack-10fps-sim (32 videos, 4 folds by video, seed 0).
# Data: ../shared/data/AnimalTrack-10fps-sim/gt; detections: ../shared/data/AnimalTrack-10fps-sim/dets.
# Space 'default', 24 complete / 5 pruned trials (Optuna TPE, median pruner); study 'sort_cached-dets-default-1ca546b619'.
# Rule: preset: the complete trial of best COMBINED HOTA on all tuning videos; held-aside estimate: per fold, the best trial on the other folds scored on that fold.
# Trial 26: COMBINED HOTA 71.93 on the tuning videos (the base config: 55.98); held-aside estimate 71.89 vs 55.98.
_base_ = ['sort_cached-dets.py']
model = dict(
    tracker=dict(
        max_age=3,
        min_hits=1,
        iou_threshold=0.21633125351368496))
