# The zoo's D2MP (`make demo`, tools/zoo_benchmark.py: DiffMOT's motion model): the narrow D2MP of
# d2mp_tiny_animaltrack.py trained on the trajectories of the Protocol 1 train videos of the rendered demo data.
_base_ = ['./d2mp_tiny_animaltrack.py']

data_root = 'data/demo/'
max_iters = 100
zoo_seconds_per_iter = 0.14  # measured as make demo runs it (vastmat/experiments/zoo_plan.py: 1 thread in a worker)
zoo_probe_seconds_per_iter = 0.143  # its pace probe there (vastmat/experiments/zoo_pace.py), the median of 3

# iteration-based: an endless sampler, so mmengine's loop does not restart the dataloader (and pause 2 s) each pass
train_dataloader = dict(
    batch_size=256,
    sampler=dict(type='InfiniteSampler', shuffle=True),
    dataset=dict(data_root=data_root, protocol='protocol1', split='train', videos=None, stride=1))
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_iters=max_iters)
default_hooks = dict(logger=dict(interval=100), checkpoint=dict(interval=max_iters, max_keep_ckpts=-1))
