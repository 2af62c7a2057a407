# MOTIP small enough to train and track on a CPU in seconds, on the rendered demo data
# (tools/data/make_demo_data.py): the model, training step (clips, DETR gradients on part of the frames, ID-label
# groups, trajectory occlusion and switch, ID loss), augmentations and tracker of motip_r50_8xb1-10e_vastmat-p1.py,
# with a narrow ResNet-18 (16 base channels), a 32-d DETR (1 encoder and 2 decoder layers, 4 heads, 2 points, 20
# queries), a 2-layer ID decoder on 32-d features and 32-d ID embeddings (2 heads of 32, K = 8 ID words), clips of 4
# frames (rel_pe_length 4 >= miss_tolerance 4) and inputs of 128 px short side, without ImageNet weights.
#   python tools/train.py configs/motip/motip_tiny_vastmat-demo.py
#   python tools/test.py configs/motip/motip_tiny_vastmat-demo.py --checkpoint work_dirs/.../iter_8.pth
_base_ = ['./motip_r50_8xb1-10e_vastmat-p1.py']
load_from = None  # trained from scratch (the full-size config starts from its DETR pre-training)

data_root = 'data/demo/'
width = 32
clip_length = 4
train_scales = [(213, s) for s in (96, 112, 128)]  # 480..800 / 6.25
test_scale = (213, 128)  # the 192 x 144 demo frames become 171 x 128

model = dict(
    num_groups=2,
    num_train_frames=2,
    id_matching_layer=-1,  # the cached demo models' (the official, None: the second-to-last decoder layer)
    detector=dict(
        num_queries=20,
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
    tracker=dict(
        trajectory_modeling=dict(detr_dim=width, feature_dim=width),
        id_decoder=dict(feature_dim=width, id_dim=width, num_layers=2, head_dim=32, num_id_vocabulary=8,
                        rel_pe_length=clip_length),
        # a few iterations leave every score low: low thresholds so that the demo test has tracks
        det_thresh=0.05,
        newborn_thresh=0.1,
        miss_tolerance=clip_length))

# the official bound of 300 identities a frame is its DETR's 300 queries: here the tiny DETR's 20
min_identities, max_identities = 1, 20
train_augmentation = [
    dict(
        type='TransformBroadcaster',
        share_random_params=True,
        transforms=[dict(type='LoadImageFromFile'),
                    dict(type='LoadTrackAnnotations'),
                    dict(type='RandomFlip', prob=0.5)]),
    dict(
        type='RandomApply',
        prob=0.5,
        transforms=[
            dict(type='TransformBroadcaster', share_random_params=True,
                 transforms=[dict(type='RandomChoiceResize', scales=[(4200, 64), (4200, 80), (4200, 96)],
                                  keep_ratio=True, clip_object_border=False)]),
            dict(type='ClipRandomCrop', crop_size=(61, 96), crop_type='absolute_range',
                 min_identities=min_identities, max_identities=max_identities)
        ]),
    dict(
        type='TransformBroadcaster',
        share_random_params=True,
        transforms=[dict(type='RandomChoiceResize', scales=train_scales, keep_ratio=True, clip_object_border=False),
                    dict(type='ClipColorJitter', brightness=0.4, contrast=0.4, saturation=0.4, hue=0.2)]),
]
train_pipeline = [
    dict(type='VastMATClipSample', clip_length=clip_length, max_interval_seconds=0.2, min_identities=min_identities,
         max_identities=max_identities),
    *train_augmentation,
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
train_dataloader = dict(batch_size=2, num_workers=0, persistent_workers=False,
                        dataset=dict(data_root=data_root, pipeline=train_pipeline))
test_dataloader = dict(num_workers=0, persistent_workers=False,
                       dataset=dict(data_root=data_root, pipeline=test_pipeline))

max_iters = 8
# from scratch, a few iterations: a larger rate than the official 1e-4 (the multipliers and clipping as official)
optim_wrapper = dict(optimizer=dict(lr=2e-3))
param_scheduler = [dict(type='ConstantLR', factor=1.0, by_epoch=False, begin=0, end=max_iters)]
train_cfg = dict(_delete_=True, type='IterBasedTrainLoop', max_iters=max_iters)
default_hooks = dict(logger=dict(interval=1), checkpoint=dict(interval=4, by_epoch=False))
log_processor = dict(by_epoch=False)
randomness = dict(seed=0)
