"""Dense heads that mmdet lacks: FairMOT's heatmap / size / offset / identity heads."""
from .fairmot_checkpoint import official_centernet_state_dict, official_fairmot_state_dict
from .fairmot_head import FairMOTHead, gaussian_radius, letterbox_to_frame, uncertainty_loss

__all__ = ['FairMOTHead', 'gaussian_radius', 'letterbox_to_frame', 'official_centernet_state_dict',
           'official_fairmot_state_dict', 'uncertainty_loss']
