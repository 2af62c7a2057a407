"""Frame sampling on VastMAT videos for models that train on several frames: key / reference pairs (QDTrack's
quasi-dense matching; mmdet's ``UniformRefFrameSample`` with the range in seconds and frames located by their number)
and MOTIP's legal clips of evenly spaced frames (its in-context ID prediction): the clip transform and the sampler
that makes an epoch of every legal clip once, as the official ``NaiveSampler``."""
from __future__ import annotations

import logging
import math
import random
from typing import Any, Iterator, Sequence as SequenceType

import numpy as np
import torch
from mmdet.datasets.transforms import UniformRefFrameSample
from mmengine.dist import get_dist_info, sync_random_seed
from mmengine.logging import print_log
from torch.utils.data import Sampler

from vastmat.registry import DATA_SAMPLERS, TRANSFORMS


def frames_for_seconds(video_infos: dict, seconds: float, who: str) -> int:
    """``round(seconds * frame rate)`` frames of this video (at least 1); ``who`` names the caller in errors."""
    rate = video_infos['images'][0].get('frame_rate') if video_infos['images'] else None
    if not rate:
        raise ValueError(f"{who}: video {video_infos.get('video_name')!r} has no frame rate (frameRate in its "
                         'seqinfo.ini), needed to convert seconds to frames')
    return max(1, round(seconds * float(rate)))


def start_position(video_infos: dict, who: str) -> int:
    """The position of the sampler's frame (``key_frame_id``; a random one without it) in the video's frame list."""
    images = video_infos['images']
    if not images:
        raise ValueError(f"{who}: video {video_infos.get('video_name')!r} has no frames")
    start = video_infos.get('key_frame_id')
    if start is None:
        start = random.randrange(len(images))
    if not 0 <= start < len(images):
        raise IndexError(f"{who}: frame {start} outside the {len(images)} frames of video "
                         f"{video_infos.get('video_name')!r}")
    return start


@TRANSFORMS.register_module()
class VastMATRefFrameSample(UniformRefFrameSample):
    """Sample ``num_ref_imgs`` reference frames within ``frame_range_seconds`` of the key frame.

    mmdet's ``UniformRefFrameSample`` counts the range in frames and by list position. That does not carry over to
    VastMAT: the videos are at 10 FPS (the published ``frame_range=10`` of QDTrack's MOT17 config is 1/3 s at 30 FPS
    but a whole second here), datasets may be strided, and a training split filtered with ``filter_empty_gt`` has
    gaps, so list neighbours can be seconds apart. Here the range is converted with each video's own frame rate
    (``round(frame_range_seconds * frame_rate)`` frames, at least 1) and reference candidates are the frames whose
    ``frame_id`` lies within it. A key frame without any candidate (isolated after filtering) is its own reference
    (a static pair), where mmdet's sampler would fail.

    Args:
        num_ref_imgs: reference frames per key frame.
        frame_range_seconds: the largest time between key and reference frame (default 10/30 s: QDTrack's MOT17
            ``frame_range=10`` at 30 FPS).
        filter_key_img: never take the key frame as its own reference while another candidate exists.
        direction: ``'both'`` (default, mmdet's): references before or after the key frame; ``'past'``: only before
            it (a model that treats the reference as the previous frame, TransTrack's real pairs); the first frame of
            a video is then its own reference.
        collect_video_keys: video keys copied to every sampled frame (mmdet's argument).
    """

    def __init__(self, num_ref_imgs: int = 1, frame_range_seconds: float = 10 / 30, filter_key_img: bool = True,
                 direction: str = 'both',
                 collect_video_keys: list[str] = ['video_id', 'video_length']) -> None:  # noqa: B006 (mmdet's)
        if frame_range_seconds <= 0:
            raise ValueError(f'VastMATRefFrameSample: frame_range_seconds must be > 0, got {frame_range_seconds}')
        if direction not in ('both', 'past'):
            raise ValueError(f"VastMATRefFrameSample: direction must be 'both' or 'past', got {direction!r}")
        self.direction = direction
        super().__init__(num_ref_imgs=num_ref_imgs, frame_range=0, filter_key_img=filter_key_img,
                         collect_video_keys=collect_video_keys)
        self.frame_range_seconds = frame_range_seconds

    def range_in_frames(self, video_infos: dict) -> int:
        """The range in frames of this video."""
        return frames_for_seconds(video_infos, self.frame_range_seconds, 'VastMATRefFrameSample')

    def sample_positions(self, frame_ids: list[int], key: int, frame_range: int) -> tuple[list[int], list[bool]]:
        """Positions (in the video's frame list) of the key and reference frames, sorted, and the key flags."""
        lowest, highest = -frame_range, (0 if self.direction == 'past' else frame_range)
        candidates = [p for p, frame in enumerate(frame_ids) if lowest <= frame - frame_ids[key] <= highest]
        if self.filter_key_img and len(candidates) > 1:
            candidates.remove(key)
        if len(candidates) < self.num_ref_imgs:
            candidates = candidates * self.num_ref_imgs
        positions = sorted([key] + random.sample(candidates, self.num_ref_imgs))
        flags = [False] * len(positions)
        flags[positions.index(key)] = True
        return positions, flags

    def transform(self, video_infos: dict) -> dict[str, Any]:
        key = start_position(video_infos, 'VastMATRefFrameSample')
        positions, flags = self.sample_positions([image['frame_id'] for image in video_infos['images']], key,
                                                 self.range_in_frames(video_infos))
        results = self.prepare_data(video_infos, positions)
        results['key_frame_flags'] = flags
        return results

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(num_ref_imgs={self.num_ref_imgs}, '
                f'frame_range_seconds={self.frame_range_seconds}, filter_key_img={self.filter_key_img}, '
                f'direction={self.direction!r})')


