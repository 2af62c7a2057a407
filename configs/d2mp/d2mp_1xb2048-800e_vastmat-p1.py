# DiffMOT's D2MP motion model trained on VastMAT Protocol 1 train ground truth, with the official training settings
# (Kroery/DiffMOT configs/dancetrack.yaml, diffmot.py; reference/trackers.md section 2): windows of interval 5 from
# every track, batch 2048 (the official DataParallel batch over its 4 GPUs), Adam lr 1e-4, 800 epochs, a checkpoint
# every 20 epochs. The official ExponentialLR(0.98) is built but never stepped, so the learning rate is constant.
#     python tools/train.py configs/d2mp/d2mp_1xb2048-800e_vastmat-p1.py
# The checkpoint then drives the tracker: model.tracker.motion.checkpoint=work_dirs/d2mp_1xb2048-800e_vastmat-p1/
# epoch_800.pth in configs/diffmot/*.py.
_base_ = ['../_base_/default_runtime.py']

data_root = 'data/vastmat/'
protocol = 'protocol1'
max_epochs = 800  # official `epochs` (DanceTrack, MOT; SportsMOT 1200)

model = dict(type='D2MP', encoder_dim=256, tf_layer=3, eps=0.001)  # official encoder_dim, tf_layer, eps

train_dataloader = dict(
    batch_size=2048,  # official batch_size
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=True),  # official DataLoader(shuffle=True)
    collate_fn=dict(type='default_collate'),  # stacks the (5, 8) conditions and (4,) targets
    # VastMAT is at 10 FPS already (stride 1); stride=3 turns 30 FPS MOTChallenge-style data into 10 FPS
    dataset=dict(type='TrajectoryWindowDataset', data_root=data_root, protocol=protocol, split='train', stride=1,
                 interval=5))  # official interval 5
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=max_epochs)
val_cfg = None
val_dataloader = None
val_evaluator = None
test_cfg = None
test_dataloader = None
test_evaluator = None

optim_wrapper = dict(type='OptimWrapper', optimizer=dict(type='Adam', lr=1e-4))  # official lr, torch defaults
param_scheduler = []  # constant learning rate (the official scheduler is never stepped)
# HMINet keeps two registered template layers that take no part in the forward pass (as the official module), so
# distributed training must allow parameters without gradients
find_unused_parameters = True

default_hooks = dict(
    logger=dict(type='LoggerHook', interval=20),
    checkpoint=dict(type='CheckpointHook', interval=20, max_keep_ckpts=3, save_last=True))  # official eval_every 20
randomness = dict(seed=123)  # the official config's seed (which the official script never applies)
auto_scale_lr = dict(enable=False, base_batch_size=2048)
