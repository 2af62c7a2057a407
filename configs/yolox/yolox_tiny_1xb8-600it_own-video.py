# The demo-size YOLOX (yolox_tiny_1xb8-1200it_vastmat-demo.py) trained on your own labelled video, as imported by
# tools/data/import_labels.py: it trains on the root's Protocol 1 train sequence (the labelled frames of
# --train-frames) and is tested on its test sequence (--test-frames), frames it never saw (docs/own_data.md):
#   python tools/train.py configs/yolox/yolox_tiny_1xb8-600it_own-video.py --data-root data/fly \
#       [--checkpoint DEMO_YOLOX.pth]
# From scratch by default; --checkpoint starts from another detector's weights (e.g. the demo's, after make demo).
# Frames are read at 192 px (an animal of 90 px in a 384 px frame becomes 45 px); top-down videos have no up, so
# frames flip vertically as well as horizontally. The full-size model is yolox_x_1xb8-30e_own-video.py.
_base_ = ['./yolox_tiny_1xb8-1200it_vastmat-demo.py']

data_root = 'data/own_video/'  # replaced by --data-root
max_iters = 600
img_scale = (192, 192)  # width, height

train_pipeline = [
    dict(type='RandomAffine', scaling_ratio_range=(0.7, 1.3), max_rotate_degree=0, max_shear_degree=0,
         border=(0, 0)),
    dict(type='YOLOXHSVRandomAug', hue_delta=90, saturation_delta=80, value_delta=60),
    dict(type='RandomFlip', prob=[0.25, 0.25], direction=['horizontal', 'vertical']),
    dict(type='Resize', scale=img_scale, keep_ratio=True),
    dict(type='Pad', pad_to_square=True, pad_val=dict(img=(114.0, 114.0, 114.0))),
    dict(type='FilterAnnotations', min_gt_bbox_wh=(1, 1), keep_empty=False),
    dict(type='PackDetInputs')
]
train_dataloader = dict(dataset=dict(dataset=dict(data_root=data_root), pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(data_root=data_root))
test_dataloader = val_dataloader

train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=False, begin=0, end=30),
    dict(type='CosineAnnealingLR', by_epoch=False, begin=30, end=max_iters, eta_min=1e-4)
]
default_hooks = dict(checkpoint=dict(interval=max_iters))
