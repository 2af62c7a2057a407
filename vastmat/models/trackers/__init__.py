"""Online trackers (MODELS): each implements :class:`BaseTracker` (``reset`` per video, ``update(frame)`` per
frame); the ByteTrack family shares :mod:`.track_lifecycle` (BYTETracker and JDETracker on its array form,
:mod:`.track_store`, whose track table TrackTrack uses with its own lifecycle)."""
from .base_tracker import BaseTracker
from .byte_tracker import BYTETracker
from .diffmot_tracker import DiffMOTTracker
from .jde_tracker import JDETracker
from .motip_modules import MOTIPIDDecoder, MOTIPTrajectoryModeling
from .motip_tracker import MOTIPTracker
from .quasi_dense_tracker import QDTrackTracker
from .tcei_tracker import TCEITracker
from .track_lifecycle import Track, TrackLifecycle
from .track_store import TrackList, TrackRows, TrackStore, TrackTable
from .tracktrack import TrackTrackTracker
from .transtrack_tracker import TransTrackTracker
from .zoo import ZooTracker, zoo_trackers

__all__ = ['BaseTracker', 'BYTETracker', 'DiffMOTTracker', 'JDETracker', 'MOTIPIDDecoder', 'MOTIPTracker',
           'MOTIPTrajectoryModeling', 'QDTrackTracker', 'TCEITracker', 'Track', 'TrackLifecycle', 'TrackList',
           'TrackRows', 'TrackStore', 'TrackTable', 'TrackTrackTracker', 'TransTrackTracker', 'ZooTracker',
           'zoo_trackers']
