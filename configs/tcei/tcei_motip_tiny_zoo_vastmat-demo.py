# TCEI in the zoo (`make demo`, tools/zoo_benchmark.py): the zoo's MOTIP checkpoint
# (configs/motip/motip_tiny_zoo_vastmat-demo.py) recalibrated at test time (BFT preset); no training of its own.
_base_ = ['../motip/motip_tiny_zoo_vastmat-demo.py']

model = dict(tracker=dict(type='TCEITracker', preset='bft'))
