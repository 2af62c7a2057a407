# YOLOX-X for VastMAT Protocol 1 (Seen), one class `animal` (paper sections 3.5 and 5.1).
# mmdet's yolox_x schedule adapted as ByteTrack adapted it to MOT (mmdet configs/bytetrack/yolox_x_8xb4-80e_*):
# 1440x800 input, 80 epochs (quadratic warm-up, cosine, last 10 without mosaic/mixup), SGD lr 0.001 per 8 images,
# mosaic / random affine / mixup / HSV / flip, EMA, SyncNorm. COCO-pretrained init when a checkpoint is given
# (mmdet's yolox_x_8x8_300e_coco_20211126_140254-1ef88d67.pth; its 80-class classification layer does not fit the
# single class and is skipped with a warning, everything else is loaded):
#   tools/dist_train.sh configs/yolox/yolox_x_8xb4-80e_vastmat-p1.py 8 --checkpoint COCO_CKPT
# Cached detections for the trackers:
#   python tools/test.py configs/yolox/yolox_x_8xb4-80e_vastmat-p1.py --checkpoint CKPT --dump-dets DIR
_base_ = 'mmdet::yolox/yolox_x_8xb8-300e_coco.py'

default_scope = 'vastmat'
runner_type = 'VastMATRunner'

data_root = 'data/vastmat/'
protocol = 'protocol1'
dataset_type = 'VastMATDataset'
img_scale = (1440, 800)  # width, height
batch_size = 4
backend_args = None

model = dict(
    bbox_head=dict(num_classes=1),
    # ByteTrack's detector settings: every box above 0.01 (the trackers use low scores too), NMS 0.7
    test_cfg=dict(score_thr=0.01, nms=dict(type='nms', iou_threshold=0.7)))

train_pipeline = [
    dict(type='Mosaic', img_scale=img_scale, pad_val=114.0, bbox_clip_border=False),
    dict(type='RandomAffine', scaling_ratio_range=(0.1, 2), border=(-img_scale[0] // 2, -img_scale[1] // 2),
         bbox_clip_border=False),
    dict(type='MixUp', img_scale=img_scale, ratio_range=(0.8, 1.6), pad_val=114.0, bbox_clip_border=False),
    dict(type='YOLOXHSVRandomAug'),
    dict(type='RandomFlip', prob=0.5),
    dict(type='Resize', scale=img_scale, keep_ratio=True, clip_object_border=False),
    dict(type='Pad', size_divisor=32, pad_val=dict(img=(114.0, 114.0, 114.0))),
    dict(type='FilterAnnotations', min_gt_bbox_wh=(1, 1), keep_empty=False),
    dict(type='PackDetInputs')
]
test_pipeline = [
    dict(type='LoadImageFromFile', backend_args=backend_args),
    dict(type='Resize', scale=img_scale, keep_ratio=True),
    dict(type='Pad', size_divisor=32, pad_val=dict(img=(114.0, 114.0, 114.0))),
    dict(type='LoadAnnotations', with_bbox=True),
    dict(type='PackDetInputs',
         meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape', 'scale_factor', 'instances'))
]

train_dataloader = dict(
    _delete_=True,
    batch_size=batch_size,
    num_workers=4,
    persistent_workers=True,
    pin_memory=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    dataset=dict(
        type='MultiImageMixDataset',
        dataset=dict(
            type=dataset_type,
            data_root=data_root,
            protocol=protocol,
            split='train',
            load_as='image',
            filter_cfg=dict(filter_empty_gt=True, min_size=32),
            pipeline=[
                dict(type='LoadImageFromFile', backend_args=backend_args),
                dict(type='LoadAnnotations', with_bbox=True)
            ]),
        pipeline=train_pipeline))
val_dataloader = dict(
    _delete_=True,
    batch_size=1,
    num_workers=2,
    persistent_workers=True,
    drop_last=False,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        protocol=protocol,
        split='test',
        load_as='image',
        test_mode=True,
        pipeline=test_pipeline))
test_dataloader = val_dataloader
val_evaluator = [dict(type='CocoMetric', metric='bbox', backend_args=backend_args), dict(type='VastMATDetMetric')]
test_evaluator = val_evaluator

max_epochs = 80
num_last_epochs = 10
base_lr = 0.001 / 8 * batch_size  # 8 GPUs x 4 images
# The loops are stated whole (_delete_): inherited from the mmdet:: base they carry _scope_='mmdet', and a loop builds
# its dataloader and evaluator in its own scope, where VastMATDataset and VastMATDetMetric are not registered.
train_cfg = dict(_delete_=True, type='EpochBasedTrainLoop', max_epochs=max_epochs, val_begin=70, val_interval=5)
val_cfg = dict(_delete_=True, type='ValLoop')
test_cfg = dict(_delete_=True, type='TestLoop')
optim_wrapper = dict(optimizer=dict(lr=base_lr))
param_scheduler = [
    dict(type='QuadraticWarmupLR', by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=base_lr * 0.05, begin=1, T_max=max_epochs - num_last_epochs,
         end=max_epochs - num_last_epochs, by_epoch=True, convert_to_iter_based=True),
    dict(type='ConstantLR', by_epoch=True, factor=1, begin=max_epochs - num_last_epochs, end=max_epochs),
]
default_hooks = dict(checkpoint=dict(interval=1, max_keep_ckpts=5))
custom_hooks = [
    dict(type='YOLOXModeSwitchHook', num_last_epochs=num_last_epochs, priority=48),
    dict(type='SyncNormHook', priority=48),
    dict(type='EMAHook', ema_type='ExpMomentumEMA', momentum=0.0001, update_buffers=True, priority=49)
]
auto_scale_lr = dict(base_batch_size=32)

del _base_.tta_model
del _base_.tta_pipeline
del _base_.train_dataset
