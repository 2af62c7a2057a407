"""Association modules, registered in ``vastmat.registry.MATCHERS``: similarity matchers (IoU family, CenterSim,
CDA, motion-adaptive CDA, fused costs), gates and assignment solvers."""
from .context import TRACK_CONTEXT_KEYS, FrameContext
from .gates import IoUGate, NormDIoUGate
from .matchers import (CDA, CIoU, CenterSim, DIoU, EIoU, Fused, GIoU, HMIoU, IoU, Similarity, center_similarity,
                       diou)
from .motion_adaptive import MotionAdaptiveCDA, center_ratio, motion_adaptive_iou_weight
from .solvers import Assignment, Greedy, Hungarian, LapJV, MutualBest

__all__ = ['IoU', 'GIoU', 'DIoU', 'CIoU', 'EIoU', 'CenterSim', 'CDA', 'HMIoU', 'Fused', 'Similarity', 'NormDIoUGate',
           'IoUGate', 'FrameContext', 'LapJV', 'Hungarian', 'Greedy', 'MutualBest', 'Assignment', 'center_similarity',
           'diou', 'MotionAdaptiveCDA', 'center_ratio', 'motion_adaptive_iou_weight', 'TRACK_CONTEXT_KEYS']
