# Efficient-IoU, (EIoU + 1) / 2 clipped to [0, 1].
matcher = dict(type='EIoU')
