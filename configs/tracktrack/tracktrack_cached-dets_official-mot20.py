# TrackTrack with the official MOT20 settings (kamkyu94/TrackTrack utils/etc.py set_parameters): det / init
# thresholds 0.40 / 0.40, 0.40 / 0.50 for sequences 04, 06, 07 (the official '08' branch, 0.30 / 0.40, is overwritten
# by the if/else that follows it, so it never applies), match 0.55, max_time_lost = 2 x frameRate, the IoU <= 0.10
# gate, the w/h > 1.6 output filter, GBI (interval 30).
_base_ = ['./tracktrack_cached-dets.py']

model = dict(
    tracker=dict(
        det_thr=0.40,
        init_thr=0.40,
        match_thr=0.55,
        video_overrides=[dict(contains=('04', '06', '07'), det_thr=0.40, init_thr=0.50)],
        max_time_lost=None,
        gate=dict(_delete_=True, type='IoUGate', thr=0.10, plus_one=True),
        aspect_ratio_thresh=1.6),
    post_processors=[dict(type='GBInterpolation', interval=30)])
