# IoU, as the original trackers (ByteTrack family: +1 pixel convention of cython_bbox).
matcher = dict(type='IoU', plus_one=True)
