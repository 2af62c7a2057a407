# TransTrack (Sun et al., 2020; PeizeSun/TransTrack) on VastMAT Protocol 1 (Seen): Deformable DETR R50 with iterative
# box refinement (mmdet 3.3's modules), TransTrack's feature fusion and track decoder, its released training recipe
# and its association (reference/trackers.md section 4). The official settings (main_track.py, track_exps/*.sh):
#   network     ResNet-50 (ImageNet), 4 levels, 6 + 6 layers, d 256, FFN 1024, dropout 0.1, 8 heads, 4 points,
#               num_queries 500 (query_embedding 500 x 512), with_box_refine, not two-stage; one class `animal`
#               (the official MOT model has 20 logits and scores class 1); 47,119,968 parameters
#               (tests/models/mot/test_transtrack.py derives them from the official model)
#   input       train: flip 0.5, then either a short side in 480..800 (step 32, long side <= 1333), or a short side
#               in {800, 1000, 1200}, a random 800..1200 crop and a short side in 480..800 (make_mot_transforms
#               'train'; boxes not clipped); test: short side 800, long side <= 1333; ImageNet mean / std, RGB
#   recipe      the previous frame is a random shift of the same image (up to +-100 px at these input sizes), the
#               track decoder trains half of the steps; focal 2 (alpha 0.25, gamma 2) / L1 5 / GIoU 2 on every
#               decoder layer, matching costs 2 / 5 / 2
#   optimiser   AdamW lr 2e-4, backbone 2e-5, reference_points / sampling_offsets x0.1, weight decay 1e-4, gradient
#               clipping 0.1; 8 GPUs x 2 images
#   schedule    the official MOT fine-tuning: 20 epochs, lr x0.1 after 10 (crowdhuman_mot_trainhalf.sh)
#   tracker     track_thresh 0.4, cost 1 - GIoU with Hungarian matching, pairs with 1 - GIoU > 1.2 rejected
# Adapted to VastMAT:
#   - max_age 11 frames: the official 32 frames keep an unmatched track for 1.07 s at MOT17's 30 FPS, 11 frames are
#     1.1 s at VastMAT's 10 FPS (as configs/qdtrack and configs/fairmot convert their memories);
#   - the official MOT fine-tuning starts from crowdhuman_final.pth (150 CrowdHuman epochs); so does this schedule,
#     converted (load_from below); --cfg-options load_from=None starts from ImageNet (the backbone's init_cfg)
#     instead;
# transtrack_r50_8xb2-20e_vastmat-p1_pairs.py trains on real frame pairs instead of the released single-image recipe.
#   bash tools/dist_train.sh configs/transtrack/transtrack_r50_8xb2-20e_vastmat-p1.py 8
#   python tools/test.py configs/transtrack/transtrack_r50_8xb2-20e_vastmat-p1.py --checkpoint W/epoch_20.pth
_base_ = ['../_base_/datasets/vastmat_video.py', '../_base_/default_runtime.py',
          '../_base_/models/deformable-detr-refine_r50_1class.py']

max_shift = 100  # pixels of the network input (official, at 480-800 px short sides)
# (long side, short side) limits of the official RandomResize(scales, max_size=1333)
train_scales = [(1333, s) for s in range(480, 801, 32)]
test_scale = (1333, 800)

model = dict(
    type='TransTrack',
    previous_frame='shift',  # the released recipe: the previous frame is a shift of the same image
    max_shift=max_shift,
    track_prob=0.5,
    detector=dict(  # the detection decoder's config also builds the track decoder
        type='TransTrackDeformableDETR',
        num_queries=500,
        official_offset_normalizer=True,  # TransTrack's sampling offsets over (H, W), as its checkpoints trained
        test_cfg=dict(max_per_img=500)),
    tracker=dict(type='TransTrackTracker', track_thresh=0.4, min_similarity=0.4, max_age=11))

# the official MOT training transforms, applied alike to both frames of a pair
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
            dict(type='RandomChoiceResize', scales=[(4200, 800), (4200, 1000), (4200, 1200)], keep_ratio=True,
                 clip_object_border=False),
            dict(type='RandomCrop', crop_type='absolute_range', crop_size=(800, 1200), bbox_clip_border=False,
                 allow_negative_crop=True)
        ]),
    dict(type='RandomChoiceResize', scales=train_scales, keep_ratio=True, clip_object_border=False),
]
train_pipeline = [
    dict(type='UniformRefFrameSample', num_ref_imgs=0, frame_range=0, filter_key_img=False),  # the key frame alone
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

# frames without animals train the background, as the official; boxes of known visibility < 0.25 are not
# annotated, as the official MOT annotations (track_tools/convert_mot_to_coco.py; unknown visibility -1 is kept)
train_dataloader = dict(
    batch_size=2,
    dataset=dict(filter_cfg=dict(filter_empty_gt=False), min_visibility=0.25, pipeline=train_pipeline))
test_dataloader = dict(dataset=dict(pipeline=test_pipeline))

# The official starting point: PeizeSun/TransTrack's crowdhuman_final.pth (track_exps/crowdhuman_mot_trainhalf.sh
# --resume crowdhuman_final.pth), converted by
#   python tools/model_converters/transtrack_official.py crowdhuman_final.pth \
#       checkpoints/transtrack_crowdhuman_final_vastmat.pth
# (the person row 1 of its 20-row class heads becomes the one class); --cfg-options load_from=None falls back to
# the ImageNet ResNet-50 (init_cfg) and randomly initialised transformer.
load_from = 'checkpoints/transtrack_crowdhuman_final_vastmat.pth'
max_epochs = 20
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=max_epochs)
optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=2e-4, weight_decay=1e-4),
    clip_grad=dict(max_norm=0.1, norm_type=2),
    paramwise_cfg=dict(custom_keys={
        'backbone': dict(lr_mult=0.1),
        'sampling_offsets': dict(lr_mult=0.1),  # both decoders' and the encoder's
        'reference_points': dict(lr_mult=0.1)
    }))
param_scheduler = [dict(type='MultiStepLR', begin=0, end=max_epochs, by_epoch=True, milestones=[10], gamma=0.1)]
# each step trains one of the two decoders: the other one's parameters get no gradient (the official
# DistributedDataParallel(find_unused_parameters=True))
find_unused_parameters = True
default_hooks = dict(checkpoint=dict(type='CheckpointHook', interval=1, max_keep_ckpts=3),
                     visualization=dict(type='TrackVisualizationHook', draw=False))
visualizer = dict(type='TrackLocalVisualizer', vis_backends=[dict(type='LocalVisBackend')], name='visualizer')
# lr 2e-4 is for 8 GPUs x 2 images; tools/train.py --auto-scale-lr rescales it to the actual batch
auto_scale_lr = dict(enable=False, base_batch_size=16)
