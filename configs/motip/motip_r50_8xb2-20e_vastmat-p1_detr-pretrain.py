# MOTIP's detection pre-training on VastMAT Protocol 1 (official configs/pretrain_r50_deformable_detr_dancetrack.yaml:
# ONLY_DETR, single frames, from a COCO Deformable DETR): the DETR of motip_r50_8xb1-10e_vastmat-p1.py alone, 20
# epochs, lr 1e-4 (x0.1 after 15), no warm-up, 8 GPUs x 2 images. Its last checkpoint starts the MOTIP training
# (motip_r50_8xb1-10e_vastmat-p1.py's load_from).
#   bash tools/dist_train.sh configs/motip/motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py 8
_base_ = ['./motip_r50_8xb1-10e_vastmat-p1.py']

# Starting point, as the official (DETR_PRETRAIN r50_deformable_detr_coco.pth through load_detr_pretrain): the
# official COCO Deformable DETR with iterative box refinement (fundamentalvision/Deformable-DETR,
# r50_deformable_detr_plus_iterative_bbox_refinement-checkpoint.pth), its 91-row COCO class heads cut to the person
# row (COCO id 1, the official default) for the one-class head, converted by
#   python tools/model_converters/deformable_detr_official.py \
#       r50_deformable_detr_plus_iterative_bbox_refinement-checkpoint.pth \
#       checkpoints/deformable_detr_r50_refine_coco_person_vastmat.pth [--coco-class person]
# The person row, not a bird / animal row: VastMAT's one class covers many species (mammals, birds, fish, ...); the
# official takes person for every dataset but BFT (birds only; its DETR_DEFAULT_CLASS_IDX 15, commented "bird", is
# row 15 = bench of the COCO-id-indexed head, bird being 16). The row only initialises a classifier fine-tuned here
# for 20 epochs; --coco-class bird / cat / dog / ... converts another. --cfg-options load_from=None starts from the
# ImageNet ResNet-50 (the backbone's init_cfg) with a fresh transformer.
load_from = 'checkpoints/deformable_detr_r50_refine_coco_person_vastmat.pth'

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
# the MOTIP training's optimiser, with one clipping set: the ID part gets no gradient
optim_wrapper = dict(_delete_=True, type='OptimWrapper', optimizer=_base_.optim_wrapper.optimizer,
                     clip_grad=_base_.optim_wrapper.clip_grad, paramwise_cfg=_base_.optim_wrapper.paramwise_cfg)
param_scheduler = [dict(type='MultiStepLR', begin=0, end=max_epochs, by_epoch=True, milestones=[15],
                        gamma=0.1)]
find_unused_parameters = True  # the tracker's modules are not trained in this stage
auto_scale_lr = dict(base_batch_size=16)
