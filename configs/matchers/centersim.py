# Centre similarity max(0, 1 - d / mean diagonal) (paper section 4).
matcher = dict(type='CenterSim', denominator='mean')
