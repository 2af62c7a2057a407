# The zoo's MOTIP detection pre-training (`make demo`, tools/zoo_benchmark.py): the official first stage
# (motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py: ONLY_DETR, single frames, the DETR alone) for the narrow model of
# motip_tiny_zoo_vastmat-demo.py, on the Protocol 1 train videos of the rendered demo data. Its last checkpoint
# starts the zoo's MOTIP training (that config's zoo_load_from), as the pre-training's epoch_20.pth starts the
# full-size one. Trained first by the zoo, from the demo YOLOX's backbone (zoo_pretrained_backbone, inherited).
#
# Recipe for training in minutes: 4 frames a batch (official 2 a GPU x 8 GPUs), the zoo's larger learning rate with a
# warm-up and a cosine decay, and a colour jitter over the whole hue circle as the zoo's TransTrack (every rendered
# animal has its own random colour; the official ColorJitter hue 0.2 is a fifth of the circle); the rest of the
# augmentation (flip, resize, the official clip crop) as the MOTIP training. 2,000 iterations, about half as
# costly as a MOTIP iteration (four frames with gradients against two clips of four frames). The backbone is frozen,
# as in the MOTIP training (inherited).
_base_ = ['./motip_tiny_zoo_vastmat-demo.py']

zoo_load_from = None  # the first stage (the MOTIP training starts from this one)
max_iters = 2000
zoo_seconds_per_iter = 0.067  # measured as make demo runs it (vastmat/experiments/zoo_plan.py: 1 thread in a worker)
zoo_probe_seconds_per_iter = 0.065  # its pace probe there (vastmat/experiments/zoo_pace.py), the median of 3

model = dict(only_detr=True, num_train_frames=1)
# single frames with 1 to 20 evaluated identities (official SAMPLE_LENGTHS [1], as the full-size pre-training)
train_pipeline = [
    dict(type='VastMATClipSample', clip_length=1, min_identities=_base_.min_identities,
         max_identities=_base_.max_identities),
    dict(type='TransformBroadcaster', share_random_params=True, transforms=[
        dict(type='LoadImageFromFile'),
        dict(type='LoadTrackAnnotations'),
        dict(type='YOLOXHSVRandomAug', hue_delta=90, saturation_delta=80, value_delta=60),
        dict(type='RandomFlip', prob=0.5)]),
    _base_.train_augmentation[1],  # the official resize and clip crop (p 0.5)
    dict(type='TransformBroadcaster', share_random_params=True, transforms=[
        dict(type='RandomChoiceResize', scales=_base_.train_scales, keep_ratio=True, clip_object_border=False)]),
    dict(type='PackVastMATInputs')
]
train_dataloader = dict(batch_size=4, dataset=dict(pipeline=train_pipeline))
# the MOTIP training's optimiser, with one clipping set: the ID part gets no gradient (as the full-size pre-training)
optim_wrapper = dict(_delete_=True, type='OptimWrapper', optimizer=_base_.optim_wrapper.optimizer,
                     clip_grad=_base_.optim_wrapper.clip_grad, paramwise_cfg=_base_.optim_wrapper.paramwise_cfg)
param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=False, begin=0, end=30),
    dict(type='CosineAnnealingLR', by_epoch=False, begin=30, end=max_iters, eta_min=5e-5)
]
train_cfg = dict(max_iters=max_iters)
default_hooks = dict(checkpoint=dict(interval=max_iters))
find_unused_parameters = True  # the tracker's modules are not trained in this stage
