# Fixed CDA with the paper's gate (appendix E.1): pairs with normalized DIoU <= 0.10 are rejected.
matcher = dict(type='CDA', mode='fixed', alpha=0.25, gate=dict(type='NormDIoUGate', thr=0.10))
