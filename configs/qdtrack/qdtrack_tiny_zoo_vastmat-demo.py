# The zoo's QDTrack (`make demo`, tools/zoo_benchmark.py): the narrow model of qdtrack_tiny_vastmat-demo.py trained
# long enough on a CPU that it tracks, on key / reference frame pairs of the Protocol 1 train videos of the rendered
# demo data, then tested with QDTrack's tracker at its official thresholds times the zoo's calibrated scale.
#
# Recipe for training in minutes: the backbone is the demo YOLOX's, pre-trained by the zoo's detector training on the
# same videos (configs/_base_/models/yolox_demo_backbone.py: the role of the COCO weights at full size); AdamW with a
# warm-up and a cosine decay instead of SGD 0.02; a colour jitter over the whole hue circle (every rendered animal has
# its own random colour). 600 iterations: at 350 a training can still be learning at its end (docs/zoo.md, "How the
# zoo's recipes were chosen").
_base_ = ['./qdtrack_tiny_vastmat-demo.py', '../_base_/models/yolox_demo_backbone.py']

img_scale = (192, 144)
max_iters = 600
zoo_seconds_per_iter = 0.208  # measured as make demo runs it (vastmat/experiments/zoo_plan.py: 1 thread in a worker)
zoo_probe_seconds_per_iter = 0.2097  # its pace probe there (vastmat/experiments/zoo_pace.py), the median of 3

# test thresholds: the zoo's calibration, vastmat/experiments/zoo_calibration.py (the values below: make demo's
# choice on the dev videos, for a run that does not calibrate)
zoo_official_thresholds = {'model.tracker.init_score_thr': 0.9, 'model.tracker.obj_score_thr': 0.5}
model = dict(
    data_preprocessor={{_base_.demo_backbone_input}},
    detector=dict(backbone={{_base_.demo_backbone_from_stride4}}),
    tracker=dict(init_score_thr=0.54, obj_score_thr=0.3))  # official 0.9 / 0.5 x 0.6 (above)

train_pipeline = [
    dict(type='VastMATRefFrameSample', num_ref_imgs=1, frame_range_seconds=10 / 30, filter_key_img=True),
    dict(
        type='TransformBroadcaster',
        share_random_params=True,
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='LoadTrackAnnotations'),
            # at most the frames' own size, and no crop: the official 'RandomCrop' of an upscaled frame can cut
            # every animal out of one frame of a pair on these small frames, and an empty frame stops training
            dict(type='RandomResize', scale=img_scale, ratio_range=(0.7, 1.0), keep_ratio=True,
                 clip_object_border=False),
            dict(type='YOLOXHSVRandomAug', hue_delta=90, saturation_delta=80, value_delta=60),
        ]),
    dict(type='TransformBroadcaster', share_random_params=True, transforms=[dict(type='RandomFlip', prob=0.5)]),
    dict(type='PackVastMATInputs')
]
# iteration-based: an endless sampler, so mmengine's loop does not restart the dataloader (and pause 2 s) each pass
train_dataloader = dict(sampler=dict(type='InfiniteTrackImgSampler'), dataset=dict(pipeline=train_pipeline))

optim_wrapper = dict(optimizer=dict(_delete_=True, type='AdamW', lr=2e-3, weight_decay=0.05))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=False, begin=0, end=30),
    dict(type='CosineAnnealingLR', by_epoch=False, begin=30, end=max_iters, eta_min=1e-4)
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters + 1)
default_hooks = dict(logger=dict(interval=50), checkpoint=dict(interval=max_iters))
