# VastMAT videos for models that train and test on video clips (QDTrack, FairMOT, TransTrack; as mmdet's
# configs/_base_/datasets/mot_challenge.py): TrackImgSampler makes every frame of every training video a key frame
# once an epoch, and one test item is one frame (under tools/dist_test.sh each rank takes whole videos); tracking
# results go to WORK_DIR/results/<video>.txt with TrackEval metrics where gt/gt.txt exists. A model's config sets
# the pipelines (train_dataloader = dict(dataset=dict(pipeline=...))) and its batch size; a config for another root
# or protocol sets data_root / protocol in each dataset.
data_root = 'data/vastmat/'
protocol = 'protocol1'

train_dataloader = dict(
    batch_size=2,
    num_workers=2,
    persistent_workers=True,
    sampler=dict(type='TrackImgSampler'),
    dataset=dict(
        type='VastMATDataset',
        data_root=data_root,
        protocol=protocol,
        split='train',
        load_as='video',
        pipeline=[]))
test_dataloader = dict(
    batch_size=1,
    num_workers=2,
    persistent_workers=False,
    drop_last=False,
    sampler=dict(type='TrackImgSampler'),
    dataset=dict(
        type='VastMATDataset',
        data_root=data_root,
        protocol=protocol,
        split='test',
        load_as='video',
        test_mode=True,
        with_gt=False,  # test items carry no ground truth: the tracking metric reads each video's gt.txt
        pipeline=[]))
test_evaluator = dict(type='VastMATMetric', preset='vastmat')
test_cfg = dict(type='TestLoop')
