# Distance-IoU, (DIoU + 1) / 2.
matcher = dict(type='DIoU')
