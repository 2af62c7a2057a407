# MOTIP on VastMAT Protocol 2 (Unseen, category-disjoint): motip_r50_8xb1-10e_vastmat-p1.py with the Protocol 2
# splits (its DETR pre-trained on Protocol 2's training split: motip_r50_8xb2-20e_vastmat-p2_detr-pretrain.py).
#   bash tools/dist_train.sh configs/motip/motip_r50_8xb1-10e_vastmat-p2.py 8
#   python tools/test.py configs/motip/motip_r50_8xb1-10e_vastmat-p2.py --checkpoint W/epoch_10.pth
_base_ = ['./motip_r50_8xb1-10e_vastmat-p1.py']

# the Protocol 2 DETR pre-training's last checkpoint (load_from=None: ImageNet, as in the P1 config)
load_from = 'work_dirs/motip_r50_8xb2-20e_vastmat-p2_detr-pretrain/epoch_20.pth'

protocol = 'protocol2'
train_dataloader = dict(dataset=dict(protocol=protocol))
test_dataloader = dict(dataset=dict(protocol=protocol))
