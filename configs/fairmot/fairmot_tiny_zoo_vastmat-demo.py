# The zoo's FairMOT (`make demo`, tools/zoo_benchmark.py): the tiny network of fairmot_tiny_vastmat-demo.py trained
# long enough on a CPU that it tracks, on the Protocol 1 train videos of the rendered demo data, then tested with
# the JDE tracker at its official thresholds times the zoo's calibrated scale.
#
# Recipe for training from scratch in minutes (as the demo YOLOX's): AdamW with a warm-up and a cosine decay instead
# of the official Adam 1e-4 constant, and a colour jitter over the whole hue circle (every rendered animal has its
# own random colour: a detector trained on a few dozen of them must not learn their colours).
_base_ = ['./fairmot_tiny_vastmat-demo.py']

img_scale = (192, 144)  # the demo frames' own size
max_iters = 600
zoo_seconds_per_iter = 0.215  # measured as make demo runs it (vastmat/experiments/zoo_plan.py: 1 thread in a worker)
zoo_probe_seconds_per_iter = 0.231  # its pace probe there (vastmat/experiments/zoo_pace.py), the median of 3

# test thresholds: the zoo's calibration, vastmat/experiments/zoo_calibration.py (the values below: make demo's
# choice on the dev videos, for a run that does not calibrate)
zoo_official_thresholds = {'model.detector.test_cfg.conf_thres': 0.4, 'model.tracker.conf_thres': 0.4}
model = dict(
    # plain convolutions in place of DCNv2 in the upsampling (mmcv's CPU DCN backward: 3.8 of 4.4 s an iteration)
    detector=dict(backbone=dict(deformable=False), test_cfg=dict(topk=100, conf_thres=0.2)),  # official 0.4 x 0.5
    tracker=dict(conf_thres=0.2, min_box_area=None))  # official 0.4 x 0.5; the demo's small animals stay

train_pipeline = [
    dict(type='UniformRefFrameSample', num_ref_imgs=0, frame_range=0, filter_key_img=False),  # the key frame
    dict(
        type='TransformBroadcaster',
        share_random_params=True,
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='LoadTrackAnnotations'),
            dict(type='YOLOXHSVRandomAug', hue_delta=90, saturation_delta=80, value_delta=60),
            dict(type='FixShapeResize', width=img_scale[0], height=img_scale[1], keep_ratio=True,
                 pad_val=dict(img=127.5), clip_object_border=False, interpolation='area'),
            dict(type='FairMOTRandomAffine'),
            dict(type='RandomFlip', prob=0.5),
        ]),
    dict(type='PackVastMATInputs')
]
test_pipeline = [
    dict(
        type='TransformBroadcaster',
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='FixShapeResize', width=img_scale[0], height=img_scale[1], keep_ratio=True,
                 pad_val=dict(img=127.5), interpolation='area'),
        ]),
    dict(type='PackVastMATInputs')
]
# iteration-based: an endless sampler, so mmengine's loop does not restart the dataloader (and pause 2 s) each pass
train_dataloader = dict(batch_size=8, sampler=dict(type='InfiniteTrackImgSampler'),
                        dataset=dict(pipeline=train_pipeline))
test_dataloader = dict(dataset=dict(pipeline=test_pipeline))

optim_wrapper = dict(optimizer=dict(_delete_=True, type='AdamW', lr=4e-3, weight_decay=0.05))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=False, begin=0, end=30),
    dict(type='CosineAnnealingLR', by_epoch=False, begin=30, end=max_iters, eta_min=1e-4)
]
train_cfg = dict(max_iters=max_iters)
default_hooks = dict(logger=dict(interval=50), checkpoint=dict(interval=max_iters))
