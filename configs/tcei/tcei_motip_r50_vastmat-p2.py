# TCEI on VastMAT Protocol 2 (Unseen): tcei_motip_r50_vastmat-p1.py with MOTIP's Protocol 2 model and splits.
#   python tools/test.py configs/tcei/tcei_motip_r50_vastmat-p2.py --checkpoint MOTIP_P2_W/epoch_10.pth
_base_ = ['../motip/motip_r50_8xb1-10e_vastmat-p2.py']

model = dict(tracker=dict(type='TCEITracker', preset='bft'))
