# MOTIP (Gao et al., CVPR 2025; MCG-NJU/MOTIP 5cfbcd4, configs/r50_deformable_detr_motip_dancetrack.yaml) on VastMAT
# Protocol 1 (Seen): Deformable DETR R50 with box refinement (mmdet 3.3's modules), MOTIP's trajectory modelling and
# ID decoder, its clip training and its runtime tracker (reference/trackers.md section 5). Official settings:
#   DETR        ResNet-50, 4 levels, 6 + 6 layers, d 256, FFN 1024, dropout 0.0, 8 heads, 4 points, 300 queries,
#               box refine, not two-stage, one class `animal`; focal 2 (alpha 0.25) / L1 5 / GIoU 2 on every layer,
#               matching costs 2 / 5 / 2
#   ID part     trajectory modelling (two FFN 256-512-256 blocks with LayerNorm); ID decoder: 6 layers, tokens
#               [feature 256 | ID embedding 256], 16 heads of 32, FFN ratio 2, relative time bias over 30 frames,
#               ID dictionary K = 50 words + the newborn token; 18.4 M parameters with the trajectory modelling
#               (tests/models/mot/test_motip.py derives the whole model's count)
#   training    clips of 30 frames (random interval up to 4 frames at 20 FPS), 4 frames with DETR gradients, 6
#               ID-label groups per clip, trajectory occlusion 0.5 and switch 0.5, ID loss weight 1; AdamW lr 1e-4,
#               backbone x0.1, sampling_offsets / reference_points x0.05, weight decay 5e-4, gradients clipped to
#               0.1 separately for the DETR and the ID part; 10 epochs, lr x0.1 at epochs 6 and 9, 1 warm-up
#               epoch; 8 GPUs x 1 clip
#   input       train: flip 0.5, then a short side in 480..800 (step 32, long side <= 1440), or a short side in
#               {400, 500, 600}, a random 384..600 crop and a short side in 480..800; colour jitter 0.4 / 0.4 / 0.4
#               / 0.2 (the same draw for every frame of a clip); test: short side 800, long side <= 1440
#   tracker     det_thresh 0.3, newborn_thresh 0.6, id_thresh 0.2, object-max assignment, miss_tolerance 30
# Adapted to VastMAT (10 FPS, long videos):
#   - clips of 30 frames with intervals of up to 0.2 s (2 frames at 10 FPS): the official 30 frames span up to 5.8 s
#     at 20 FPS, these up to 5.8 s at 10 FPS; rel_pe_length 30 = clip length >= miss_tolerance 30 (the official rule
#     SAMPLE_LENGTHS == REL_PE_LENGTH >= MISS_TOLERANCE) kept in frames, so a track missed in up to 28 frames
#     is still matched: 2.8 s at 10 FPS (the official 1.4 s at 20 FPS; VastMAT's animals stay occluded longer, and
#     the relative time bias is learned over 30 frames);
#   - the DETR starts from a Deformable DETR checkpoint (COCO, then VastMAT detection pre-training: the official
#     DETR_PRETRAIN; motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py trains it: load_from below);
#   - the official static-image clip simulation (a random shift of one image, for CrowdHuman) is not used:
#     VastMAT trains on its videos only.
#   bash tools/dist_train.sh configs/motip/motip_r50_8xb1-10e_vastmat-p1.py 8
#   python tools/test.py configs/motip/motip_r50_8xb1-10e_vastmat-p1.py --checkpoint W/epoch_10.pth
_base_ = ['../_base_/datasets/vastmat_video.py', '../_base_/default_runtime.py',
          '../_base_/models/deformable-detr-refine_r50_1class.py']

# Starting point (the official DETR_PRETRAIN, r50_deformable_detr_coco_dancetrack.pth: COCO Deformable DETR, then
# detection pre-training on the tracking data): the last checkpoint of motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py
# (its DETR; the ID part starts afresh, as the official load_detr_pretrain leaves it). --cfg-options load_from=None
# starts from the ImageNet ResNet-50 (the backbone's init_cfg) instead.
load_from = 'work_dirs/motip_r50_8xb2-20e_vastmat-p1_detr-pretrain/epoch_20.pth'

clip_length = 30
train_scales = [(1440, s) for s in range(480, 801, 32)]  # (long side limit, short side)
test_scale = (1440, 800)

