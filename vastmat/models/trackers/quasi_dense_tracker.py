"""QDTrack's tracker in the model zoo: mmdet's ``QuasiDenseTracker`` (the official algorithm, reused as it is),
registered in VastMAT's scope as ``QDTrackTracker`` (a name of its own: no VastMAT component shadows an mmdet one) so
that it declares its zoo membership like the other trackers (:mod:`.zoo`)."""
from __future__ import annotations

from mmdet.models.trackers import QuasiDenseTracker as MMDetQuasiDenseTracker

from vastmat.registry import MODELS


@MODELS.register_module()
class QDTrackTracker(MMDetQuasiDenseTracker):
    """mmdet's ``QuasiDenseTracker``, unchanged (its own embedding association: no ``matcher``)."""

    zoo_name = 'QDTrack'
    zoo_demo_config = 'qdtrack/qdtrack_tiny_zoo_vastmat-demo.py'
