# YOLOX-X for VastMAT Protocol 2 (Unseen categories): the Protocol 1 recipe on the Protocol 2 splits.
_base_ = './yolox_x_8xb4-80e_vastmat-p1.py'

protocol = 'protocol2'
train_dataloader = dict(dataset=dict(dataset=dict(protocol=protocol)))
val_dataloader = dict(dataset=dict(protocol=protocol))
test_dataloader = val_dataloader
