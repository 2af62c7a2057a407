# FairMOT small enough to train and track on a CPU in seconds, on the rendered demo data
# (tools/data/make_demo_data.py): the network, targets, losses, augmentations and JDE tracker of
# fairmot_dla34_1xb12-30e_vastmat-p1.py with a shrunk DLA (8-32 channels, one block per level), 32-channel heads,
# 16-d embeddings and 128x96 inputs, without ImageNet weights.
#   python tools/train.py configs/fairmot/fairmot_tiny_vastmat-demo.py
#   python tools/test.py configs/fairmot/fairmot_tiny_vastmat-demo.py --checkpoint work_dirs/.../iter_8.pth
_base_ = ['./fairmot_dla34_1xb12-30e_vastmat-p1.py']

data_root = 'data/demo/'
img_scale = (128, 96)  # width, height: the demo frames are 192 x 144
num_identities = 30  # identities of the demo's Protocol 1 train split (VastMATDataset prints it)

# Trained with these settings, so that the cached demo models stay valid (the same resolved config): without the
# full-size config's official-training settings (2-GPU chunks, drop_last, the CenterNet start, FairMOTLetterbox):
# the backbone, the head and the train dataloader restated whole (_delete_), load_from None.
load_from = None
model = dict(
    detector=dict(
        backbone=dict(_delete_=True, type='DLASeg', levels=(1, 1, 1, 1, 1, 1), channels=(8, 8, 16, 16, 32, 32),
                      down_ratio=4, init_cfg=None),
        bbox_head=dict(
            _delete_=True,
            type='FairMOTHead',
            in_channels=16,
            num_classes=1,
            head_conv=32,
            reid_dim=16,
            num_identities=num_identities,
            ltrb=True,
            max_objs=500,
            loss_hm=dict(type='GaussianFocalLoss', alpha=2.0, gamma=4.0, loss_weight=1.0),
            loss_wh=dict(type='L1Loss', loss_weight=0.1),
            loss_offset=dict(type='L1Loss', loss_weight=1.0),
            loss_id=dict(type='CrossEntropyLoss', ignore_index=-1, avg_non_ignore=True, loss_weight=1.0),
            multi_loss='uncertainty'),
        # a few iterations leave the heatmap near its prior (sigmoid(-2.19) = 0.10): a low threshold and fewer
        # peaks, so that the demo test has detections to track
        test_cfg=dict(topk=20, conf_thres=0.05)),
    tracker=dict(conf_thres=0.05, min_box_area=None))

train_pipeline = [
    dict(type='UniformRefFrameSample', num_ref_imgs=0, frame_range=0, filter_key_img=False),  # the key frame
    dict(
        type='TransformBroadcaster',
        share_random_params=True,
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='LoadTrackAnnotations'),
            dict(type='FairMOTHSVAug', fraction=0.5),
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
train_dataloader = dict(
    _delete_=True,
    batch_size=2,
    num_workers=0,
    persistent_workers=False,
    sampler=dict(type='TrackImgSampler'),
    dataset=dict(type='VastMATDataset', data_root=data_root, protocol='protocol1', split='train', load_as='video',
                 pipeline=train_pipeline, instance_ids='global'))
test_dataloader = dict(num_workers=0, persistent_workers=False,
                       dataset=dict(data_root=data_root, pipeline=test_pipeline))

max_iters = 8
optim_wrapper = dict(optimizer=dict(lr=5e-3))  # from scratch, a few iterations: faster than the official 1e-4
param_scheduler = [dict(type='ConstantLR', factor=1.0, by_epoch=False, begin=0, end=max_iters)]
train_cfg = dict(_delete_=True, type='IterBasedTrainLoop', max_iters=max_iters)
default_hooks = dict(logger=dict(interval=1), checkpoint=dict(interval=4, by_epoch=False))
log_processor = dict(by_epoch=False)
randomness = dict(seed=0)
