# Tuned by tools/tune.py: tracktrack_cached-dets.py on AnimalTrack-10fps-sim (32 videos, 4 folds by video, seed 0).
# Data: ../shared/data/AnimalTrack-10fps-sim/gt; detections: ../shared/data/AnimalTrack-10fps-sim/dets.
# Space 'default', 25 complete / 7 pruned trials (Optuna TPE, median pruner); study 'tracktrack_cached-dets-default-e49bef8423'.
# Rule: preset: the complete trial of best COMBINED HOTA on all tuning videos; held-aside estimate: per fold, the best trial on the other folds scored on that fold.
# Trial 24: COMBINED HOTA 72.91 on the tuning videos (the base config: 64.35); held-aside estimate 72.68 vs 64.35.
# Matcher: cda_adaptive,k=0.0900503,alpha_ref=0.247805.
# Set for every trial (--cfg-options): model.tracker.deleted_dets, model.tracker.camera_motion, model.post_processors.
_base_ = ['tracktrack_cached-dets.py']
model = dict(
    tracker=dict(
        deleted_dets=None,
        camera_motion=None,
        det_thr=0.4749805634505471,
        init_thr=0.5743044364061682,
        match_thr=0.772329069556071,
        reduce_step=0.09856814450902676,
        penalty_p=0.2468687974023574,
        penalty_q=0.6222519692516917,
        tai_thr=0.7773320754375324,
        min_len=2,
        max_time_lost=87,
        min_box_area=None,
        matcher=dict(_delete_=True, type='CDA', mode='forward', k=0.0900503, n_ref=10, alpha_ref=0.247805, alpha_min=0.0, alpha_max=1.0)),
    post_processors=[])
