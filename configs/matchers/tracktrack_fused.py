# TrackTrack's association cost as a matcher: 0.50 (1 - HIoU * IoU) + 0.50 cos + 0.10 conf + 0.05 angle,
# pairs with IoU <= 0.10 rejected (reference/trackers.md section 3).
matcher = dict(
    type='Fused',
    geometric=dict(type='HMIoU', plus_one=True),
    weights=dict(geometric=0.50, appearance=0.50, confidence=0.10, direction=0.05),
    gate=dict(type='IoUGate', thr=0.10, plus_one=True))
