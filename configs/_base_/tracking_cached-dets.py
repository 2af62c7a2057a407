# Testing an online tracker on cached detections (tools/test.py CONFIG --det-root DIR [--data-root DIR]).
# Frames are not loaded; each frame's detections come from DIR/<video>.txt or DIR/<video>/det/det.txt, keyed by
# the frame's number in the video's own files (LoadTrackingDetections), extra det.txt columns as features.
_base_ = ['./default_runtime.py']

data_root = 'data/vastmat/'
det_root = 'data/vastmat_dets/protocol1_test/'  # replaced by --det-root

model = dict(
    type='TrackingByDetection',
    data_preprocessor=dict(type='TrackingDataPreprocessor'),
    tracker=dict(),  # set by each tracker's config
    post_processors=[])  # per-video, e.g. [dict(type='InterpolateTracks', min_num_frames=5, max_num_frames=20)]

test_pipeline = [
    dict(
        type='TransformBroadcaster',
        transforms=[dict(type='LoadTrackAnnotations'),
                    dict(type='LoadTrackingDetections', det_root=det_root)]),
    dict(type='PackVastMATInputs'),
]
test_dataloader = dict(
    batch_size=1,
    num_workers=0,
    persistent_workers=False,
    drop_last=False,
    # one frame per item; under tools/dist_test.sh each rank takes whole videos
    sampler=dict(type='TrackImgSampler'),
    dataset=dict(
        type='VastMATDataset',
        data_root=data_root,
        protocol='protocol1',
        split='test',
        load_as='video',
        test_mode=True,
        pipeline=test_pipeline))
# results to WORK_DIR/results/<video>.txt (set by tools/test.py), metrics where gt/gt.txt exists
test_evaluator = dict(type='VastMATMetric', preset='vastmat')
test_cfg = dict(type='TestLoop')
default_hooks = dict(logger=dict(type='LoggerHook', interval=500))
