# FairMOT's JDE tracker on cached detections with embeddings: the boxes and 128-d identity embeddings of a FairMOT
# network dumped once, then tracked (and re-tracked with other matchers) without the network:
#   python tools/test.py configs/fairmot/fairmot_dla34_1xb12-30e_vastmat-p1.py --checkpoint CKPT --work-dir W \
#       --dump-dets DETS            # det.txt rows + embedding columns, FairMOT's decoded detections (score > 0.4)
#   python tools/test.py configs/fairmot/fairmot_cached-dets.py --det-root DETS --work-dir W2
# Another matcher in the IoU stages: --cfg-options model.tracker.matcher.type=CDA (configs/matchers/).
# The tracker settings must be those of the tracking config the detections came from (here the full-size one).
_base_ = ['../_base_/tracking_cached-dets.py']

model = dict(
    tracker=dict(
        type='JDETracker',
        conf_thres=0.4,
        track_buffer=30,
        buffer_frame_rate=None,  # each video's own rate, as the official track.py
        matcher=dict(type='IoU', plus_one=True),
        min_box_area=100,
        aspect_ratio_thresh=None))  # the official w / h > 1.6 filter is a pedestrian prior
