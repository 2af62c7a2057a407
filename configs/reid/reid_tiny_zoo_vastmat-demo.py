# The zoo's ReID model (`make demo`, tools/zoo_benchmark.py: TrackTrack's appearance features): the ResNet-18 of
# reid_tiny_vastmat-demo.py trained long enough on a CPU to tell the demo's animals apart, on identity crops of the
# Protocol 1 train videos of the rendered demo data.
_base_ = ['./reid_tiny_vastmat-demo.py']

max_iters = 100
zoo_seconds_per_iter = 0.23  # measured as make demo runs it (vastmat/experiments/zoo_plan.py: 1 thread in a worker)
zoo_probe_seconds_per_iter = 0.2292  # its pace probe there (vastmat/experiments/zoo_pace.py), the median of 3

# iteration-based: an endless sampler, so mmengine's loop does not restart the dataloader (and pause 2 s) each pass
train_dataloader = dict(sampler=dict(type='InfiniteSampler', shuffle=True),
                        dataset=dict(triplet_sampler=dict(num_ids=8, ins_per_id=4)))
optim_wrapper = dict(optimizer=dict(lr=0.01))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=False, begin=0, end=20),
    dict(type='CosineAnnealingLR', by_epoch=False, begin=20, end=max_iters, eta_min=1e-4)
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters + 1)
default_hooks = dict(logger=dict(interval=50), checkpoint=dict(interval=max_iters))
