# TrackTrack with the VastMAT paper's settings (reference/trackers.md section 3; paper: max_time_lost 20,
# det/init/match thresholds 0.60, TAI 0.55, penalties 0.20/0.40, DIoU gate, AFLink on), shared by the cached-detection
# and detector-in-the-loop configs of configs/tracktrack/ (each adds its camera motion).
tracker = dict(
    type='TrackTrackTracker',
    det_thr=0.60,  # paper (= the official DanceTrack test setting)
    init_thr=0.60,
    match_thr=0.60,
    reduce_step=0.05,
    penalty_p=0.20,
    penalty_q=0.40,
    tai_thr=0.55,
    min_len=3,
    max_time_lost=20,  # paper; the official run.py uses 2 x frameRate (also 20 at VastMAT's 10 FPS)
    matcher=dict(type='HMIoU', plus_one=True),  # the geometric term: 1 - HIoU * IoU
    gate=dict(type='NormDIoUGate', thr=0.10),  # paper E.1 (the official code gates IoU <= 0.10)
    # without feature columns the appearance term is dropped and the other weights are scaled by 1.15 / 0.65 so
    # that the cost keeps its range (the official code would add a constant 0.5)
    weights=dict(geometric=0.50, appearance=0.50, confidence=0.10, direction=0.05),
    deleted_dets='nms95',  # the NMS-0.95 detections (TPA's penalty_q)
    min_box_area=100,
    aspect_ratio_thresh=None)  # the official w/h > 1.6 filter is for pedestrians (MOT) only
# AFLink (thresholds of the official TrackTrack DanceTrack runs) with a PostLinker trained on VastMAT ground truth
# (tools/train.py configs/aflink/postlinker_vastmat-p1.py)
aflink = dict(type='AFLink', thrT=(0, 20), thrS=100, thrP=0.05,
              checkpoint='work_dirs/postlinker_vastmat-p1/epoch_20.pth')
