# QDTrack (Pang et al., CVPR 2021) on VastMAT Protocol 1 (Seen): mmdet 3.3's QDTrack model, heads and
# QuasiDenseTracker with the settings of mmdet's qdtrack_faster-rcnn_r50_fpn_8xb2-4e_mot17halftrain_test-mot17halfval
# (reference/trackers.md section 7), one class `animal`, trained on key / reference frame pairs of the VastMAT
# training videos and tested with the tracking metric:
#   bash tools/dist_train.sh configs/qdtrack/qdtrack_faster-rcnn_r50_fpn_8xb2-4e_vastmat-p1.py 8
#   python tools/test.py configs/qdtrack/qdtrack_faster-rcnn_r50_fpn_8xb2-4e_vastmat-p1.py \
#       --checkpoint work_dirs/qdtrack_faster-rcnn_r50_fpn_8xb2-4e_vastmat-p1/epoch_4.pth
# Adapted to VastMAT (everything else as published):
#   - reference frames within 1/3 s of the key frame (VastMATRefFrameSample): the published frame_range=10 is
#     1/3 s at MOT17's 30 FPS, 3 frames at VastMAT's 10 FPS;
#   - memo_tracklet_frames=10: the published 30 frames keep a lost track for 1 s at 30 FPS, 10 frames at 10 FPS.
# QDTrack associates by embedding similarity only (bi-softmax); its IoU thresholds are duplicate suppression and
# backdrop selection, not an association term, so it takes no `matcher=` (configs/matchers/ do not apply).
_base_ = ['mmdet::_base_/models/faster-rcnn_r50_fpn.py', '../_base_/datasets/vastmat_video.py',
          '../_base_/default_runtime.py']

img_scale = (1088, 1088)

detector = _base_.model
detector.pop('data_preprocessor')
detector.backbone.update(
    norm_cfg=dict(type='BN', requires_grad=False),
    style='caffe',
    init_cfg=dict(type='Pretrained', checkpoint='open-mmlab://detectron2/resnet50_caffe'))
detector.rpn_head.loss_bbox.update(dict(type='SmoothL1Loss', beta=1.0 / 9.0, loss_weight=1.0))
detector.rpn_head.bbox_coder.update(dict(clip_border=False))
detector.roi_head.bbox_head.update(dict(num_classes=1))
detector.roi_head.bbox_head.bbox_coder.update(dict(clip_border=False))
# mmdet's QDTrack starts from Faster R-CNN trained on COCO persons (downloaded on the first run); for animals the
# COCO detector of all 80 classes is the alternative: --cfg-options model.detector.init_cfg.checkpoint=...
detector['init_cfg'] = dict(
    type='Pretrained',
    checkpoint='https://download.openmmlab.com/mmdetection/v2.0/faster_rcnn/faster_rcnn_r50_fpn_1x_coco-person/'
    'faster_rcnn_r50_fpn_1x_coco-person_20201216_175929-d022e227.pth')
del _base_.model

