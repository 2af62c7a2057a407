# TransTrack on VastMAT Protocol 1 trained on real frame pairs (the video sampling) instead of the released
# single-image recipe: the previous frame of each training frame is a neighbouring frame of its video,
# VastMATRefFrameSample within 0.1 s before it (direction='past': the previous frame at 10 FPS, the gap between the
# frames TransTrack links when tracking; a video's first frame is its own previous frame). Both frames get the same
# augmentation; the reference frame's own previous frame (for its feature fusion) is its random shift. Everything
# else is transtrack_r50_8xb2-20e_vastmat-p1.py.
_base_ = ['./transtrack_r50_8xb2-20e_vastmat-p1.py']

pair_range_seconds = 0.1

model = dict(previous_frame='reference')
train_pipeline = [
    dict(type='VastMATRefFrameSample', num_ref_imgs=1, frame_range_seconds=pair_range_seconds, filter_key_img=True,
         direction='past'),
    dict(type='TransformBroadcaster', share_random_params=True, transforms=_base_.train_transforms),
    dict(type='PackVastMATInputs')
]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