# ------------------------------------------------------------------------------------------------ MOTIP's clips
# The official rule for a training frame (MCG-NJU/MOTIP 5cfbcd4, data/util.py is_legal): 1 to 300 identities, none
# repeated ("a hack implementation for DETR (300 queries)"). The configs set these values explicitly.
OFFICIAL_MIN_IDENTITIES = 1
OFFICIAL_MAX_IDENTITIES = 300


def frame_is_legal(instance_ids: SequenceType[int] | np.ndarray,
                   ignore_flags: SequenceType[int] | np.ndarray | None = None,
                   min_identities: int = OFFICIAL_MIN_IDENTITIES,
                   max_identities: int = OFFICIAL_MAX_IDENTITIES) -> bool:
    """Whether a frame may be in a MOTIP training clip (official ``data/util.py`` ``is_legal``): its evaluated boxes
    (``ignore_flags`` 0; ignored boxes are no training target) carry ``min_identities`` to ``max_identities``
    identities, none of them twice."""
    ids = np.asarray(instance_ids).reshape(-1)
    if ignore_flags is not None:
        flags = np.asarray(ignore_flags).reshape(-1)
        if len(flags) != len(ids):
            raise ValueError(f'frame_is_legal: {len(flags)} ignore flags for {len(ids)} instance ids')
        ids = ids[flags == 0]
    return min_identities <= len(ids) <= max_identities and len(np.unique(ids)) == len(ids)


