# Tuned by tools/tune.py: fairmot_cached-dets.py on animaltrack-10fps-sim (32 videos, 4 folds by video, seed 0).
# Data: ../shared/data/AnimalTrack-10fps-sim/gt; detections: work_dirs/at10_jde_inputs.
# The detections are AnimalTrack-10fps-sim's dets/ with a simulated 16-d embedding per detection (its ground-truth
# identity's vector plus noise; false positives noise alone), the JDE golden tests' inputs, written by
#   PYTHONPATH=tests python -c "from helpers.jde_inputs import write_inputs; write_inputs('work_dirs/at10_jde_inputs', 'animaltrack')"
# A real FairMOT's embeddings separate animals differently: re-tune on its dumped detections (--dump-dets).
# Space 'default', 41 complete / 19 pruned trials (Optuna TPE, median pruner); study 'fairmot_cached-dets-default-6aadf6ddbb'.
# Rule: preset: the complete trial of best COMBINED HOTA on all tuning videos; held-aside estimate: per fold, the best trial on the other folds scored on that fold.
# Trial 58: COMBINED HOTA 61.91 on the tuning videos (the base config: 59.22); held-aside estimate 61.65 vs 59.22.
# Matcher: cda_adaptive,k=0.0719978,alpha_ref=0.975914.
_base_ = ['fairmot_cached-dets.py']
model = dict(
    tracker=dict(
        conf_thres=0.46774587945481644,
        track_buffer=42,
        embedding_match_thresh=0.5947363393923291,
        iou_match_thresh=0.6708120035837395,
        unconfirmed_match_thresh=0.8492201262772735,
        motion_lambda=0.9946190855395175,
        feature_momentum=0.8208860772563783,
        min_box_area=None,
        reported_box='kalman',
        matcher=dict(_delete_=True, type='CDA', mode='forward', k=0.0719978, n_ref=10, alpha_ref=0.975914, alpha_min=0.0, alpha_max=1.0)))
