"""Samplers for iteration-based training (``IterBasedTrainLoop``).

With a finite sampler, mmengine's loop restarts the dataloader at the end of every pass and sleeps 2 s each time
(``_InfiniteDataloaderIterator``: "to prevent possible deadlock"); on the demo's small datasets that sleep was most
of D2MP's and the ReID model's training time and, by the count of passes (3 to 15 in a zoo training), 7 to 22 %
of the others'. mmengine's ``InfiniteSampler`` is the cure for plain datasets; :class:`InfiniteTrackImgSampler` is
the same for video datasets, whose frames mmdet's ``TrackImgSampler`` gives.
"""
from __future__ import annotations

from typing import Any, Iterator

from mmdet.datasets.samplers import TrackImgSampler

from vastmat.registry import DATA_SAMPLERS


@DATA_SAMPLERS.register_module()
class InfiniteTrackImgSampler(TrackImgSampler):
    """mmdet's ``TrackImgSampler`` in training mode, pass after pass without end: pass ``k`` is the frames of every
    video shuffled with seed ``seed + k`` and split over the ranks, as ``TrackImgSampler`` at epoch ``k``, so the
    order of the frames is the one a restarted ``TrackImgSampler`` gives, without mmengine's 2 s pause per pass.

    Raises:
        ValueError: the dataset is in test mode (tracking reads each video once, in order).
    """

    def __init__(self, dataset, seed: int | None = None) -> None:
        super().__init__(dataset, seed=seed)
        if self.test_mode:
            raise ValueError('InfiniteTrackImgSampler: the dataset is in test mode; test dataloaders take '
                             'TrackImgSampler (each video once, in frame order)')

    def __iter__(self) -> Iterator:
        while True:
            yield from super().__iter__()
            self.epoch += 1


# a finite training sampler -> its endless variant (the same frames pass after pass; mmengine's InfiniteSampler draws
# its own order)
ENDLESS_SAMPLERS = {'TrackImgSampler': 'InfiniteTrackImgSampler', 'DefaultSampler': 'InfiniteSampler'}


def endless_sampler(sampler: dict[str, Any]) -> dict[str, Any]:
    """The config of ``sampler``'s endless variant, for an ``IterBasedTrainLoop`` (no restart, no 2 s pause a pass):
    :data:`ENDLESS_SAMPLERS`, ``VastMATClipSampler`` with ``infinite=True``; an endless one is returned as it is.

    Raises:
        ValueError: a sampler without a known endless variant (named).
    """
    kind = sampler.get('type')
    if kind == 'VastMATClipSampler':
        return dict(sampler, infinite=True)
    if kind in ENDLESS_SAMPLERS:
        endless = dict(sampler, type=ENDLESS_SAMPLERS[kind])
        endless.pop('round_up', None)  # DefaultSampler's only
        return endless
    if kind in ENDLESS_SAMPLERS.values():
        return dict(sampler)
    raise ValueError(f'sampler {kind!r}: no endless variant known (ENDLESS_SAMPLERS, VastMATClipSampler)')
