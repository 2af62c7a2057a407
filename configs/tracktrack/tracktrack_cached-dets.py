# TrackTrack (Shim et al., CVPR 2025; reference/trackers.md section 3) on cached detections, with the VastMAT paper's
# settings (max_time_lost 20, det/init/match thresholds 0.60, TAI 0.55, penalties 0.20/0.40, DIoU gate, AFLink on).
#   python tools/test.py configs/tracktrack/tracktrack_cached-dets.py --det-root DETS \
#       --extra-det-root nms95=DETS95 [--data-root DATA] --work-dir W
# Inputs, as the official code's:
#   DETS     det.txt files with appearance features after the ten columns (tools/test.py REID_CONFIG --checkpoint C
#            --det-root DETS0 --dump-feats DETS); without them the appearance term is dropped (see the tracker base)
#   DETS95   the same detector's boxes with NMS 0.95 (the "deleted detections" of TPA's penalty_q: tools/test.py
#            YOLOX_CONFIG --checkpoint C --dump-dets DETS95 --cfg-options model.test_cfg.nms.iou_threshold=0.95);
#            without them add --cfg-options model.tracker.deleted_dets=None
#   warps    per-video camera motion (tools/test.py ANY_FRAME_CONFIG --dump-warps DIR, ECC), here data/vastmat_warps
#   AFLink   a PostLinker trained on VastMAT ground truth (tools/train.py configs/aflink/postlinker_vastmat-p1.py)
_base_ = ['../_base_/tracking_cached-dets.py', '../_base_/trackers/tracktrack_vastmat.py']

warp_root = 'data/vastmat_warps/protocol1_test/'

model = dict(
    tracker=dict(camera_motion=dict(type='CachedCameraMotion', warp_root=warp_root), **_base_.tracker),
    post_processors=[_base_.aflink])
# the NMS-0.95 set is named on the command line: --extra-det-root nms95=DIR (LoadTrackingDetections.extra_det_roots)