@TRANSFORMS.register_module()
class VastMATClipSample(UniformRefFrameSample):
    """A legal clip of ``clip_length`` frames evenly spaced by a random interval (MOTIP's ``random_interval``
    sampling, official ``data/naive_sampler.py`` ``NaiveSampler.prepare_for_epoch``).

    The official rule: a clip may start at frame ``b`` only when ``b + clip_length <= video length`` (no clip is
    moved back from the end, and a video shorter than a clip gives none); its interval is ``min(randint(1,
    max_interval), floor((length - b - 1) / (clip_length - 1)))``; it is kept only when every frame
    ``b, b + i, ..., b + (clip_length - 1) i`` is legal (:func:`frame_is_legal`: 1 to 300 evaluated identities, none
    repeated), otherwise that start is skipped for the epoch (no other interval is tried). :class:`VastMATClipSampler`
    draws the starts this way, each kept one once an epoch; here the interval of a start is drawn again from the
    official distribution restricted to the legal clips, so each clip (start and interval) has the official
    probability. A start that begins no legal clip (given by a sampler that offers every frame, such as mmdet's
    ``TrackImgSampler``), or no start at all, gives a random legal clip of the video, each with its official
    probability; a video without any legal clip gives ``None`` (mmengine's dataset then draws another item).

    The largest interval is in seconds, converted with each video's frame rate (official 4 frames at DanceTrack's 20
    FPS = 0.2 s; 2 frames at VastMAT's 10 FPS). Frames are taken by position in the video's frame list, so the
    training split must keep every frame (``filter_cfg=dict(filter_empty_gt=False)``, as the MOTIP configs set);
    frames without animals are excluded by the legality rule instead.

    Args:
        clip_length: frames per clip (official ``SAMPLE_LENGTHS``; must not exceed the ID decoder's
            ``rel_pe_length``).
        max_interval_seconds: the largest time between two consecutive clip frames (official ``SAMPLE_INTERVALS`` 4
            at 20 FPS).
        min_identities: the fewest evaluated identities of a clip frame (official 1).
        max_identities: the most evaluated identities of a clip frame (official 300, its DETR's queries).
        collect_video_keys: video keys copied to every sampled frame (mmdet's argument).
    """

    def __init__(self, clip_length: int = 30, max_interval_seconds: float = 4 / 20,
                 min_identities: int = OFFICIAL_MIN_IDENTITIES, max_identities: int = OFFICIAL_MAX_IDENTITIES,
                 collect_video_keys: list[str] = ['video_id', 'video_length']) -> None:  # noqa: B006 (mmdet's)
        if clip_length < 1:
            raise ValueError(f'VastMATClipSample: clip_length must be >= 1, got {clip_length}')
        if max_interval_seconds <= 0:
            raise ValueError(f'VastMATClipSample: max_interval_seconds must be > 0, got {max_interval_seconds}')
        if not 0 <= min_identities <= max_identities:
            raise ValueError(f'VastMATClipSample: need 0 <= min_identities <= max_identities, got {min_identities} '
                             f'and {max_identities}')
        super().__init__(num_ref_imgs=max(clip_length - 1, 0), frame_range=0, filter_key_img=False,
                         collect_video_keys=collect_video_keys)
        self.clip_length = int(clip_length)
        self.max_interval_seconds = float(max_interval_seconds)
        self.min_identities, self.max_identities = int(min_identities), int(max_identities)

    def max_interval(self, video_infos: dict) -> int:
        """The largest interval in frames of this video (at least 1)."""
        return frames_for_seconds(video_infos, self.max_interval_seconds, 'VastMATClipSample')

    def legal_frames(self, video_infos: dict) -> np.ndarray:
        """Per frame of the video (in list order), whether it may be in a clip.

        Raises:
            ValueError: the video has no frames, a frame has no ``instances`` (no ground truth loaded), or frames
                are missing from the list (clips take frames by position).
        """
        name, images = video_infos.get('video_name'), video_infos['images']
        if not images:
            raise ValueError(f'VastMATClipSample: video {name!r} has no frames')
        first = images[0]['frame_id']
        legal = np.zeros(len(images), dtype=bool)
        for k, image in enumerate(images):
            if image['frame_id'] != first + k:
                raise ValueError(f'VastMATClipSample: video {name!r} lacks frames (frame_id {image["frame_id"]} at '
                                 f'position {k}, first {first}): clips take frames by position, keep every frame '
                                 '(filter_cfg=dict(filter_empty_gt=False))')
            instances = image.get('instances')
            if instances is None:
                raise ValueError(f'VastMATClipSample: frame {image["frame_id"]} of video {name!r} has no instances '
                                 '(the ground truth is needed to choose legal clips)')
            legal[k] = frame_is_legal([inst['instance_id'] for inst in instances],
                                      [inst.get('ignore_flag', 0) for inst in instances],
                                      self.min_identities, self.max_identities)
        return legal

    def _fitting(self, num_frames: int, start: int) -> int:
        """The largest interval whose clip from ``start`` ends inside the video (the official ``max_interval``)."""
        return (num_frames - start - 1) // (self.clip_length - 1) if self.clip_length > 1 else 1

    def official_interval(self, rng: random.Random, num_frames: int, start: int, max_interval: int) -> int | None:
        """The official sampler's interval for ``start`` (one ``rng.randint`` draw), or ``None`` (and no draw)
        where no clip starts (``start + clip_length > num_frames``)."""
        if start + self.clip_length > num_frames:
            return None
        return min(rng.randint(1, max_interval), self._fitting(num_frames, start))

    def interval_choices(self, num_frames: int, start: int, max_interval: int) -> tuple[list[int], list[int]]:
        """The official interval distribution for ``start``: intervals and their counts among the ``max_interval``
        equally likely draws (all draws beyond the fitting interval give the fitting one); empty where no clip
        starts."""
        if start + self.clip_length > num_frames:
            return [], []
        top = min(max_interval, self._fitting(num_frames, start))
        return list(range(1, top + 1)), [1] * (top - 1) + [max_interval - top + 1]

    def clip_positions(self, start: int, interval: int) -> list[int]:
        """Positions of the clip's frames in the video's frame list."""
        return [start + interval * k for k in range(self.clip_length)]

    def is_legal_clip(self, legal: np.ndarray, start: int, interval: int) -> bool:
        """Whether every frame of the clip is legal (``legal`` from :meth:`legal_frames`)."""
        return bool(legal[start:start + interval * (self.clip_length - 1) + 1:interval].all())

    def legal_choices(self, legal: np.ndarray, start: int, max_interval: int) -> tuple[list[int], list[int]]:
        """:meth:`interval_choices` restricted to the intervals whose clip is legal."""
        intervals, counts = self.interval_choices(len(legal), start, max_interval)
        kept = [(i, c) for i, c in zip(intervals, counts) if self.is_legal_clip(legal, start, i)]
        return [i for i, _ in kept], [c for _, c in kept]

    def draw_clip(self, legal: np.ndarray, max_interval: int, start: int | None = None) -> tuple[int, int] | None:
        """``(start, interval)`` of a legal clip with the official probabilities: from ``start`` when a legal clip
        begins there, otherwise anywhere in the video; ``None`` when the video has no legal clip."""
        if start is not None:
            intervals, counts = self.legal_choices(legal, start, max_interval)
            if intervals:
                return start, random.choices(intervals, counts)[0]
        clips, counts = [], []
        for begin in range(len(legal) - self.clip_length + 1):
            intervals, weights = self.legal_choices(legal, begin, max_interval)
            clips += [(begin, i) for i in intervals]
            counts += weights
        return random.choices(clips, counts)[0] if clips else None

    def transform(self, video_infos: dict) -> dict[str, Any] | None:
        images = video_infos['images']
        start = video_infos.get('key_frame_id')
        if start is not None and not 0 <= start < len(images):
            raise IndexError(f'VastMATClipSample: frame {start} outside the {len(images)} frames of video '
                             f'{video_infos.get("video_name")!r}')
        clip = self.draw_clip(self.legal_frames(video_infos), self.max_interval(video_infos), start)
        if clip is None:
            return None  # no legal clip in this video (the official never samples it): the dataset draws again
        positions = self.clip_positions(*clip)
        results = self.prepare_data(video_infos, positions)
        results['key_frame_flags'] = [k == 0 for k in range(len(positions))]
        return results

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(clip_length={self.clip_length}, '
                f'max_interval_seconds={self.max_interval_seconds}, min_identities={self.min_identities}, '
                f'max_identities={self.max_identities})')


