# DiffMOT with YOLOX-X on VastMAT Protocol 1 (Seen): the detector runs on every frame, then the official DiffMOT
# association (reference/trackers.md section 2) with the D2MP trained on Protocol 1 train.
#   python tools/test.py configs/diffmot/diffmot_yolox-x_vastmat-p1.py --checkpoint YOLOX_CKPT --work-dir W \
#       --cfg-options model.tracker.motion.checkpoint=D2MP_CKPT
# YOLOX_CKPT: a checkpoint of configs/yolox/yolox_x_8xb4-80e_vastmat-p1.py (a detector checkpoint loads into
# model.detector); D2MP_CKPT: one of configs/d2mp/d2mp_1xb2048-800e_vastmat-p1.py. Faster for association
# experiments: dump the detections once (tools/test.py YOLOX_CONFIG --checkpoint CKPT --dump-dets DIR) and use
# diffmot_cached-dets.py.
_base_ = ['../bytetrack/bytetrack_yolox-x_vastmat-p1.py']

model = dict(
    tracker=dict(
        _delete_=True,
        type='DiffMOTTracker',
        high_thres=0.6,  # official DanceTrack test config (the README's settings)
        low_thres=0.4,
        w_assoc_emb=2.2,
        aw_param=1.7,
        max_time_lost=30,  # the official tracker's frame_rate=30 buffer
        first_iou_thresh=0.1,
        second_match_thresh=0.5,
        unconfirmed_match_thresh=0.7,
        duplicate_thresh=0.15,
        alpha_fixed_emb=0.95,
        matcher=dict(type='IoU', plus_one=True),
        # D2MP_CKPT (required to track; None keeps the config buildable without it)
        motion=dict(type='D2MP', encoder_dim=256, tf_layer=3, eps=0.001, checkpoint=None),
        seed=0))
