# A YOLOX small enough to train and test on a CPU in seconds, on the rendered demo VastMAT dataset of
# tools/data/make_demo_data.py (Protocol 1 train / test, every animal is the class `animal`). Same model family and
# pipeline as a full YOLOX (CSPDarknet + YOLOXPAFPN + YOLOXHead, mosaic / affine / mixup / HSV, SimOTA), at a fraction
# of the width.
_base_ = ['../_base_/default_runtime.py']

data_root = 'data/demo/'
dataset_type = 'VastMATDataset'
img_scale = (160, 160)  # width, height
backend_args = None

norm_cfg = dict(type='BN', momentum=0.03, eps=0.001)
model = dict(
    type='YOLOX',
    data_preprocessor=dict(type='DetDataPreprocessor', pad_size_divisor=32),
    backbone=dict(
        type='CSPDarknet',
        deepen_factor=0.33,
        widen_factor=0.125,
        out_indices=(2, 3, 4),
        use_depthwise=False,
        spp_kernal_sizes=(5, 9, 13),
        norm_cfg=norm_cfg,
        act_cfg=dict(type='Swish')),
    neck=dict(
        type='YOLOXPAFPN',
        in_channels=[32, 64, 128],
        out_channels=32,
        num_csp_blocks=1,
        use_depthwise=False,
        upsample_cfg=dict(scale_factor=2, mode='nearest'),
        norm_cfg=norm_cfg,
        act_cfg=dict(type='Swish')),
    bbox_head=dict(
        type='YOLOXHead',
        num_classes=1,
        in_channels=32,
        feat_channels=32,
        stacked_convs=1,
        strides=(8, 16, 32),
        use_depthwise=False,
        norm_cfg=norm_cfg,
        act_cfg=dict(type='Swish'),
        loss_cls=dict(type='CrossEntropyLoss', use_sigmoid=True, reduction='sum', loss_weight=1.0),
        loss_bbox=dict(type='IoULoss', mode='square', eps=1e-16, reduction='sum', loss_weight=5.0),
        loss_obj=dict(type='CrossEntropyLoss', use_sigmoid=True, reduction='sum', loss_weight=1.0),
        loss_l1=dict(type='L1Loss', reduction='sum', loss_weight=1.0)),
    train_cfg=dict(assigner=dict(type='SimOTAAssigner', center_radius=2.5)),
    # score_thr 0: after a few iterations no score reaches YOLOX's 0.01, and COCO AP of no boxes is undefined;
    # nms max_num 30: the boxes NMS keeps per image (mmdet's YOLOXHead does not apply test_cfg.max_per_img), at most
    # 7 animals per demo frame. Without a cap NMS kept thousands of the 8,400 anchors' boxes per image, and the COCO
    # evaluations of the 30 test frames took 24 s of a 2-iteration training's 28 s (now about 2 s); a debug setting:
    # COCO's AR@100 reads 30 boxes here
    test_cfg=dict(score_thr=0.0, nms=dict(type='nms', iou_threshold=0.65, max_num=30)))

train_pipeline = [
    dict(type='Mosaic', img_scale=img_scale, pad_val=114.0),
    dict(type='RandomAffine', scaling_ratio_range=(0.5, 1.5), border=(-img_scale[0] // 2, -img_scale[1] // 2)),
    dict(type='MixUp', img_scale=img_scale, ratio_range=(0.8, 1.6), pad_val=114.0),
    dict(type='YOLOXHSVRandomAug'),
    dict(type='RandomFlip', prob=0.5),
    dict(type='Resize', scale=img_scale, keep_ratio=True),
    dict(type='Pad', pad_to_square=True, pad_val=dict(img=(114.0, 114.0, 114.0))),
    dict(type='FilterAnnotations', min_gt_bbox_wh=(1, 1), keep_empty=False),
    dict(type='PackDetInputs')
]
test_pipeline = [
    dict(type='LoadImageFromFile', backend_args=backend_args),
    dict(type='Resize', scale=img_scale, keep_ratio=True),
    dict(type='Pad', pad_to_square=True, pad_val=dict(img=(114.0, 114.0, 114.0))),
    dict(type='LoadAnnotations', with_bbox=True),
    # CocoMetric without ann_file builds the COCO ground truth from the packed 'instances'
    dict(type='PackDetInputs',
         meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape', 'scale_factor', 'instances'))
]

train_dataloader = dict(
    batch_size=4,
    num_workers=0,
    persistent_workers=False,
    sampler=dict(type='DefaultSampler', shuffle=True),
    dataset=dict(
        type='MultiImageMixDataset',
        dataset=dict(
            type=dataset_type,
            data_root=data_root,
            protocol='protocol1',
            split='train',
            load_as='image',
            pipeline=[
                dict(type='LoadImageFromFile', backend_args=backend_args),
                dict(type='LoadAnnotations', with_bbox=True)
            ],
            filter_cfg=dict(filter_empty_gt=False, min_size=8),
            backend_args=backend_args),
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=4,
    num_workers=0,
    persistent_workers=False,
    drop_last=False,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        protocol='protocol1',
        split='test',
        load_as='image',
        test_mode=True,
        pipeline=test_pipeline,
        backend_args=backend_args))
test_dataloader = val_dataloader
# mmdet's COCO metric and VastMAT's (AP, AP50, AP75, AR@1/10/100 overall and per animal group)
val_evaluator = [dict(type='CocoMetric', metric='bbox', backend_args=backend_args), dict(type='VastMATDetMetric')]
test_evaluator = val_evaluator

train_cfg = dict(type='IterBasedTrainLoop', max_iters=2, val_interval=2)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='SGD', lr=0.01, momentum=0.9, weight_decay=5e-4, nesterov=True),
    paramwise_cfg=dict(norm_decay_mult=0., bias_decay_mult=0.))
param_scheduler = [dict(type='ConstantLR', factor=1.0, by_epoch=False, begin=0, end=2)]

default_hooks = dict(
    logger=dict(type='LoggerHook', interval=1),
    checkpoint=dict(type='CheckpointHook', interval=2, by_epoch=False))
log_processor = dict(by_epoch=False)
randomness = dict(seed=0)
auto_scale_lr = dict(enable=False, base_batch_size=4)
