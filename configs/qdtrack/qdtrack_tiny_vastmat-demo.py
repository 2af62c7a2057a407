# QDTrack small enough to train and track on a CPU in seconds, on the rendered demo data (tools/data/make_demo_data.py):
# the model, losses, pair sampling and tracker of the full config at a fraction of the width (ResNet-18 with 16 base
# channels, 32-channel FPN and heads) and at the demo frames' own size, without pretrained weights.
#   python tools/train.py configs/qdtrack/qdtrack_tiny_vastmat-demo.py
#   python tools/test.py configs/qdtrack/qdtrack_tiny_vastmat-demo.py \
#       --checkpoint work_dirs/qdtrack_tiny_vastmat-demo/iter_16.pth
_base_ = ['./qdtrack_faster-rcnn_r50_fpn_8xb2-4e_vastmat-p1.py']

data_root = 'data/demo/'
img_scale = (192, 144)  # the demo frames' size
width = 32

model = dict(
    detector=dict(
        init_cfg=None,
        backbone=dict(depth=18, base_channels=16, frozen_stages=-1, norm_cfg=dict(type='BN', requires_grad=True),
                      init_cfg=None),
        neck=dict(in_channels=[16, 32, 64, 128], out_channels=width),
        rpn_head=dict(in_channels=width, feat_channels=width),
        roi_head=dict(bbox_roi_extractor=dict(out_channels=width),
                      bbox_head=dict(in_channels=width, fc_out_channels=64)),
        train_cfg=dict(rpn_proposal=dict(nms_pre=200, max_per_img=100), rcnn=dict(sampler=dict(num=64))),
        test_cfg=dict(rpn=dict(nms_pre=200, max_per_img=100))),
    track_head=dict(
        roi_extractor=dict(out_channels=width),
        embed_head=dict(num_convs=1, in_channels=width, conv_out_channels=width, fc_out_channels=64,
                        embed_channels=32, norm_cfg=dict(type='GN', num_groups=8)),
        train_cfg=dict(sampler=dict(num=64))),
    # a few iterations leave every score low: start tracks from lower scores so that the demo test has tracks
    tracker=dict(init_score_thr=0.05, obj_score_thr=0.05))

train_pipeline = [
    dict(type='VastMATRefFrameSample', num_ref_imgs=1, frame_range_seconds=10 / 30, filter_key_img=True),
    dict(
        type='TransformBroadcaster',
        share_random_params=True,
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='LoadTrackAnnotations'),
            dict(type='RandomResize', scale=img_scale, ratio_range=(0.8, 1.2), keep_ratio=True,
                 clip_object_border=False),
            dict(type='PhotoMetricDistortion')
        ]),
    dict(
        type='TransformBroadcaster',
        share_random_params=False,
        transforms=[dict(type='RandomCrop', crop_size=img_scale, bbox_clip_border=False)]),
    dict(type='TransformBroadcaster', share_random_params=True, transforms=[dict(type='RandomFlip', prob=0.5)]),
    dict(type='PackVastMATInputs')
]
test_pipeline = [
    dict(
        type='TransformBroadcaster',
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='Resize', scale=img_scale, keep_ratio=True),
        ]),
    dict(type='PackVastMATInputs')
]
train_dataloader = dict(
    batch_size=4, num_workers=0, persistent_workers=False,
    dataset=dict(data_root=data_root, pipeline=train_pipeline))
val_dataloader = dict(num_workers=0, persistent_workers=False,
                      dataset=dict(data_root=data_root, pipeline=test_pipeline))
test_dataloader = val_dataloader

optim_wrapper = dict(optimizer=dict(lr=0.0025))
param_scheduler = [dict(type='LinearLR', start_factor=0.1, by_epoch=False, begin=0, end=4)]
train_cfg = dict(_delete_=True, type='IterBasedTrainLoop', max_iters=16, val_interval=16)
default_hooks = dict(logger=dict(interval=1), checkpoint=dict(type='CheckpointHook', interval=8, by_epoch=False))
log_processor = dict(by_epoch=False, window_size=1)  # each iteration's own losses in the log
custom_hooks = []
