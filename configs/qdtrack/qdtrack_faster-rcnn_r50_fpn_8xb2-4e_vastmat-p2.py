# QDTrack on VastMAT Protocol 2 (Unseen categories): the Protocol 1 config on the Protocol 2 splits.
_base_ = ['./qdtrack_faster-rcnn_r50_fpn_8xb2-4e_vastmat-p1.py']

protocol = 'protocol2'
train_dataloader = dict(dataset=dict(protocol=protocol))
val_dataloader = dict(dataset=dict(protocol=protocol))
test_dataloader = val_dataloader
