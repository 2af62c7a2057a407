# Deformable DETR with iterative box refinement (Zhu et al., 2021) as the video models built on it use it (TransTrack,
# MOTIP): mmdet 3.3's DeformableDETR with the original's settings, ResNet-50 (ImageNet; frozen stem and stage 1,
# frozen BN), 4 levels (the ChannelMapper neck is the original input_proj, its convolutions with a bias), 6 + 6
# layers, d 256, FFN 1024, dropout 0.1, 8 heads, 4 points, 300 queries, one class `animal`; focal 2 (alpha 0.25) /
# L1 5 / GIoU 2 on every decoder layer, Hungarian matching with costs 2 / 5 / 2; ImageNet mean / std, RGB. Official
# checkpoints convert with vastmat.models.mot.official_deformable_detr_state_dict. A model config wraps it:
#   model = dict(type='TransTrack', detector=dict(type='TransTrackDeformableDETR', num_queries=500, ...), ...)
model = dict(
    data_preprocessor=dict(
        type='TrackingDataPreprocessor',
        mean=[123.675, 116.28, 103.53],
        std=[58.395, 57.12, 57.375],
        bgr_to_rgb=True,
        pad_size_divisor=1),
    detector=dict(
        type='DeformableDETR',
        num_queries=300,
        num_feature_levels=4,
        with_box_refine=True,
        as_two_stage=False,
        backbone=dict(
            type='ResNet',
            depth=50,
            num_stages=4,
            out_indices=(1, 2, 3),
            frozen_stages=1,
            norm_cfg=dict(type='BN', requires_grad=False),
            norm_eval=True,
            style='pytorch',
            init_cfg=dict(type='Pretrained', checkpoint='torchvision://resnet50')),
        neck=dict(
            type='ChannelMapper',
            in_channels=[512, 1024, 2048],
            kernel_size=1,
            out_channels=256,
            bias=True,  # the official input_proj: Conv2d with a bias, then GroupNorm (official checkpoints load)
            act_cfg=None,
            norm_cfg=dict(type='GN', num_groups=32),
            num_outs=4),
        encoder=dict(
            num_layers=6,
            layer_cfg=dict(
                self_attn_cfg=dict(embed_dims=256, batch_first=True, dropout=0.1),
                ffn_cfg=dict(embed_dims=256, feedforward_channels=1024, ffn_drop=0.1))),
        decoder=dict(
            num_layers=6,
            return_intermediate=True,
            layer_cfg=dict(
                self_attn_cfg=dict(embed_dims=256, num_heads=8, dropout=0.1, batch_first=True),
                cross_attn_cfg=dict(embed_dims=256, batch_first=True, dropout=0.1),
                ffn_cfg=dict(embed_dims=256, feedforward_channels=1024, ffn_drop=0.1)),
            post_norm_cfg=None),
        positional_encoding=dict(num_feats=128, normalize=True, offset=-0.5),
        bbox_head=dict(
            type='DeformableDETRHead',
            num_classes=1,
            sync_cls_avg_factor=True,
            loss_cls=dict(type='FocalLoss', use_sigmoid=True, gamma=2.0, alpha=0.25, loss_weight=2.0),
            loss_bbox=dict(type='L1Loss', loss_weight=5.0),
            loss_iou=dict(type='GIoULoss', loss_weight=2.0)),
        train_cfg=dict(
            assigner=dict(
                type='HungarianAssigner',
                match_costs=[
                    dict(type='FocalLossCost', weight=2.0),
                    dict(type='BBoxL1Cost', weight=5.0, box_format='xywh'),
                    dict(type='IoUCost', iou_mode='giou', weight=2.0)
                ])),
        test_cfg=dict(max_per_img=300)))
