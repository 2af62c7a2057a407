# ByteTrack (official algorithm and defaults, reference/trackers.md section 1) on cached detections:
#   python tools/test.py configs/bytetrack/bytetrack_cached-dets.py --det-root DETS [--data-root DATA] --work-dir W
# Another matcher (configs/matchers/<name>.py, with its keys): --matcher cda_fixed,alpha=0.25
_base_ = ['../_base_/tracking_cached-dets.py']

model = dict(
    tracker=dict(
        type='BYTETracker',
        track_thresh=0.6,  # tools/track.py defaults
        low_thresh=0.1,
        track_buffer=30,
        # lost tracks live int(30 / 30 * 30) = 30 frames whatever the video's rate, as the official evaluator
        # (it builds every tracker with frame_rate=30); None: scale by the video's rate (10 FPS: 10 frames)
        buffer_frame_rate=30,
        match_thresh=0.9,
        second_match_thresh=0.5,
        unconfirmed_match_thresh=0.7,
        fuse_score=True,  # not mot20
        matcher=dict(type='IoU', plus_one=True),
        # the official evaluator drops boxes of area <= 100; its w/h > 1.6 filter is a pedestrian prior (off)
        min_box_area=100,
        aspect_ratio_thresh=None))
