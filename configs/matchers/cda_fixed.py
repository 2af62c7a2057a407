# CDA with a fixed IoU weight: S = 0.25 IoU + 0.75 CenterSim (paper default alpha = 0.25).
matcher = dict(type='CDA', mode='fixed', alpha=0.25)