model = dict(
    type='MOTIP',
    id_loss_weight=1.0,
    num_groups=6,
    occlusion_prob=0.5,
    switch_prob=0.5,
    num_train_frames=4,
    num_checkpoint_frames=5,  # DETR passes of 20 frames without gradients (official DETR_NUM_CHECKPOINT_FRAMES)
    detector=dict(  # the official MOTIP DETR has no dropout
        encoder=dict(layer_cfg=dict(self_attn_cfg=dict(dropout=0.0), ffn_cfg=dict(ffn_drop=0.0))),
        decoder=dict(layer_cfg=dict(self_attn_cfg=dict(dropout=0.0), cross_attn_cfg=dict(dropout=0.0),
                                    ffn_cfg=dict(ffn_drop=0.0)))),
    tracker=dict(
        type='MOTIPTracker',
        trajectory_modeling=dict(type='MOTIPTrajectoryModeling', detr_dim=256, ffn_dim_ratio=2, feature_dim=256),
        id_decoder=dict(type='MOTIPIDDecoder', feature_dim=256, id_dim=256, ffn_dim_ratio=2, num_layers=6,
                        head_dim=32, num_id_vocabulary=50, rel_pe_length=clip_length),
        det_thresh=0.3,
        newborn_thresh=0.6,
        id_thresh=0.2,
        area_thresh=0,
        miss_tolerance=30,
        assignment_protocol='object-max'))

# a training frame has 1 to 300 evaluated identities (official data/util.py is_legal, 300 = its DETR's queries): the
# clips are the legal ones (VastMATClipSampler: each once an epoch, as the official NaiveSampler) and a crop that
# leaves a frame illegal is undone
min_identities, max_identities = 1, 300
# the official MultiRandomSelect(resize, [resize, crop, resize]) (p 0.5 each), its common last resize taken out of
# the choice; one draw per clip. Per-frame steps run in TransformBroadcaster (the random draws shared by the frames);
# the choice and the crop (official MultiRandomCrop: one window, boxes clipped, the clip left uncropped when a frame
# would be illegal) take the whole clip
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
                 transforms=[dict(type='RandomChoiceResize', scales=[(4200, 400), (4200, 500), (4200, 600)],
                                  keep_ratio=True, clip_object_border=False)]),
            dict(type='ClipRandomCrop', crop_size=(384, 600), crop_type='absolute_range',
                 min_identities=min_identities, max_identities=max_identities)
        ]),
    dict(
        type='TransformBroadcaster',
        share_random_params=True,
        transforms=[dict(type='RandomChoiceResize', scales=train_scales, keep_ratio=True, clip_object_border=False),
                    dict(type='ClipColorJitter', brightness=0.4, contrast=0.4, saturation=0.4, hue=0.2)]),
]
train_pipeline = [
    # the official 30 frames with intervals up to 4 at 20 FPS (0.2 s)
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

# every frame stays in the dataset (VastMATClipSample takes frames by position; frames without animals are left out
# by the legality rule)
train_dataloader = dict(batch_size=1, sampler=dict(type='VastMATClipSampler'),
                        dataset=dict(filter_cfg=dict(filter_empty_gt=False), pipeline=train_pipeline))
test_dataloader = dict(dataset=dict(pipeline=test_pipeline))

max_epochs = 10
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=max_epochs)
optim_wrapper = dict(
    type='SeparateClipOptimWrapper',
    constructor='SeparateClipOptimWrapperConstructor',
    clip_prefixes=['detector.'],  # the DETR's gradients and the ID part's are clipped separately (official)
    optimizer=dict(type='AdamW', lr=1e-4, weight_decay=5e-4),
    clip_grad=dict(max_norm=0.1, norm_type=2),
    paramwise_cfg=dict(custom_keys={
        'backbone': dict(lr_mult=0.1),
        'sampling_offsets': dict(lr_mult=0.05),
        'reference_points': dict(lr_mult=0.05)
    }))
param_scheduler = [
    # the official linear warm-up over the first epoch: lr x (i + 1) / N at iteration i, N its iterations
    dict(type='WarmupFromOneOverN', by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='MultiStepLR', begin=0, end=max_epochs, by_epoch=True, milestones=[6, 9], gamma=0.1)
]
default_hooks = dict(checkpoint=dict(type='CheckpointHook', interval=1, max_keep_ckpts=3),
                     visualization=dict(type='TrackVisualizationHook', draw=False))
visualizer = dict(type='TrackLocalVisualizer', vis_backends=[dict(type='LocalVisBackend')], name='visualizer')
# lr 1e-4 is for 8 GPUs x 1 clip; tools/train.py --auto-scale-lr rescales it to the actual batch
auto_scale_lr = dict(enable=False, base_batch_size=8)
