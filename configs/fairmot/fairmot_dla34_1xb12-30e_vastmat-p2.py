# FairMOT on VastMAT Protocol 2 (Unseen categories): the Protocol 1 config trained and tested on the Protocol 2 splits.
_base_ = ['./fairmot_dla34_1xb12-30e_vastmat-p1.py']

protocol = 'protocol2'
train_dataloader = dict(dataset=dict(protocol=protocol))
test_dataloader = dict(dataset=dict(protocol=protocol))
