# TCEI (Guo et al., CVPR 2026; 1941Zpf/TCEI 145d1b8): MOTIP's runtime tracker with test-time calibration from
# per-video ("intuition") and cross-video ("experience") positive / negative caches (reference/trackers.md section 6).
# No training: it tracks with a trained MOTIP checkpoint of motip_r50_8xb1-10e_vastmat-p1.py, the tracker's modules
# (trajectory modelling, ID decoder) loading from it unchanged.
#   preset 'bft': the official BFT values (bird flocks, the one animal benchmark among the published presets; the
#               DanceTrack / SportsMOT values are preset='dancetrack'): per-video pos capacity 2 / alpha 1.0 /
#               beta 0.2 / T 0.02, neg 2 / 0.145 / 1.0 / T 0.05, cross-video pos 12 / 1.0 / 3, neg 2 / 0.150 / 1.0
#               with the entropy band (0.1, 0.5); fusion 'object_and_id', lambda_id 1.0
#   order       the cross-video caches persist from video to video in the test dataset's order (the split
#               file's order), each rank of tools/dist_test.sh keeping its own; --cfg-options
#               model.tracker.reset_experience_per_video=True makes every video independent of the others
#   values      other TCEI values go in params, over the preset's (the fields of TCEIParams,
#               vastmat/models/trackers/tcei_params.py), e.g. --cfg-options model.tracker.params.lambda_id=0.5
#   MOTIP's runtime settings stay those of the MOTIP config (det 0.3, newborn 0.6, id 0.2, object-max,
#   miss_tolerance 30)
#   python tools/test.py configs/tcei/tcei_motip_r50_vastmat-p1.py --checkpoint MOTIP_W/epoch_10.pth
_base_ = ['../motip/motip_r50_8xb1-10e_vastmat-p1.py']

model = dict(tracker=dict(type='TCEITracker', preset='bft'))
