# The demo detector of `make demo` (tools/zoo_benchmark.py): the small YOLOX of yolox_debug_1xb4-2it_vastmat-demo.py
# (same network), trained long enough on a CPU (about 2 minutes on 2 cores) that its boxes track: 1,200 iterations
# of batch 8 on the Protocol 1 train videos of the rendered demo data, at the frames' own 192 px. After 800
# iterations its AP50 is about the same (51.1 against 50.8 on the demo's first 3 test videos), but its scores are
# less confident, and ByteTrack at its official thresholds (births at 0.7) tracks a third of the animals: HOTA 18.0
# against 36.4.
#
# Recipe for training from scratch in minutes rather than YOLOX's 300 epochs: AdamW (lr 4e-3, cosine after a
# 30-iteration warm-up) converges several times faster than YOLOX's SGD on this data (measured: AP50 0.33 vs 0.10
# after 600 iterations); mosaic and mixup are left out (they help long schedules, and slow a short one down); scale
# jitter and flips stay, and the colour jitter covers the whole hue circle (every rendered animal has its own random
# colour, so a detector trained on a few dozen of them must not learn their colours: AP50 0.46 vs 0.33 after 600
# iterations with YOLOX's default jitter). Data loading in the main process: a worker process on 2 cores made each
# iteration slower (0.40 s vs 0.25 s).
_base_ = ['./yolox_debug_1xb4-2it_vastmat-demo.py']

img_scale = (192, 192)  # width, height: the demo frames are 192 x 144
max_iters = 1200
zoo_seconds_per_iter = 0.1417  # measured as make demo runs it (vastmat/experiments/zoo_plan.py: 1 thread in a worker)
zoo_probe_seconds_per_iter = 0.1553  # its pace probe there (vastmat/experiments/zoo_pace.py), the median of 3

train_pipeline = [
    dict(type='RandomAffine', scaling_ratio_range=(0.7, 1.3), max_rotate_degree=0, max_shear_degree=0,
         border=(0, 0)),
    dict(type='YOLOXHSVRandomAug', hue_delta=90, saturation_delta=80, value_delta=60),  # OpenCV hue: 0-180
    dict(type='RandomFlip', prob=0.5),
    dict(type='Resize', scale=img_scale, keep_ratio=True),
    dict(type='Pad', pad_to_square=True, pad_val=dict(img=(114.0, 114.0, 114.0))),
    dict(type='FilterAnnotations', min_gt_bbox_wh=(1, 1), keep_empty=False),
    dict(type='PackDetInputs')
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=img_scale, keep_ratio=True),
    dict(type='Pad', pad_to_square=True, pad_val=dict(img=(114.0, 114.0, 114.0))),
    dict(type='LoadAnnotations', with_bbox=True),
    dict(type='PackDetInputs',
         meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape', 'scale_factor', 'instances'))
]
train_dataloader = dict(batch_size=8, num_workers=0, persistent_workers=False,
                        sampler=dict(type='InfiniteSampler', shuffle=True),  # iteration-based: 30 epochs
                        dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader

# YOLOX's own test threshold (score_thr 0.01, NMS 0.65)
model = dict(test_cfg=dict(score_thr=0.01))

train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
optim_wrapper = dict(optimizer=dict(_delete_=True, type='AdamW', lr=0.004, weight_decay=0.05))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=False, begin=0, end=30),
    dict(type='CosineAnnealingLR', by_epoch=False, begin=30, end=max_iters, eta_min=1e-4)
]
default_hooks = dict(logger=dict(interval=50), checkpoint=dict(interval=max_iters))
auto_scale_lr = dict(base_batch_size=8)
