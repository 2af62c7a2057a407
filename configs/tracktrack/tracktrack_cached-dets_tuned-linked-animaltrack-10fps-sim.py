# Tuned by tools/tune.py: tracktrack_cached-dets.py on animaltrack-10fps-sim (16 videos, 4 folds by video, seed 0).
# Data: ../shared/data/AnimalTrack-10fps-sim/gt; detections: ../shared/data/AnimalTrack-10fps-sim/dets.
# Space 'default+linking', 74 complete / 6 pruned trials (Optuna TPE, median pruner); study 'tracktrack_cached-dets-default+linking-2d4658e04f'.
# Rule: preset: the complete trial of best COMBINED HOTA on all tuning videos; held-aside estimate: per fold, the best trial on the other folds scored on that fold.
# Trial 77: COMBINED HOTA 72.92 on the tuning videos (the base config: 63.37); held-aside estimate 72.84 vs 63.37.
# Matcher: diou.
# Set for every trial (--cfg-options): model.tracker.deleted_dets, model.tracker.camera_motion, model.post_processors.
_base_ = ['tracktrack_cached-dets.py']
model = dict(
    tracker=dict(
        deleted_dets=None,
        camera_motion=None,
        det_thr=0.4698451526116451,
        init_thr=0.5247944044275916,
        match_thr=0.5274836176923398,
        reduce_step=0.008078929362908951,
        penalty_p=0.32795676986123734,
        penalty_q=0.1404365467553457,
        tai_thr=0.5521122985939194,
        min_len=1,
        max_time_lost=28,
        min_box_area=100,
        matcher=dict(_delete_=True, type='DIoU')),
    post_processors=[dict(type='GlobalLinker', new_identity_cost=3.921244678578273, max_gap=29, motion_sigma=0.10277867828470695, motion_growth=0.027219976144524885, motion_gate=4.0138440622912634, extrapolate_frames=9, size_weight=1.46544071695646, gap_weight=0.18111360408763988, window=5)])
