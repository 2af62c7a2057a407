# MOTIP's detection pre-training on VastMAT Protocol 1 (official configs/pretrain_r50_deformable_detr_dancetrack.yaml:
# ONLY_DETR, single frames, from a COCO Deformable DETR): the DETR of motip_r50_8xb1-10e_vastmat-p1.py alone, 20
# epochs, lr 1e-4 (x0.1 after 15), no warm-up, 8 GPUs x 2 images. Its checkpoint starts the MOTIP training
# (load_from=...). A COCO Deformable DETR (mmdet's deformable-detr-refine_r50_16xb2-50e_coco) loads into
# model.detector with load_from=... (its 80-class heads are skipped with a warning).
#   bash tools/dist_train.sh configs/motip/motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py 8 \
#       --cfg-options load_from=COCO_DEFORMABLE_DETR.pth
_base_ = ['./motip_r50_8xb1-10e_vastmat-p1.py']

model = dict(only_detr=True, num_train_frames=1)
# single frames with 1 to 300 evaluated identities (official SAMPLE_LENGTHS [1] through the same NaiveSampler and
# is_legal), the augmentation of the MOTIP training
train_pipeline = [
    dict(type='VastMATClipSample', clip_length=1, min_identities=_base_.min_identities,
         max_identities=_base_.max_identities),
    *_base_.train_augmentation,
    dict(type='PackVastMATInputs')
]
train_dataloader = dict(batch_size=2, dataset=dict(pipeline=train_pipeline))
max_epochs = 20
train_cfg = dict(max_epochs=max_epochs)
# the ID part gets no gradient: one clipping set, the DETR
optim_wrapper = dict(_delete_=True, type='OptimWrapper', optimizer=dict(type='AdamW', lr=1e-4, weight_decay=5e-4),
                     clip_grad=dict(max_norm=0.1, norm_type=2),
                     paramwise_cfg=dict(custom_keys={
                         'backbone': dict(lr_mult=0.1),
                         'sampling_offsets': dict(lr_mult=0.05),
                         'reference_points': dict(lr_mult=0.05)
                     }))
param_scheduler = [dict(type='MultiStepLR', begin=0, end=max_epochs, by_epoch=True, milestones=[15],
                        gamma=0.1)]
find_unused_parameters = True  # the tracker's modules are not trained in this stage
auto_scale_lr = dict(base_batch_size=16)
