# TransTrack small enough to train and track on a CPU in seconds, on the rendered demo data
# (tools/data/make_demo_data.py): the network (feature fusion, detection and track decoders with shared heads),
# training recipe (random shift, track decoder half of the steps, set losses on every layer), augmentations and
# tracker of transtrack_r50_8xb2-20e_vastmat-p1.py, with a narrow ResNet-18 (16 base channels), 32-d transformer
# (1 encoder and 2 decoder layers, 4 heads, 2 points), 20 queries and inputs of 128 px short side (the full
# config's sizes / 6.25, the random shift likewise: 16 px), without ImageNet weights.
#   python tools/train.py configs/transtrack/transtrack_tiny_vastmat-demo.py
#   python tools/test.py configs/transtrack/transtrack_tiny_vastmat-demo.py --checkpoint work_dirs/.../iter_8.pth
_base_ = ['./transtrack_r50_8xb2-20e_vastmat-p1.py']

data_root = 'data/demo/'
width = 32
train_scales = [(213, s) for s in (96, 112, 128)]  # 480..800 / 6.25
test_scale = (213, 128)  # (1333, 800) / 6.25: the 192 x 144 demo frames become 171 x 128

model = dict(
    max_shift=16,  # 100 px at 800 px inputs, / 6.25
    detector=dict(
        num_queries=20,
        official_offset_normalizer=False,  # mmcv's offsets over (W, H), as the cached demo models (base: official)
        backbone=dict(depth=18, base_channels=16, frozen_stages=-1, norm_cfg=dict(type='BN', requires_grad=True),
                      norm_eval=False, init_cfg=None),
        # the neck restated without the base's official conv bias (bias=True): the cached demo models' network
        neck=dict(_delete_=True, type='ChannelMapper', in_channels=[32, 64, 128], kernel_size=1, out_channels=width,
                  act_cfg=None, norm_cfg=dict(type='GN', num_groups=8), num_outs=4),
        encoder=dict(
            num_layers=1,
            layer_cfg=dict(self_attn_cfg=dict(embed_dims=width, num_heads=4, num_points=2),
                           ffn_cfg=dict(embed_dims=width, feedforward_channels=64))),
        decoder=dict(
            num_layers=2,
            layer_cfg=dict(self_attn_cfg=dict(embed_dims=width, num_heads=4),
                           cross_attn_cfg=dict(embed_dims=width, num_heads=4, num_points=2),
                           ffn_cfg=dict(embed_dims=width, feedforward_channels=64))),
        positional_encoding=dict(num_feats=width // 2),
        bbox_head=dict(embed_dims=width),
        test_cfg=dict(max_per_img=20)),
    # a few iterations leave every score low: a low threshold so that the demo test has tracks
    tracker=dict(track_thresh=0.1))

train_transforms = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadTrackAnnotations'),
    dict(type='RandomFlip', prob=0.5),
    # the official RandomSelect(resize, [resize, crop, resize]) (p 0.5 each), its common last resize taken out of
    # the choice (mmcv's RandomChoice cannot share its draw between the frames of a pair)
    dict(
        type='RandomApply',
        prob=0.5,
        transforms=[
            dict(type='RandomChoiceResize', scales=[(4200, 128), (4200, 160), (4200, 192)], keep_ratio=True,
                 clip_object_border=False),
            dict(type='RandomCrop', crop_type='absolute_range', crop_size=(128, 192), bbox_clip_border=False,
                 allow_negative_crop=True)
        ]),
    dict(type='RandomChoiceResize', scales=train_scales, keep_ratio=True, clip_object_border=False),
]
train_pipeline = [
    dict(type='UniformRefFrameSample', num_ref_imgs=0, frame_range=0, filter_key_img=False),
    dict(type='TransformBroadcaster', share_random_params=True, transforms=train_transforms),
    dict(type='PackVastMATInputs')
]
test_pipeline = [
    dict(
        type='TransformBroadcaster',
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='Resize', scale=test_scale, keep_ratio=True),
        ]),
    dict(type='PackVastMATInputs')
]
# min_visibility=None: every box, as the cached demo models (base: 0.25, the official MOT annotations)
train_dataloader = dict(batch_size=2, num_workers=0, persistent_workers=False,
                        dataset=dict(data_root=data_root, min_visibility=None, pipeline=train_pipeline))
test_dataloader = dict(num_workers=0, persistent_workers=False,
                       dataset=dict(data_root=data_root, pipeline=test_pipeline))

load_from = None  # from scratch (the full-size config starts from the converted crowdhuman_final.pth)
max_iters = 8
# from scratch, a few iterations: a larger rate than the official 2e-4 (the multipliers and clipping as official)
optim_wrapper = dict(optimizer=dict(lr=2e-3))
param_scheduler = [dict(type='ConstantLR', factor=1.0, by_epoch=False, begin=0, end=max_iters)]
train_cfg = dict(_delete_=True, type='IterBasedTrainLoop', max_iters=max_iters)
default_hooks = dict(logger=dict(interval=1), checkpoint=dict(interval=4, by_epoch=False))
log_processor = dict(by_epoch=False)
find_unused_parameters = True
randomness = dict(seed=0)
