# ByteTrack with the tiny YOLOX of configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py on the demo data: the
# detector-in-the-loop path on a CPU in seconds (tests). The tracker keeps the official defaults except the
# box-area filter (the demo frames are 160 px wide) and takes every detection the tiny detector gives.
_base_ = ['../yolox/yolox_debug_1xb4-2it_vastmat-demo.py']

detector = _base_.model
detector.pop('data_preprocessor')
del _base_.model

model = dict(
    type='TrackingByDetection',
    data_preprocessor=dict(type='TrackingDataPreprocessor', pad_size_divisor=32),
    detector=detector,
    tracker=dict(type='BYTETracker', matcher=dict(type='IoU', plus_one=True), min_box_area=None))

tracking_pipeline = [
    dict(
        type='TransformBroadcaster',
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='Resize', scale=_base_.img_scale, keep_ratio=True),
            dict(type='Pad', pad_to_square=True, pad_val=dict(img=(114.0, 114.0, 114.0))),  # as the detector's
        ]),
    dict(type='PackVastMATInputs')
]
test_dataloader = dict(
    _delete_=True,
    batch_size=1,
    num_workers=0,
    sampler=dict(type='TrackImgSampler'),
    dataset=dict(
        type='VastMATDataset',
        data_root=_base_.data_root,
        protocol='protocol1',
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
