# The debug YOLOX (configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py) made deterministic for the kill-and-resume
# test (tests/engine/test_kill_resume.py): no random augmentation (no Mosaic / RandomAffine / MixUp / HSV / flip), a
# seeded sampler, no validation; 6 iterations with a checkpoint every 2. kill_pause_hook.py's hook pauses the run
# after the iteration named by $VASTMAT_TEST_PAUSE_AFTER_ITER, so that a test can SIGKILL it there.
_base_ = ['../../configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py']

custom_imports = dict(imports=['kill_pause_hook'], allow_failed_imports=False)  # tests/configs on PYTHONPATH
custom_hooks = [dict(type='PauseAfterIterHook')]

train_dataloader = dict(
    _delete_=True,
    batch_size=4,
    num_workers=0,
    persistent_workers=False,
    sampler=dict(type='DefaultSampler', shuffle=True, seed=0),
    dataset=dict(
        type={{_base_.dataset_type}},
        data_root={{_base_.data_root}},
        protocol='protocol1',
        split='train',
        load_as='image',
        pipeline=[
            dict(type='LoadImageFromFile'),
            dict(type='LoadAnnotations', with_bbox=True),
            dict(type='Resize', scale={{_base_.img_scale}}, keep_ratio=True),
            dict(type='Pad', pad_to_square=True, pad_val=dict(img=(114.0, 114.0, 114.0))),
            dict(type='FilterAnnotations', min_gt_bbox_wh=(1, 1), keep_empty=False),
            dict(type='PackDetInputs')
        ],
        filter_cfg=dict(filter_empty_gt=False, min_size=8)))
val_dataloader = None
val_cfg = None
val_evaluator = None
test_dataloader = None
test_cfg = None
test_evaluator = None

train_cfg = dict(type='IterBasedTrainLoop', max_iters=6, val_interval=1000)
param_scheduler = [dict(type='ConstantLR', factor=1.0, by_epoch=False, begin=0, end=6)]
default_hooks = dict(checkpoint=dict(type='CheckpointHook', interval=2, by_epoch=False))
