# The zoo's TransTrack (`make demo`, tools/zoo_benchmark.py): the narrow model of transtrack_tiny_vastmat-demo.py
# trained long enough on a CPU to learn, on the Protocol 1 train videos of the rendered demo data (single frames and
# a shifted copy, the released recipe), then tested with TransTrack's tracker at its official threshold times the
# zoo's calibrated scale.
#
# Recipe for training in minutes: the backbone is the demo YOLOX's, pre-trained by the zoo's detector training on the
# same videos (configs/_base_/models/yolox_demo_backbone.py: the role of the ImageNet weights at full size), and
# frozen there (official: trained at 0.1 of the learning rate; frozen, an iteration costs a fifth less for the same
# mean HOTA, as the zoo's MOTIP); a larger learning rate than the official 2e-4 with a warm-up and a cosine decay, and
# a colour jitter over the whole hue circle (every rendered animal has its own random colour). 2,000 iterations: a
# Deformable DETR learns slowly. What each choice measured: docs/zoo.md, "How the zoo's recipes were chosen".
_base_ = ['./transtrack_tiny_vastmat-demo.py', '../_base_/models/yolox_demo_backbone.py']

max_iters = 2000
zoo_seconds_per_iter = 0.0985  # measured as make demo runs it (vastmat/experiments/zoo_plan.py: 1 thread in a worker)
zoo_probe_seconds_per_iter = 0.1009  # its pace probe there (vastmat/experiments/zoo_pace.py), the median of 3

# test thresholds: the zoo's calibration, vastmat/experiments/zoo_calibration.py (the value below: make demo's
# choice on the dev videos, for a run that does not calibrate)
zoo_official_thresholds = {'model.tracker.track_thresh': 0.4}
model = dict(
    data_preprocessor={{_base_.demo_backbone_input}},
    detector=dict(backbone={{_base_.demo_backbone_frozen}}),
    tracker=dict(track_thresh=0.4))  # official 0.4 x 1.0 (above)

train_transforms = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadTrackAnnotations'),
    dict(type='YOLOXHSVRandomAug', hue_delta=90, saturation_delta=80, value_delta=60),
    dict(type='RandomFlip', prob=0.5),
    dict(
        type='RandomApply',
        prob=0.5,
        transforms=[
            dict(type='RandomChoiceResize', scales=[(4200, 128), (4200, 160), (4200, 192)], keep_ratio=True,
                 clip_object_border=False),
            dict(type='RandomCrop', crop_type='absolute_range', crop_size=(128, 192), bbox_clip_border=False,
                 allow_negative_crop=True)
        ]),
    dict(type='RandomChoiceResize', scales={{_base_.train_scales}}, keep_ratio=True, clip_object_border=False),
]
train_pipeline = [
    dict(type='UniformRefFrameSample', num_ref_imgs=0, frame_range=0, filter_key_img=False),
    dict(type='TransformBroadcaster', share_random_params=True, transforms=train_transforms),
    dict(type='PackVastMATInputs')
]
# iteration-based: an endless sampler, so mmengine's loop does not restart the dataloader (and pause 2 s) each pass
train_dataloader = dict(batch_size=4, sampler=dict(type='InfiniteTrackImgSampler'),
                        dataset=dict(pipeline=train_pipeline))

optim_wrapper = dict(optimizer=dict(lr=1e-3))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=False, begin=0, end=30),
    dict(type='CosineAnnealingLR', by_epoch=False, begin=30, end=max_iters, eta_min=5e-5)
]
train_cfg = dict(max_iters=max_iters)
default_hooks = dict(logger=dict(interval=50), checkpoint=dict(interval=max_iters))
