"""The motion-matcher study's settings: its frame-rate settings, matchers, the candidate and its targets, and the
command line's options checked (:class:`StudySettings`)."""
from __future__ import annotations

import os.path as osp
from dataclasses import dataclass, field

from vastmat.experiments.matcher_study import study_trackers
from vastmat.utils.errors import UserInputError

# name: (stride of AnimalTrack train, None: the 10 FPS set as it is)
SETTINGS = {'10fps': None, '5fps': 6, '3fps': 10}
DEFAULT_MATCHERS = ('iou', 'cda-fixed', 'cda-adaptive', 'cda-motion-adaptive')
BASELINE = 'iou'
SUBSETS = ('all', 'sparsest third')
COLUMNS = ('HOTA', 'AssA', 'IDF1')
# the targets of the candidate matcher: on the dense setting (all its videos) at least IoU's HOTA; on every
# other row (the sparse / fast settings and each setting's sparsest third) at least the better CDA's
DENSE_ROW = ('10fps', 'all')
CDA_REFERENCES = ('cda-fixed', 'cda-adaptive')
CANDIDATE = 'cda-motion-adaptive'
MARKERS = ('o', 's', '^', 'D', 'v', 'P', 'X', '*')
# the match setting (paper / official) is named by ByteTrack's first-stage threshold, stated in the title
SETTING_TRACKER = 'bytetrack'
# what the sparse settings' simulation.json records as their maker (the same simulation as that tool's)
SIMULATOR = 'tools/data/simulate_detections.py'


@dataclass
class StudySettings:
    """The study as the command line gives it (``tools/analysis/motion_matcher_study.py``'s flags)."""

    work_dir: str
    dense_root: str
    animaltrack_root: str
    trackers: list[str] | None = None  # None: every study tracker
    settings: list[str] = field(default_factory=lambda: list(SETTINGS))
    matchers: list[str] = field(default_factory=lambda: list(DEFAULT_MATCHERS))
    videos: list[str] | None = None
    d2mp_checkpoint: str | None = None
    workers: int = 1
    match_setting: str = 'official'
    pixels: str = 'plus-one'
    preset: str = 'vastmat'
    sim_seed: int = 1
    color_by: str | None = None
    cfg_options: list[str] = field(default_factory=list)
    bootstrap: int = 1000
    level: float = 0.9
    seed: int = 0
    candidate: str | None = None

    def check(self) -> None:
        """Every setting valid (one :class:`UserInputError` naming the flag), defaults filled in."""
        known = study_trackers()
        self.trackers = list(self.trackers or known)
        unknown = [t for t in self.trackers if t not in known]
        if unknown:
            raise UserInputError(f'--trackers {" ".join(unknown)}: not a study tracker (known: {", ".join(known)})')
        if self.bootstrap < 0:
            raise UserInputError('--bootstrap must be >= 0')
        if not 0.0 < self.level < 1.0:
            raise UserInputError('--level must lie in (0, 1)')
        if self.candidate is None:
            self.candidate = CANDIDATE if CANDIDATE in self.matchers else None
        elif self.candidate not in self.matchers:
            raise UserInputError(f'--candidate {self.candidate} is not among --matchers')
        if self.workers < 1:
            raise UserInputError('--workers must be at least 1')
        if BASELINE not in self.matchers:
            raise UserInputError(f'--matchers must include {BASELINE} (the gains are over it)')
        if len(set(self.matchers)) != len(self.matchers):
            raise UserInputError('--matchers: a matcher is given twice')
        for name in self.trackers:
            key = known[name].motion_checkpoint_key
            if key and not self.d2mp_checkpoint and not any(f'model.tracker.{key}=' in t for t in self.cfg_options):
                raise UserInputError(f'{name} needs a trained motion model: --d2mp-checkpoint FILE (configs/d2mp/ '
                                     'trains one)')
        if self.d2mp_checkpoint and not osp.isfile(self.d2mp_checkpoint):
            raise UserInputError(f'--d2mp-checkpoint {self.d2mp_checkpoint}: no such file')
        self.color_by = self.color_by or ('setting' if len(self.trackers) == 1 else 'tracker')

