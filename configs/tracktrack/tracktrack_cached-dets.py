# TrackTrack (Shim et al., CVPR 2025; reference/trackers.md section 3) on cached detections, with the VastMAT paper's
# settings (max_time_lost 20, det/init/match thresholds 0.60, TAI 0.55, penalties 0.20/0.40, DIoU gate, AFLink on).
#   python tools/test.py configs/tracktrack/tracktrack_cached-dets.py --det-root DETS \
#       --extra-det-root nms95=DETS95 [--data-root DATA] --work-dir W
# Inputs, as the official code's:
#   DETS     det.txt files with appearance features after the ten columns (tools/test.py REID_CONFIG --checkpoint C
#            --det-root DETS0 --dump-feats DETS); without feature columns the appearance term is dropped and the other
#            weights are scaled by 1.15 / 0.65 so that the cost keeps its range (the official code would add 0.5)
#   DETS95   the same detector's boxes with NMS 0.95 (the "deleted detections" of TPA's penalty_q: tools/test.py
#            YOLOX_CONFIG --checkpoint C --dump-dets DETS95 --cfg-options model.test_cfg.nms.iou_threshold=0.95);
#            without them add --cfg-options model.tracker.deleted_dets=None
#   warps    per-video camera motion (tools/test.py ANY_FRAME_CONFIG --dump-warps DIR, ECC), here data/vastmat_warps
#   AFLink   a PostLinker trained on VastMAT ground truth (tools/train.py configs/aflink/postlinker_vastmat-p1.py)
_base_ = ['../_base_/tracking_cached-dets.py']

warp_root = 'data/vastmat_warps/protocol1_test/'
aflink_checkpoint = 'work_dirs/postlinker_vastmat-p1/epoch_20.pth'

model = dict(
    tracker=dict(
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
        weights=dict(geometric=0.50, appearance=0.50, confidence=0.10, direction=0.05),
        deleted_dets='nms95',
        camera_motion=dict(type='CachedCameraMotion', warp_root=warp_root),
        min_box_area=100,
        aspect_ratio_thresh=None),  # the official w/h > 1.6 filter is for pedestrians (MOT) only
    post_processors=[dict(type='AFLink', thrT=(0, 20), thrS=100, thrP=0.05, checkpoint=aflink_checkpoint)])

# the NMS-0.95 set is named on the command line: --extra-det-root nms95=DIR (LoadTrackingDetections.extra_det_roots)
