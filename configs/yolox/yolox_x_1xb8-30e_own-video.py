# The full-size YOLOX-X (yolox_x_8xb4-80e_vastmat-p1.py) fine-tuned on your own labelled video, as imported by
# tools/data/import_labels.py, on one GPU: the root's Protocol 1 train sequence (the labelled frames of
# --train-frames), tested on its test sequence (--test-frames). Start from mmdet's COCO-trained YOLOX-X, as ByteTrack
# starts its detectors (its 80-class classification layer is skipped with a warning, the rest loads):
#   python tools/train.py configs/yolox/yolox_x_1xb8-30e_own-video.py --data-root data/fly --checkpoint COCO_CKPT
# A few hundred frames of one video at 8 images a batch: 30 epochs (the last 5 without mosaic and mixup), lr 0.001
# per 8 images as ByteTrack's schedule, validation every 5 epochs. Input 640 px: the videos researchers label are
# rarely larger than 1280 px, and YOLOX-X's COCO scale is 640. The demo-size model of the same recipe:
# yolox_tiny_1xb8-600it_own-video.py (docs/own_data.md).
_base_ = ['./yolox_x_8xb4-80e_vastmat-p1.py']

data_root = 'data/own_video/'  # replaced by --data-root
img_scale = (640, 640)  # width, height
batch_size = 8
max_epochs = 30
num_last_epochs = 5
base_lr = 0.001 / 8 * batch_size

train_pipeline = [
    dict(type='Mosaic', img_scale=img_scale, pad_val=114.0, bbox_clip_border=False),
    dict(type='RandomAffine', scaling_ratio_range=(0.5, 1.5), border=(-img_scale[0] // 2, -img_scale[1] // 2),
         bbox_clip_border=False),
    dict(type='MixUp', img_scale=img_scale, ratio_range=(0.8, 1.6), pad_val=114.0, bbox_clip_border=False),
    dict(type='YOLOXHSVRandomAug'),
    dict(type='RandomFlip', prob=[0.25, 0.25], direction=['horizontal', 'vertical']),  # top-down: no up
    dict(type='Resize', scale=img_scale, keep_ratio=True, clip_object_border=False),
    dict(type='Pad', size_divisor=32, pad_val=dict(img=(114.0, 114.0, 114.0))),
    dict(type='FilterAnnotations', min_gt_bbox_wh=(1, 1), keep_empty=False),
    dict(type='PackDetInputs')
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=img_scale, keep_ratio=True),
    dict(type='Pad', size_divisor=32, pad_val=dict(img=(114.0, 114.0, 114.0))),
    dict(type='LoadAnnotations', with_bbox=True),
    dict(type='PackDetInputs',
         meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape', 'scale_factor', 'instances'))
]
train_dataloader = dict(batch_size=batch_size, num_workers=4,
                        dataset=dict(dataset=dict(data_root=data_root), pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(data_root=data_root, pipeline=test_pipeline))
test_dataloader = val_dataloader

train_cfg = dict(max_epochs=max_epochs, val_begin=5, val_interval=5)
optim_wrapper = dict(optimizer=dict(lr=base_lr))
param_scheduler = [
    dict(type='QuadraticWarmupLR', by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=base_lr * 0.05, begin=1, T_max=max_epochs - num_last_epochs,
         end=max_epochs - num_last_epochs, by_epoch=True, convert_to_iter_based=True),
    dict(type='ConstantLR', by_epoch=True, factor=1, begin=max_epochs - num_last_epochs, end=max_epochs),
]
custom_hooks = [
    dict(type='YOLOXModeSwitchHook', num_last_epochs=num_last_epochs, priority=48),
    dict(type='SyncNormHook', priority=48),
    dict(type='EMAHook', ema_type='ExpMomentumEMA', momentum=0.0001, update_buffers=True, priority=49)
]
auto_scale_lr = dict(base_batch_size=8)
