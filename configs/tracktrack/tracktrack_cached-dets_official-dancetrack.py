# TrackTrack with the official DanceTrack settings (kamkyu94/TrackTrack run.py + utils/etc.py set_parameters, test
# split): thresholds 0.60 / 0.60 / 0.60 (val: match 0.80), max_time_lost = 2 x frameRate, the official IoU <= 0.10
# gate, the w/h velocities of tracks not Tracked zeroed before predicting, AFLink with StrongSORT's MOT17 PostLinker
# (AFLink_epoch20.pth from the official repository; its state-dict keys load as they are).
_base_ = ['./tracktrack_cached-dets.py']

model = dict(
    tracker=dict(
        det_thr=0.60,
        init_thr=0.60,
        match_thr=0.60,
        max_time_lost=None,  # 2 x the video's frameRate (seqinfo.ini)
        gate=dict(_delete_=True, type='IoUGate', thr=0.10, plus_one=True),
        freeze_wh_velocity=True,
        aspect_ratio_thresh=None),
    post_processors=[dict(type='AFLink', thrT=(0, 20), thrS=100, thrP=0.05, checkpoint='AFLink_epoch20.pth')])
