# FairMOT (DLA-34 + DCNv2 upsampling, CenterNet heads with a 128-d identity embedding, JDE tracker) on VastMAT
# Protocol 1 (Seen), with the official defaults (reference/trackers.md section 8, ifzhang/FairMOT src/lib/opts.py):
#   input       1088x608 letterbox padded centred with 127.5 (FairMOTLetterbox = official jde.py letterbox:
#               INTER_AREA, aspect kept; test boxes mapped back about the centres as the official tracker),
#               RGB / 255, no mean / std
#   augment     HSV saturation / value x[0.5, 1.5], random affine (rotation 5 deg, translation 0.1, scale 0.5-1.2,
#               shear 2 deg, about the image centre), horizontal flip 0.5 (jde.py)
#   network     DLA-34 starting from CenterNet COCO (load_from below; the official experiments'
#               --load_model ../models/ctdet_coco_dla_2x.pth), heads hm 1 / wh 4 (ltrb) /
#               reg 2 / id 128, head_conv 256; 19,836,711 parameters (tests/models/mot/test_fairmot.py) plus the
#               identity classifier Linear(128, num_identities) and the two uncertainty weights
#   loss        focal (hm) + 0.1 L1 (wh) + L1 (reg); cross-entropy over the training identities; uncertainty weighting
#   schedule    Adam lr 1e-4 over the network and the loss's classifier / s_det / s_id (official: two param
#               groups of the same defaults), batch 12 (drop_last, as the official DataLoader) on 2 GPUs' worth of
#               chunks (gpu_chunks below), 30 epochs, lr x0.1 after epoch 20
#   tracker     JDETracker conf_thres 0.4, track_buffer 30 at the video's frame rate (official track.py passes each
#               sequence's rate: 10 frames at VastMAT's 10 FPS), min_box_area 100; the official w / h > 1.6 filter is a
#               pedestrian prior and is off for animals (aspect_ratio_thresh=None)
# The identities of the training split are numbered 0..K-1 by VastMATDataset(instance_ids='global'), which prints K.
#   python tools/train.py configs/fairmot/fairmot_dla34_1xb12-30e_vastmat-p1.py
#   python tools/test.py configs/fairmot/fairmot_dla34_1xb12-30e_vastmat-p1.py --checkpoint W/epoch_30.pth
# An official FairMOT checkpoint (fairmot_dla34.pth) converted by tools/model_converters/fairmot_official.py tracks
# with this config (--checkpoint CONVERTED) or starts its training (--cfg-options load_from=CONVERTED).
_base_ = ['../_base_/datasets/vastmat_video.py', '../_base_/default_runtime.py']

img_scale = (1088, 608)  # width, height (official default_resolution)
# The identity classifier's size: all 22,883 identity trajectories of VastMAT (paper), an upper bound for any split
# (the official nID is likewise one more than the identities used); the head refuses a larger identity number.
num_identities = 22883

