# TrackTrack's height-modulated IoU: HIoU * IoU (HIoU without, IoU with the +1 pixel convention, as the original).
matcher = dict(type='HMIoU', plus_one=True)
