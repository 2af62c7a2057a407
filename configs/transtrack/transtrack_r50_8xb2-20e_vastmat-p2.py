# TransTrack on VastMAT Protocol 2 (Unseen, category-disjoint): transtrack_r50_8xb2-20e_vastmat-p1.py with the
# Protocol 2 splits.
#   bash tools/dist_train.sh configs/transtrack/transtrack_r50_8xb2-20e_vastmat-p2.py 8
#   python tools/test.py configs/transtrack/transtrack_r50_8xb2-20e_vastmat-p2.py --checkpoint W/epoch_20.pth
_base_ = ['./transtrack_r50_8xb2-20e_vastmat-p1.py']

protocol = 'protocol2'
train_dataloader = dict(dataset=dict(protocol=protocol))
test_dataloader = dict(dataset=dict(protocol=protocol))
