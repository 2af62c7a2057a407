# MOTIP on VastMAT Protocol 2 (Unseen, category-disjoint): motip_r50_8xb1-10e_vastmat-p1.py with the Protocol 2
# splits (its DETR pre-trained on Protocol 2's training split: motip_r50_8xb2-20e_vastmat-p2_detr-pretrain.py).
#   bash tools/dist_train.sh configs/motip/motip_r50_8xb1-10e_vastmat-p2.py 8 --cfg-options load_from=DETR.pth
#   python tools/test.py configs/motip/motip_r50_8xb1-10e_vastmat-p2.py --checkpoint W/epoch_10.pth
_base_ = ['./motip_r50_8xb1-10e_vastmat-p1.py']

protocol = 'protocol2'
train_dataloader = dict(dataset=dict(protocol=protocol))
test_dataloader = dict(dataset=dict(protocol=protocol))
