"""Per-video post-processing of tracking results (interpolation, GSI; GBI and AFLink come with TrackTrack; the global
linker of a whole video's tracklets, with an optional known number of animals): each is
a ``TASK_UTILS`` component called on a video's tracks ``(N, 7)`` rows ``frame, id, x1, y1, x2, y2, score`` and
returning rows in the same form. ``TrackingByDetection(post_processors=[...])`` runs them, in order, after the
video's last frame and before its results are written and scored; one that declares ``takes_video_context`` (the
global linker) is also given the video's name and the tracks' embeddings."""
from .aflink import AFLink, PostLinker, PostLinkerModel
from .gbi import GBInterpolation
from .global_linking import GlobalLinker, LinkReport
from .interpolation import InterpolateTracks

__all__ = ['InterpolateTracks', 'AFLink', 'PostLinker', 'PostLinkerModel', 'GBInterpolation', 'GlobalLinker',
           'LinkReport']
