# AFLink's PostLinker trained on VastMAT Protocol 1 train ground truth, with the official settings of
# StrongSORT / TrackTrack `AFLink/config.py` and `train.py`: 20 epochs over the ground-truth tracks of at least 30 rows
# (one item a track: 1 positive and 3 negative window pairs), batch 16 tracks (64 pairs), drop_last, Adam lr 1e-3,
# weight decay 1e-5, cosine annealing to 1e-5 stepped once an epoch, cross-entropy. No validation (the official
# train.py calls none). The checkpoint is then used by trackers as
#     post_processors=[dict(type='AFLink', checkpoint='work_dirs/postlinker_vastmat-p1/epoch_20.pth')]
_base_ = ['../_base_/default_runtime.py']

data_root = 'data/vastmat/'
protocol = 'protocol1'
max_epochs = 20

model = dict(type='PostLinkerModel')

train_dataloader = dict(
    batch_size=16,
    num_workers=0,
    persistent_workers=False,
    drop_last=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    # VastMAT is at 10 FPS already (stride 1); stride=3 turns 30 FPS MOTChallenge-style data into 10 FPS
    dataset=dict(type='AFLinkPairs', data_root=data_root, protocol=protocol, split='train', videos=None, stride=1,
                 mode='train', min_len=30, input_len=30))
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=max_epochs)
val_cfg = None
val_dataloader = None
val_evaluator = None
test_cfg = None
test_dataloader = None
test_evaluator = None

optim_wrapper = dict(type='OptimWrapper', optimizer=dict(type='Adam', lr=1e-3, weight_decay=1e-5))
# torch's CosineAnnealingLR(T_max=20, eta_min=1e-5) stepped after every epoch
param_scheduler = [dict(type='CosineAnnealingLR', T_max=max_epochs, eta_min=1e-5, by_epoch=True, begin=0,
                        end=max_epochs)]

default_hooks = dict(
    logger=dict(type='LoggerHook', interval=10),
    checkpoint=dict(type='CheckpointHook', interval=5, max_keep_ckpts=2, save_last=True))
log_processor = dict(type='LogProcessor', window_size=10, by_epoch=True)
randomness = dict(seed=0)
auto_scale_lr = dict(enable=False, base_batch_size=16)