def describe_dataset(dataset: Any) -> str:
    """``Type(data_root=..., protocol=..., split=...)`` for error messages."""
    fields = ', '.join(f'{key}={getattr(dataset, key)!r}' for key in ('data_root', 'protocol', 'split')
                       if getattr(dataset, key, None) is not None)
    return f'{type(dataset).__name__}({fields})'


@DATA_SAMPLERS.register_module()
class VastMATClipSampler(Sampler):
    """MOTIP's training sampler (official ``data/naive_sampler.py`` ``NaiveSampler``, ``random_interval`` mode): an
    epoch is every legal clip of every video once, shuffled.

    For epoch ``e`` a ``random.Random(seed + e)`` walks the videos in dataset order and their frames in order; for
    every start ``b`` with ``b + clip_length <= length`` it draws the interval as the official does
    (:meth:`VastMATClipSample.official_interval`) and keeps ``b`` when that clip is legal; the kept clips are then
    shuffled by ``torch.randperm`` with a generator seeded ``seed + e`` (the official order of random draws, so with
    the same seed and frame legality the clips are the official ones). The sampler gives ``(video, start)``; the
    pipeline's :class:`VastMATClipSample` draws the start's interval again among its legal clips, with the official
    probabilities. The epoch's length is its number of legal clips (a warm-up of one epoch lasts as many
    iterations as the official one). Under several processes the clips are split as mmdet's ``TrackImgSampler``
    splits frames (padded by repeating the first ones to a multiple of the world size).

    The rule (clip length, largest interval, identity bounds) is the ``VastMATClipSample`` of the dataset's
    pipeline. Videos without any legal clip are skipped (the official skips them too) and named in the log.

    Args:
        dataset: a video dataset (``VastMATDataset(load_as='video')``) in training mode whose pipeline has a
            ``VastMATClipSample``.
        seed: the shuffling seed, identical in every process (default: a seed synchronised over the processes).
        infinite: pass after pass without end (pass ``k`` is epoch ``k``), for ``IterBasedTrainLoop``: mmengine
            restarts a finite sampler's dataloader each pass with a 2 s pause.

    Raises:
        ValueError: the dataset is in test mode, its pipeline has no ``VastMATClipSample``, or no video has a legal
            clip.
    """

    def __init__(self, dataset: Any, seed: int | None = None, infinite: bool = False) -> None:
        self.rank, self.world_size = get_dist_info()
        self.seed = sync_random_seed() if seed is None else int(seed)
        self.infinite = bool(infinite)
        self.epoch = 0
        self.dataset = dataset
        if getattr(dataset, 'test_mode', False):
            raise ValueError(f'VastMATClipSampler: {describe_dataset(dataset)} is in test mode; test dataloaders take '
                             'TrackImgSampler (each video once, in frame order)')
        transforms = getattr(getattr(dataset, 'pipeline', None), 'transforms', None) or []
        rules = [t for t in transforms if isinstance(t, VastMATClipSample)]
        if not rules:
            raise ValueError(f'VastMATClipSampler: the pipeline of {describe_dataset(dataset)} has no '
                             'VastMATClipSample (its clip rule is the sampler\'s)')
        self.rule: VastMATClipSample = rules[0]
        self.legal: list[np.ndarray] = []
        self.max_intervals: list[int] = []
        without = []
        for video in range(len(dataset)):
            info = dataset.get_data_info(video)
            legal, max_interval = self.rule.legal_frames(info), self.rule.max_interval(info)
            self.legal.append(legal)
            self.max_intervals.append(max_interval)
            if not any(self.rule.legal_choices(legal, b, max_interval)[0] for b in range(len(legal))):
                without.append(str(info.get('video_name', video)))
        if len(without) == len(self.legal):
            raise ValueError(
                f'VastMATClipSampler: no legal clip in {describe_dataset(dataset)} ({len(self.legal)} videos): a '
                f'clip of {self.rule.clip_length} frames needs {self.rule.min_identities} to '
                f'{self.rule.max_identities} evaluated identities in each frame (official MOTIP rule)')
        if without:
            print_log(f'VastMATClipSampler: {len(without)} of {len(self.legal)} videos have no legal clip of '
                      f'{self.rule.clip_length} frames and are skipped: {", ".join(without)}', 'current',
                      logging.WARNING)
        self._cache: tuple[int, list[tuple[int, int, int]]] | None = None

    def clips(self, epoch: int) -> list[tuple[int, int, int]]:
        """The epoch's clips ``(video index, start, interval)`` in their shuffled order, before splitting over the
        processes."""
        if self._cache is not None and self._cache[0] == epoch:
            return self._cache[1]
        rng = random.Random(self.seed + epoch)
        clips = []
        for video, (legal, max_interval) in enumerate(zip(self.legal, self.max_intervals)):
            for start in range(len(legal)):
                interval = self.rule.official_interval(rng, len(legal), start, max_interval)
                if interval is not None and self.rule.is_legal_clip(legal, start, interval):
                    clips.append((video, start, interval))
        if not clips:
            raise ValueError(f'VastMATClipSampler: epoch {epoch} of {describe_dataset(self.dataset)} drew no legal '
                             'clip')
        generator = torch.Generator()
        generator.manual_seed(self.seed + epoch)
        clips = [clips[k] for k in torch.randperm(len(clips), generator=generator).tolist()]
        self._cache = (epoch, clips)
        return clips

    def _share(self, epoch: int) -> list[tuple[int, int]]:
        """This process's ``(video, start)`` items of the epoch."""
        items = [(video, start) for video, start, _ in self.clips(epoch)]
        total = math.ceil(len(items) / self.world_size) * self.world_size
        items = (items * math.ceil(total / len(items)))[:total]
        return items[self.rank:total:self.world_size]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        while True:
            yield from self._share(self.epoch)
            if not self.infinite:
                return
            self.epoch += 1

    def __len__(self) -> int:
        return math.ceil(len(self.clips(self.epoch)) / self.world_size)

    def set_epoch(self, epoch: int) -> None:
        """Called by mmengine's ``DistSamplerSeedHook`` before each epoch."""
        self.epoch = epoch
