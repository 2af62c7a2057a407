"""Online trackers (MODELS): each implements :class:`BaseTracker` (``reset`` per video, ``update(frame)`` per
frame); the tracking-by-detection trackers keep their tracks as rows of arrays (:mod:`.track_store`: the ByteTrack
family's lifecycle for BYTETracker, JDETracker and DiffMOT, one list of rows for TrackTrack and plugins such as
SORT) and share the states and output filter of :mod:`.track_lifecycle`."""
from .base_tracker import BaseTracker
from .byte_tracker import BYTETracker
from .diffmot_tracker import DiffMOTTracker
from .jde_tracker import JDETracker
from .motip_modules import MOTIPIDDecoder, MOTIPTrajectoryModeling
from .motip_tracker import MOTIPTracker
from .quasi_dense_tracker import QDTrackTracker
from .tcei_tracker import TCEITracker
from .track_store import (KalmanTracks, KalmanTrackStore, TrackList, TrackRows, TrackStore, TrackTable,
                          column)
from .tracktrack import TrackTrackTracker
from .transtrack_tracker import TransTrackTracker
from .zoo import ZooTracker, zoo_trackers

__all__ = ['BaseTracker', 'BYTETracker', 'DiffMOTTracker', 'JDETracker', 'KalmanTracks', 'KalmanTrackStore',
           'MOTIPIDDecoder', 'MOTIPTracker', 'MOTIPTrajectoryModeling', 'QDTrackTracker', 'TCEITracker', 'TrackList',
           'TrackRows', 'TrackStore', 'TrackTable', 'TrackTrackTracker', 'TransTrackTracker', 'ZooTracker',
           'column', 'zoo_trackers']
