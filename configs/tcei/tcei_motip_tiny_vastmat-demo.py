# TCEI on the tiny MOTIP of configs/motip/motip_tiny_vastmat-demo.py (the demo data): track with its checkpoint.
#   python tools/test.py configs/tcei/tcei_motip_tiny_vastmat-demo.py --checkpoint work_dirs/.../iter_8.pth
_base_ = ['../motip/motip_tiny_vastmat-demo.py']

model = dict(tracker=dict(type='TCEITracker', preset='bft'))
