# TrackTrack with YOLOX-X on VastMAT Protocol 2 (Unseen categories): the Protocol 2 detector, ReID and AFLink
# checkpoints (each trained on the Protocol 2 train split).
_base_ = ['./tracktrack_yolox-x_vastmat-p1.py']

model = dict(
    reid=dict(init_cfg=dict(checkpoint='work_dirs/reid_r50_1xb64-6e_vastmat-p2/epoch_6.pth')),
    post_processors=[dict(_base_.aflink, checkpoint='work_dirs/postlinker_vastmat-p2/epoch_20.pth')])
test_dataloader = dict(dataset=dict(protocol='protocol2'))
val_dataloader = test_dataloader
