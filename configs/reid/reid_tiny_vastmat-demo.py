# A ReID model small enough to train a few iterations on a CPU in seconds, on the rendered demo VastMAT dataset of
# tools/data/make_demo_data.py (identity crops of the Protocol 1 train ground truth). Same model family and pipeline
# as configs/reid/reid_r50_1xb64-6e_vastmat-p1.py, with ResNet-18 on 64x32 crops.
_base_ = ['./reid_r50_1xb64-6e_vastmat-p1.py']

data_root = 'data/demo/'
input_size = (64, 32)  # height, width
num_classes = 30  # identities of the demo's Protocol 1 train split (the dataset checks it)

model = dict(
    backbone=dict(depth=18),
    head=dict(in_channels=512, fc_channels=64, out_channels=32, num_classes=num_classes),
    init_cfg=None)

train_pipeline = [
    dict(
        type='TransformBroadcaster',
        share_random_params=False,
        transforms=[
            dict(type='LoadCachedFrame'),
            dict(type='CropReIDInstance'),
            dict(type='Resize', scale=input_size[::-1], keep_ratio=False, clip_object_border=False),
            dict(type='RandomFlip', prob=0.5, direction='horizontal'),
        ]),
    dict(type='PackReIDInputs', meta_keys=('flip', 'flip_direction'))
]
test_pipeline = [
    dict(type='LoadCachedFrame'),
    dict(type='CropReIDInstance'),
    dict(type='Resize', scale=input_size[::-1], keep_ratio=False),
    dict(type='PackReIDInputs')
]
train_dataloader = dict(
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        data_root=data_root,
        frame_interval=2,
        max_per_id=8,
        min_size=4,
        num_classes=num_classes,
        triplet_sampler=dict(num_ids=4, ins_per_id=2),
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=32,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(data_root=data_root, frame_interval=4, max_per_id=4, min_size=4, pipeline=test_pipeline))
test_dataloader = val_dataloader

optim_wrapper = dict(optimizer=dict(lr=0.01))
param_scheduler = [dict(type='ConstantLR', factor=1.0, by_epoch=False, begin=0, end=3)]
train_cfg = dict(_delete_=True, type='IterBasedTrainLoop', max_iters=3, val_interval=3)
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=1),
    checkpoint=dict(type='CheckpointHook', interval=3, by_epoch=False))
log_processor = dict(by_epoch=False)
randomness = dict(seed=0)