model = dict(
    type='TrackingByDetection',
    data_preprocessor=dict(type='TrackingDataPreprocessor', mean=[0, 0, 0], std=[255, 255, 255], bgr_to_rgb=True,
                           pad_size_divisor=32),
    detector=dict(
        type='SingleStageDetector',
        backbone=dict(
            type='DLASeg',
            levels=(1, 1, 1, 2, 2, 1),
            channels=(16, 32, 64, 128, 256, 512),
            down_ratio=4,
            # The official default trains on 2 GPUs (opts.py --gpus 2,3) under nn.DataParallel: each GPU's chunk of
            # 6 images has its own BatchNorm statistics and its own MotLoss (normalised by the chunk's positives,
            # boxes and identities), and the step takes the mean of the two losses. One process reproduces that
            # (batch_chunks here, loss_chunks in the head; tests/models/mot/test_fairmot_golden.py); 1 and 1: one
            # BatchNorm and one loss over the batch (also right for 2 GPUs of 6 images under DDP, which averages per-GPU
            # gradients).
            batch_chunks=2,
            # the official ImageNet DLA-34, under load_from (set to None to start from random weights)
            init_cfg=dict(type='Pretrained', checkpoint='http://dl.yf.io/dla/models/imagenet/dla34-ba72cf86.pth')),
        neck=None,
        bbox_head=dict(
            type='FairMOTHead',
            in_channels=64,
            num_classes=1,
            head_conv=256,
            reid_dim=128,
            num_identities=num_identities,
            ltrb=True,
            max_objs=500,
            loss_hm=dict(type='GaussianFocalLoss', alpha=2.0, gamma=4.0, loss_weight=1.0),
            loss_wh=dict(type='L1Loss', loss_weight=0.1),
            loss_offset=dict(type='L1Loss', loss_weight=1.0),
            loss_id=dict(type='CrossEntropyLoss', ignore_index=-1, avg_non_ignore=True, loss_weight=1.0),
            multi_loss='uncertainty',
            loss_chunks=2),  # the official 2 GPUs' per-chunk MotLoss, averaged (see batch_chunks)
        test_cfg=dict(topk=500, local_maximum_kernel=3, conf_thres=0.4)),
    tracker=dict(type='JDETracker', conf_thres=0.4, track_buffer=30, min_box_area=100, aspect_ratio_thresh=None))

train_pipeline = [
    dict(type='UniformRefFrameSample', num_ref_imgs=0, frame_range=0, filter_key_img=False),  # the key frame
    dict(
        type='TransformBroadcaster',
        share_random_params=True,
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='LoadTrackAnnotations'),
            dict(type='FairMOTHSVAug', fraction=0.5),
            dict(type='FairMOTLetterbox', width=img_scale[0], height=img_scale[1], pad_val=127.5),
            dict(type='FairMOTRandomAffine', max_rotate_degree=5, max_translate_ratio=0.1,
                 scaling_ratio_range=(0.5, 1.2), max_shear_degree=2, border_val=(127.5, 127.5, 127.5)),
            dict(type='RandomFlip', prob=0.5),
        ]),
    dict(type='PackVastMATInputs')
]
test_pipeline = [
    dict(
        type='TransformBroadcaster',
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='FairMOTLetterbox', width=img_scale[0], height=img_scale[1], pad_val=127.5),
        ]),
    # packs FairMOTLetterbox's letterbox_pad: the head maps the boxes back about the centres (official
    # JDETracker.update / ctdet_post_process)
    dict(type='PackVastMATInputs')
]

# identities numbered over the split (the classifier's classes)
# (official train.py: DataLoader(batch_size=12, shuffle=True, num_workers=8, drop_last=True))
train_dataloader = dict(batch_size=12, num_workers=8, drop_last=True,
                        dataset=dict(instance_ids='global', pipeline=train_pipeline))
test_dataloader = dict(dataset=dict(pipeline=test_pipeline))

# the official schedule (no validation during training)
max_epochs = 30
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=max_epochs)
optim_wrapper = dict(type='OptimWrapper', optimizer=dict(type='Adam', lr=1e-4))
param_scheduler = [dict(type='MultiStepLR', by_epoch=True, milestones=[20], gamma=0.1)]
default_hooks = dict(checkpoint=dict(type='CheckpointHook', interval=5, max_keep_ckpts=3))
env_cfg = dict(cudnn_benchmark=True)
auto_scale_lr = dict(enable=False, base_batch_size=12)

# The official experiments start from CenterNet COCO (xingyizhou/CenterNet ctdet_coco_dla_2x.pth), converted with
#   python tools/model_converters/centernet_official.py ctdet_coco_dla_2x.pth \
#       checkpoints/fairmot_ctdet_coco_dla_2x_vastmat.pth
# which skips, as the official load_model, the tensors of other shapes (80-class hm.2, 2-channel wh.2: the network's
# own initialisation stays; id.* likewise). --cfg-options load_from=None starts from the ImageNet DLA-34 (init_cfg).
load_from = 'checkpoints/fairmot_ctdet_coco_dla_2x_vastmat.pth'
