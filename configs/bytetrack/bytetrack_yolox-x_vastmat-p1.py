# ByteTrack with YOLOX-X on VastMAT Protocol 1 (Seen): the detector runs on every frame, then the official
# ByteTrack association (reference/trackers.md section 1) with the paper's matching threshold 0.6 (section 5.4).
#   python tools/test.py configs/bytetrack/bytetrack_yolox-x_vastmat-p1.py --checkpoint YOLOX_CKPT --work-dir W
# YOLOX_CKPT: a checkpoint of configs/yolox/yolox_x_8xb4-80e_vastmat-p1.py (a detector checkpoint loads into
# model.detector). Faster for association experiments: dump the detections once (tools/test.py YOLOX_CONFIG
# --checkpoint CKPT --dump-dets DIR) and add --det-root DIR here, or use bytetrack_cached-dets.py.
_base_ = ['../yolox/yolox_x_8xb4-80e_vastmat-p1.py']

detector = _base_.model
detector.pop('data_preprocessor')
del _base_.model

model = dict(
    type='TrackingByDetection',
    data_preprocessor=dict(type='TrackingDataPreprocessor', pad_size_divisor=32),
    detector=detector,
    tracker=dict(
        type='BYTETracker',
        track_thresh=0.6,
        low_thresh=0.1,
        track_buffer=30,
        # the official evaluator's rule: lost tracks live 30 frames (3 s at VastMAT's 10 FPS) whatever the video's
        # rate; buffer_frame_rate=None would scale them by the video's rate (10 frames at 10 FPS)
        buffer_frame_rate=30,
        match_thresh=0.6,  # paper section 5.4: cost 1 - IoU below 0.6, i.e. IoU >= 0.4
        second_match_thresh=0.5,
        unconfirmed_match_thresh=0.7,
        fuse_score=True,
        matcher=dict(type='IoU', plus_one=True),
        min_box_area=100,
        aspect_ratio_thresh=None))  # animals are often wider than tall: no "vertical" filter

tracking_pipeline = [
    dict(
        type='TransformBroadcaster',
        transforms=[
            dict(type='LoadImageFromFile', backend_args=_base_.backend_args),
            dict(type='Resize', scale=_base_.img_scale, keep_ratio=True),
            dict(type='Pad', size_divisor=32, pad_val=dict(img=(114.0, 114.0, 114.0))),
        ]),
    dict(type='PackVastMATInputs')
]
test_dataloader = dict(
    _delete_=True,
    batch_size=1,
    num_workers=2,
    persistent_workers=True,
    drop_last=False,
    sampler=dict(type='TrackImgSampler'),
    dataset=dict(
        type='VastMATDataset',
        data_root=_base_.data_root,
        protocol=_base_.protocol,
        split='test',
        load_as='video',
        test_mode=True,
        with_gt=False,  # the tracking metric reads each video's gt.txt
        pipeline=tracking_pipeline))
val_dataloader = test_dataloader
test_evaluator = dict(_delete_=True, type='VastMATMetric', preset='vastmat')
val_evaluator = test_evaluator

# A tracking config: tools/test.py runs it. Its detector trains with the detector's own config (the _base_ above),
# so the training parts inherited from there are dropped: tools/train.py refuses this config with that advice.
train_dataloader = None
train_cfg = None
optim_wrapper = None
param_scheduler = None
