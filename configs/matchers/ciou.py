# Complete-IoU, (CIoU + 1) / 2 clipped to [0, 1].
matcher = dict(type='CIoU')
