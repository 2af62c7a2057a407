# DiffMOT on cached detections with the narrow D2MP of configs/d2mp/d2mp_tiny_animaltrack.py, for tests:
#   model.tracker.motion.checkpoint=<a checkpoint of that config> (or allow_untrained_motion=True for an untrained
#   one). Association settings as diffmot_cached-dets.py.
_base_ = ['./diffmot_cached-dets.py']

model = dict(tracker=dict(motion=dict(encoder_dim=32, tf_layer=1)))