model = dict(
    type='QDTrack',
    data_preprocessor=dict(
        type='TrackDataPreprocessor', mean=[103.530, 116.280, 123.675], std=[1.0, 1.0, 1.0], bgr_to_rgb=False,
        pad_size_divisor=32),
    detector=detector,
    track_head=dict(
        type='QuasiDenseTrackHead',
        roi_extractor=dict(
            type='SingleRoIExtractor',
            roi_layer=dict(type='RoIAlign', output_size=7, sampling_ratio=0),
            out_channels=256,
            featmap_strides=[4, 8, 16, 32]),
        embed_head=dict(
            type='QuasiDenseEmbedHead',
            num_convs=4,
            num_fcs=1,
            embed_channels=256,
            norm_cfg=dict(type='GN', num_groups=32),
            loss_track=dict(type='MultiPosCrossEntropyLoss', loss_weight=0.25),
            loss_track_aux=dict(
                type='MarginL2Loss', neg_pos_ub=3, pos_margin=0, neg_margin=0.1, hard_mining=True, loss_weight=1.0)),
        loss_bbox=dict(type='L1Loss', loss_weight=1.0),
        train_cfg=dict(
            assigner=dict(
                type='MaxIoUAssigner', pos_iou_thr=0.7, neg_iou_thr=0.5, min_pos_iou=0.5, match_low_quality=False,
                ignore_iof_thr=-1),
            sampler=dict(
                type='CombinedSampler', num=256, pos_fraction=0.5, neg_pos_ub=3, add_gt_as_proposals=True,
                pos_sampler=dict(type='InstanceBalancedPosSampler'), neg_sampler=dict(type='RandomSampler')))),
    tracker=dict(
        type='QDTrackTracker',  # mmdet's QuasiDenseTracker, unchanged (vastmat/models/trackers/quasi_dense_tracker.py)
        init_score_thr=0.9,
        obj_score_thr=0.5,
        match_score_thr=0.5,
        memo_tracklet_frames=10,  # 1 s at 10 FPS (the published 30 frames at 30 FPS)
        memo_backdrop_frames=1,
        memo_momentum=0.8,
        nms_conf_thr=0.5,
        nms_backdrop_iou_thr=0.3,
        nms_class_iou_thr=0.7,
        with_cats=True,
        match_metric='bisoftmax'))

train_pipeline = [
    dict(type='VastMATRefFrameSample', num_ref_imgs=1, frame_range_seconds=10 / 30, filter_key_img=True),
    dict(
        type='TransformBroadcaster',
        share_random_params=True,
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='LoadTrackAnnotations'),
            dict(type='RandomResize', scale=img_scale, ratio_range=(0.8, 1.2), keep_ratio=True,
                 clip_object_border=False),
            dict(type='PhotoMetricDistortion')
        ]),
    dict(
        type='TransformBroadcaster',
        share_random_params=False,  # a different crop for each frame of the pair
        transforms=[dict(type='RandomCrop', crop_size=img_scale, bbox_clip_border=False)]),
    dict(type='TransformBroadcaster', share_random_params=True, transforms=[dict(type='RandomFlip', prob=0.5)]),
    dict(type='PackVastMATInputs')
]
test_pipeline = [
    dict(
        type='TransformBroadcaster',
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='Resize', scale=img_scale, keep_ratio=True),
        ]),
    dict(type='PackVastMATInputs')
]

train_dataloader = dict(dataset=dict(filter_cfg=dict(filter_empty_gt=True), pipeline=train_pipeline))
# validation after the last epoch (val_interval): the tracking metric on the test split
val_dataloader = _base_.test_dataloader
val_dataloader.persistent_workers = True
val_dataloader.dataset.pipeline = test_pipeline
test_dataloader = val_dataloader
val_evaluator = dict(type='VastMATMetric', preset='vastmat')

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='SGD', lr=0.02, momentum=0.9, weight_decay=0.0001),
    clip_grad=dict(max_norm=35, norm_type=2))
param_scheduler = [dict(type='MultiStepLR', begin=0, end=4, by_epoch=True, milestones=[3])]
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=4, val_interval=4)
val_cfg = dict(type='ValLoop')
# lr 0.02 is for 8 GPUs x 2 pairs; tools/train.py --auto-scale-lr rescales it to the actual batch
auto_scale_lr = dict(enable=False, base_batch_size=16)

default_hooks = dict(logger=dict(type='LoggerHook', interval=50), visualization=dict(type='TrackVisualizationHook',
                                                                                      draw=False))
visualizer = dict(type='TrackLocalVisualizer', vis_backends=[dict(type='LocalVisBackend')], name='visualizer')
custom_hooks = [dict(type='SyncBuffersHook')]  # BN buffers in step across ranks at each epoch end
randomness = dict(seed=6)  # as mmdet's MOT17 config (its HOTA fluctuates by about +-1)
