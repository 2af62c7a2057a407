# A few CPU iterations of D2MP training (configs/d2mp/d2mp_1xb2048-800e_vastmat-p1.py) on one AnimalTrack train video
# at 10 FPS (every third frame), with a narrow D2MP (context 32, one layer per HMINet transformer), for tests and
# smoke runs. configs/diffmot/diffmot_tiny_cached-dets.py tracks with its checkpoint. Override the data with
#     --cfg-options train_dataloader.dataset.data_root=DIR train_dataloader.dataset.videos=None
_base_ = ['./d2mp_1xb2048-800e_vastmat-p1.py']

data_root = '../shared/data/AnimalTrack/train/'

model = dict(encoder_dim=32, tf_layer=1)
train_dataloader = dict(
    batch_size=16,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(data_root=data_root, protocol=None, split=None, videos=['chicken_3'], stride=3))
train_cfg = dict(_delete_=True, type='IterBasedTrainLoop', max_iters=3)
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=1),
    checkpoint=dict(type='CheckpointHook', interval=3, by_epoch=False, max_keep_ckpts=1, save_last=True))
log_processor = dict(by_epoch=False)
randomness = dict(seed=0)
