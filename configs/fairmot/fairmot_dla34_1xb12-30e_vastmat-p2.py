# FairMOT on VastMAT Protocol 2 (Unseen categories): the Protocol 1 config trained and tested on the Protocol 2 splits,
# from the same start (load_from: the converted CenterNet COCO ctdet_coco_dla_2x.pth; load_from=None: ImageNet).
_base_ = ['./fairmot_dla34_1xb12-30e_vastmat-p1.py']

protocol = 'protocol2'
train_dataloader = dict(dataset=dict(protocol=protocol))
test_dataloader = dict(dataset=dict(protocol=protocol))
