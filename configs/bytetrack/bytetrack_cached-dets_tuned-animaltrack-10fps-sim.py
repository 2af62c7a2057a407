# Tuned by tools/tune.py: bytetrack_cached-dets.py on AnimalTrack-10fps-sim (32 videos, 4 folds by video, seed 0).
# Data: ../shared/data/AnimalTrack-10fps-sim/gt; detections: ../shared/data/AnimalTrack-10fps-sim/dets.
# Space 'default', 57 complete / 7 pruned trials (Optuna TPE, median pruner); study 'bytetrack_cached-dets-default-dd02d55621'.
# Rule: preset: the complete trial of best COMBINED HOTA on all tuning videos; held-aside estimate: per fold, the best trial on the other folds scored on that fold.
# Trial 38: COMBINED HOTA 72.42 on the tuning videos (the base config: 66.41); held-aside estimate 72.12 vs 66.41.
# Matcher: cda_motion_adaptive,r_high=0.0237618,a_fast=0.308076.
_base_ = ['bytetrack_cached-dets.py']
model = dict(
    tracker=dict(
        track_thresh=0.3202945339936224,
        low_thresh=0.28610616149404317,
        match_thresh=0.8481167893374881,
        second_match_thresh=0.6266840246713481,
        unconfirmed_match_thresh=0.6770446174482793,
        track_buffer=23,
        fuse_score=True,
        min_box_area=None,
        reported_box='detection',
        new_track_margin=0.1453303170372403,
        lost_in_second_stage=True,
        freeze_lost_height=False,
        duplicate_thresh=0.013155264254300691,
        matcher=dict(_delete_=True, type='MotionAdaptiveCDA', r_low=0.0, r_high=0.0237618, crowd_radius=1.0, crowd_full=4.0, n_full=None, a_still=1.0, a_fast=0.308076, fallback=dict(type='CDA', mode='forward', k=0.05, n_ref=10, alpha_ref=0.5, alpha_min=0.0, alpha_max=1.0))))
