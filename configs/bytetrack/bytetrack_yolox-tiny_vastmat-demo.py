# ByteTrack with the demo YOLOX of `make demo` (configs/yolox/yolox_tiny_1xb8-1200it_vastmat-demo.py) in the loop,
# on the demo data: the network of bytetrack_yolox-debug_vastmat-demo.py at the 192 px it was trained at.
_base_ = ['./bytetrack_yolox-debug_vastmat-demo.py']

img_scale = (192, 192)
model = dict(detector=dict(test_cfg=dict(score_thr=0.01)))  # YOLOX's own test threshold
tracking_pipeline = [
    dict(
        type='TransformBroadcaster',
        transforms=[
            dict(type='LoadImageFromFile'),
            dict(type='Resize', scale=img_scale, keep_ratio=True),
            dict(type='Pad', pad_to_square=True, pad_val=dict(img=(114.0, 114.0, 114.0))),
        ]),
    dict(type='PackVastMATInputs')
]
test_dataloader = dict(dataset=dict(pipeline=tracking_pipeline))
val_dataloader = test_dataloader
