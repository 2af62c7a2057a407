# DiffMOT (official association, reference/trackers.md section 2) on cached detections:
#   python tools/test.py configs/diffmot/diffmot_cached-dets.py --det-root DETS [--data-root DATA] --work-dir W \
#       --cfg-options model.tracker.motion.checkpoint=work_dirs/d2mp_1xb2048-800e_vastmat-p1/epoch_800.pth
# The D2MP checkpoint is required (configs/d2mp/d2mp_1xb2048-800e_vastmat-p1.py trains it); tracking without one
# stops with a message naming model.tracker.motion.checkpoint. Appearance features, when the det.txt files carry
# them (tools/test.py REID_CONFIG --dump-feats), switch on the first stage's dynamic appearance weights.
# Another matcher (configs/matchers/<name>.py, with its keys): --matcher cda_fixed,alpha=0.25
_base_ = ['../_base_/tracking_cached-dets.py']

model = dict(
    tracker=dict(
        type='DiffMOTTracker',
        # official configs/dancetrack_test.yaml (README: DanceTrack settings); MOT17 uses low_thres 0.1, MOT20 also
        # high_thres 0.4, SportsMOT w_assoc_emb 2.0 and aw_param 1.2
        high_thres=0.6,
        low_thres=0.4,
        w_assoc_emb=2.2,
        aw_param=1.7,
        # the official tracker is built with frame_rate=30: lost tracks live 30 frames (3 s at VastMAT's 10 FPS)
        max_time_lost=30,
        first_iou_thresh=0.1,  # hard-coded in diffmottracker.update
        second_match_thresh=0.5,
        unconfirmed_match_thresh=0.7,
        duplicate_thresh=0.15,  # remove_duplicate_stracks
        alpha_fixed_emb=0.95,  # Deep-OC-SORT's embedding EMA
        matcher=dict(type='IoU', plus_one=True),  # cython_bbox IoU, +1 pixel convention
        motion=dict(type='D2MP', encoder_dim=256, tf_layer=3, eps=0.001, checkpoint=None),
        seed=0))  # the diffusion noise generator, re-seeded for every video
