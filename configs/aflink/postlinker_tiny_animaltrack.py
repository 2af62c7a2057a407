# A few CPU iterations of the PostLinker training (configs/aflink/postlinker_vastmat-p1.py) on two AnimalTrack train
# videos at 10 FPS (every third frame), for tests. Override the data with
#     --cfg-options train_dataloader.dataset.data_root=DIR train_dataloader.dataset.videos=None
_base_ = ['./postlinker_vastmat-p1.py']

data_root = '../shared/data/AnimalTrack/train/'

train_dataloader = dict(
    batch_size=4,
    dataset=dict(type='AFLinkPairs', data_root=data_root, protocol=None, split=None,
                 videos=['chicken_3', 'deer_4'], stride=3))
train_cfg = dict(_delete_=True, type='IterBasedTrainLoop', max_iters=2)
param_scheduler = [dict(type='CosineAnnealingLR', T_max=2, eta_min=1e-5, by_epoch=False, begin=0, end=2)]
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=1),
    checkpoint=dict(type='CheckpointHook', interval=2, by_epoch=False, max_keep_ckpts=1, save_last=True))
log_processor = dict(by_epoch=False)
