# DiffMOT with YOLOX-X on VastMAT Protocol 2 (Unseen categories): the Protocol 2 detector checkpoint
# (configs/yolox/yolox_x_8xb4-80e_vastmat-p2.py) and a D2MP trained on Protocol 2 train (configs/d2mp/
# d2mp_1xb2048-800e_vastmat-p1.py with --cfg-options train_dataloader.dataset.protocol=protocol2), given as
#   --cfg-options model.tracker.motion.checkpoint=D2MP_P2_CKPT
_base_ = ['./diffmot_yolox-x_vastmat-p1.py']

test_dataloader = dict(dataset=dict(protocol='protocol2'))
val_dataloader = test_dataloader
