# Generalized IoU, (GIoU + 1) / 2.
matcher = dict(type='GIoU')
