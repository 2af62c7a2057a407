# TrackTrack with the official MOT17 settings (kamkyu94/TrackTrack utils/etc.py set_parameters): det / init
# thresholds 0.60 / 0.70 with per-sequence overrides, match 0.70, max_time_lost = 2 x frameRate, the IoU <= 0.10
# gate, the w/h > 1.6 output filter, GBI (interval 30) as the post-processing.
_base_ = ['./tracktrack_cached-dets.py']

model = dict(
    tracker=dict(
        det_thr=0.60,
        init_thr=0.70,
        match_thr=0.70,
        video_overrides=[
            dict(contains=('01', '03', '12'), det_thr=0.65, init_thr=0.75),
            dict(contains=('07', ), det_thr=0.60, init_thr=0.60),
            dict(contains=('14', ), det_thr=0.45, init_thr=0.55)],
        max_time_lost=None,
        gate=dict(_delete_=True, type='IoUGate', thr=0.10, plus_one=True),
        aspect_ratio_thresh=1.6),
    post_processors=[dict(type='GBInterpolation', interval=30)])
