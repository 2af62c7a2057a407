# Runtime shared by every VastMAT config (as mmdet's configs/_base_/default_runtime.py, in the vastmat scope).
default_scope = 'vastmat'
# VastMATRunner = mmengine's Runner + weights-only checkpoints + gloo distributed runs on machines without GPUs.
runner_type = 'VastMATRunner'

default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=50),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(type='CheckpointHook', interval=1),
    sampler_seed=dict(type='DistSamplerSeedHook'),
    visualization=dict(type='DetVisualizationHook'))

env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    # nccl on GPUs; without GPUs VastMATRunner starts a gloo group itself.
    dist_cfg=dict(backend='nccl'))

vis_backends = [dict(type='LocalVisBackend')]
visualizer = dict(type='DetLocalVisualizer', vis_backends=vis_backends, name='visualizer')
log_processor = dict(type='LogProcessor', window_size=50, by_epoch=True)

log_level = 'INFO'
load_from = None
resume = False
