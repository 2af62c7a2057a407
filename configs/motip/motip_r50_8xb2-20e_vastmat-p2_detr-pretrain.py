# MOTIP's detection pre-training on VastMAT Protocol 2 (Unseen): motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py with
# the Protocol 2 splits.
#   bash tools/dist_train.sh configs/motip/motip_r50_8xb2-20e_vastmat-p2_detr-pretrain.py 8
# (load_from: the converted COCO Deformable DETR, as the P1 pre-training)
_base_ = ['./motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py']

protocol = 'protocol2'
train_dataloader = dict(dataset=dict(protocol=protocol))
test_dataloader = dict(dataset=dict(protocol=protocol))
