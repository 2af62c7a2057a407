# Testing an online tracker on cached detections (tools/test.py CONFIG --det-root DIR [--data-root DIR]).
# One test item is one whole video (mmdet's video-based test sampling): its detections are read once from
# DIR/<video>.txt or DIR/<video>/det/det.txt, keyed by the frame's number in the video's own files, extra det.txt
# columns as features (LoadVideoDetections); no frame is loaded and no ground truth is packed (the metric reads each
# video's gt.txt). Under tools/dist_test.sh each rank takes whole videos.
_base_ = ['./default_runtime.py']

data_root = 'data/vastmat/'
det_root = 'data/vastmat_dets/protocol1_test/'  # replaced by --det-root

model = dict(
    type='TrackingByDetection',
    data_preprocessor=dict(type='TrackingDataPreprocessor'),
    tracker=dict(),  # set by each tracker's config
    post_processors=[])  # per-video, e.g. [dict(type='InterpolateTracks', min_num_frames=5, max_num_frames=20)]

test_pipeline = [dict(type='LoadVideoDetections', det_root=det_root), dict(type='PackVideoTrackingInputs')]
test_dataloader = dict(
    batch_size=1,
    num_workers=0,
    persistent_workers=False,
    drop_last=False,
    # one video per item, in order; round_up=False: under tools/dist_test.sh no video is repeated to even out ranks
    sampler=dict(type='DefaultSampler', shuffle=False, round_up=False),
    dataset=dict(
        type='VastMATDataset',
        data_root=data_root,
        protocol='protocol1',
        split='test',
        load_as='video',
        test_mode=True,
        with_gt=False,
        pipeline=test_pipeline))
# results to WORK_DIR/results/<video>.txt (set by tools/test.py), metrics where gt/gt.txt exists; each finished
# video is scored in a worker process while the next ones are tracked (tools/test.py --workers N)
test_evaluator = dict(type='VastMATMetric', preset='vastmat')
test_cfg = dict(type='TestLoop')
default_hooks = dict(logger=dict(type='LoggerHook', interval=5))  # iterations are videos
