# ByteTrack with YOLOX-X on VastMAT Protocol 2 (Unseen categories); the detector checkpoint is the Protocol 2 one
# (configs/yolox/yolox_x_8xb4-80e_vastmat-p2.py).
_base_ = ['./bytetrack_yolox-x_vastmat-p1.py']

test_dataloader = dict(dataset=dict(protocol='protocol2'))
val_dataloader = test_dataloader
