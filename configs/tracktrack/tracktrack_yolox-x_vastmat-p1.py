# TrackTrack with YOLOX-X in the loop on VastMAT Protocol 1 (Seen), the VastMAT paper's settings
# (configs/tracktrack/tracktrack_cached-dets.py) with every input made in the loop, as the official pipeline makes
# them offline (reference/trackers.md section 3, "Inputs"):
#   detections  YOLOX-X, score >= 0.1 (official detect.py --conf 0.1) with NMS 0.80 (the main set) and NMS 0.95
#               (extra set 'nms95', the source of the deleted detections) from one forward pass
#   appearance  the ReID model of configs/reid/reid_r50_1xb64-6e_vastmat-p1.py (ResNet-50, 384x128) on crops of the
#               frame; its weights come with the model checkpoint, or from REID_CKPT through init_cfg below
#   camera      ECC on consecutive frames (mmdet's CameraMotionCompensation)
#   python tools/test.py configs/tracktrack/tracktrack_yolox-x_vastmat-p1.py --checkpoint YOLOX_CKPT --work-dir W \
#       --cfg-options model.reid.init_cfg.checkpoint=REID_CKPT model.post_processors.0.checkpoint=AFLINK_CKPT
# Faster for association experiments: dump the inputs once (--dump-dets, --dump-feats, --dump-warps) and use
# tracktrack_cached-dets.py.
_base_ = ['../bytetrack/bytetrack_yolox-x_vastmat-p1.py', '../_base_/trackers/tracktrack_vastmat.py']

model = dict(
    detector=dict(test_cfg=dict(score_thr=0.1, nms=dict(type='nms', iou_threshold=0.80))),
    extra_detections=dict(nms95=dict(nms=dict(type='nms', iou_threshold=0.95))),
    # the model of configs/reid/reid_r50_1xb64-6e_vastmat-p1.py (keep in step: its checkpoint loads here)
    reid=dict(
        type='BaseReID',
        data_preprocessor=dict(type='VastMATReIDDataPreprocessor', mean=[123.675, 116.28, 103.53],
                               std=[58.395, 57.12, 57.375], to_rgb=True),
        backbone=dict(type='mmpretrain.ResNet', depth=50, num_stages=4, out_indices=(3, ), style='pytorch'),
        neck=dict(type='GlobalAveragePooling'),
        head=dict(type='LinearReIDHead', num_fcs=1, in_channels=2048, fc_channels=1024, out_channels=128,
                  num_classes=22883, loss_cls=dict(type='mmpretrain.CrossEntropyLoss', loss_weight=1.0),
                  loss_triplet=dict(type='TripletLoss', margin=0.3, loss_weight=1.0),
                  norm_cfg=dict(type='BN1d'), act_cfg=dict(type='ReLU')),
        init_cfg=dict(type='Pretrained', checkpoint='work_dirs/reid_r50_1xb64-6e_vastmat-p1/epoch_6.pth')),
    reid_input_size=(384, 128),
    tracker=dict(_delete_=True, camera_motion=dict(type='ECCCameraMotion'), **_base_.tracker),
    post_processors=[_base_.aflink])
