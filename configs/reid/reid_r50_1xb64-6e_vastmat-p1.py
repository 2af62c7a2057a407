# Appearance model for TrackTrack (and any tracker with an appearance term) on VastMAT Protocol 1: mmdet's ReID
# model (BaseReID: ResNet-50, global average pooling, LinearReIDHead trained with triplet + cross-entropy losses, as
# mmdet's configs/reid/reid_r50_8xb32-6e_mot17train80_test-mot17val20.py) at TrackTrack's FastReID input size,
# 384x128 (height x width), on identity crops cut from the Protocol 1 train ground truth.
#
#   python tools/train.py configs/reid/reid_r50_1xb64-6e_vastmat-p1.py
#   python tools/test.py configs/reid/reid_r50_1xb64-6e_vastmat-p1.py --checkpoint CKPT       # mAP / CMC
#   python tools/test.py configs/reid/reid_r50_1xb64-6e_vastmat-p1.py --checkpoint CKPT \
#       --det-root DETS --dump-feats DETS_WITH_FEATS      # det.txt + L2-normalised features for the trackers
#
# Differences from TrackTrack's FastReID SBS-S50 (ResNeSt-50 + non-local, GeM, CircleSoftmax, 60 epochs): mmdet's
# components, as the issue asks; the features are L2-normalised the same way.
_base_ = ['../_base_/default_runtime.py']

data_root = 'data/vastmat/'
input_size = (384, 128)  # height, width (TrackTrack's FastReID crops)
# The classifier size: all 22,883 identity trajectories of VastMAT (paper), an upper bound for any split; the
# dataset prints the number of identities of its split and refuses more than this.
num_classes = 22883

model = dict(
    type='BaseReID',
    # mmdet's ReIDDataPreprocessor with batched crops and a working BGR -> RGB conversion
    data_preprocessor=dict(
        type='VastMATReIDDataPreprocessor',
        mean=[123.675, 116.28, 103.53],
        std=[58.395, 57.12, 57.375],
        to_rgb=True),
    backbone=dict(type='mmpretrain.ResNet', depth=50, num_stages=4, out_indices=(3, ), style='pytorch'),
    neck=dict(type='GlobalAveragePooling'),  # adaptive: any input size
    head=dict(
        type='LinearReIDHead',
        num_fcs=1,
        in_channels=2048,
        fc_channels=1024,
        out_channels=128,
        num_classes=num_classes,
        loss_cls=dict(type='mmpretrain.CrossEntropyLoss', loss_weight=1.0),
        loss_triplet=dict(type='TripletLoss', margin=0.3, loss_weight=1.0),
        norm_cfg=dict(type='BN1d'),
        act_cfg=dict(type='ReLU')),
    # ImageNet weights, as mmdet's ReID configs (downloaded on the first run)
    init_cfg=dict(
        type='Pretrained',
        checkpoint='https://download.openmmlab.com/mmclassification/v0/resnet/'
        'resnet50_batch256_imagenet_20200708-cfb998bf.pth'))

train_pipeline = [
    dict(
        type='TransformBroadcaster',
        share_random_params=False,
        transforms=[
            dict(type='LoadCachedFrame'),
            dict(type='CropReIDInstance'),
            dict(type='Resize', scale=input_size[::-1], keep_ratio=False, clip_object_border=False),
            dict(type='RandomFlip', prob=0.5, direction='horizontal'),
        ]),
    dict(type='PackReIDInputs', meta_keys=('flip', 'flip_direction'))
]
test_pipeline = [
    dict(type='LoadCachedFrame'),
    dict(type='CropReIDInstance'),
    dict(type='Resize', scale=input_size[::-1], keep_ratio=False),
    dict(type='PackReIDInputs')
]

train_dataloader = dict(
    # one item = one P x K batch of 16 identities x 4 crops (mmdet's triplet sampling), 64 crops per iteration
    batch_size=1,
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    dataset=dict(
        type='VastMATReIDDataset',
        data_root=data_root,
        protocol='protocol1',
        split='train',
        frame_interval=5,  # every 5th box of a track (2 per second at 10 FPS)
        max_per_id=64,
        min_size=8,
        valid_only=True,
        num_classes=num_classes,
        triplet_sampler=dict(num_ids=16, ins_per_id=4),
        anchors='identities',  # an epoch draws every identity once as the anchor of a batch
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=64,
    num_workers=4,
    persistent_workers=True,
    drop_last=False,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type='VastMATReIDDataset',
        data_root=data_root,
        protocol='protocol1',
        split='test',
        # few crops per identity: mmdet's ReIDMetrics builds the full N x N distance matrix
        frame_interval=10,
        max_per_id=4,
        min_size=8,
        test_mode=True,
        pipeline=test_pipeline))
test_dataloader = val_dataloader
val_evaluator = dict(type='ReIDMetrics', metric=['mAP', 'CMC'])
test_evaluator = val_evaluator

# mmdet's schedule (SGD 0.1 for 8 GPUs x 32 crops) with the learning rate scaled to 64 crops per iteration
optim_wrapper = dict(
    type='OptimWrapper',
    clip_grad=None,
    optimizer=dict(type='SGD', lr=0.025, momentum=0.9, weight_decay=0.0001))
param_scheduler = [
    dict(type='LinearLR', start_factor=1.0 / 1000, by_epoch=False, begin=0, end=1000),
    dict(type='MultiStepLR', begin=0, end=6, by_epoch=True, milestones=[5], gamma=0.1)
]
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=6, val_interval=1)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')
# batch_size counts P x K batches: 1 per process, 64 crops
auto_scale_lr = dict(enable=False, base_batch_size=1)
