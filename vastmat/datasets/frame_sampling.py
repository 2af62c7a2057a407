"""Frame sampling on VastMAT videos for models that train on several frames: key / reference pairs (QDTrack's
quasi-dense matching; mmdet's ``UniformRefFrameSample`` with the range in seconds and frames located by their number)
and clips of evenly spaced frames (MOTIP's in-context ID prediction)."""
from __future__ import annotations

import random
from typing import Any

from mmdet.datasets.transforms import UniformRefFrameSample

from vastmat.registry import TRANSFORMS


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


@TRANSFORMS.register_module()
class VastMATClipSample(UniformRefFrameSample):
    """A clip of ``clip_length`` frames evenly spaced by a random interval, starting at the sampler's frame (MOTIP's
    ``random_interval`` sampling, official ``data/naive_sampler.py``).

    The official sampler starts a clip at every frame ``b`` with ``b + clip_length <= video length``, draws the
    interval as ``min(randint(1, max_interval), floor((length - b - 1) / (clip_length - 1)))`` and takes frames
    ``b, b + i, ..., b + (clip_length - 1) i``. Here every frame the sampler gives (mmdet's ``TrackImgSampler``: each
    frame of each training video once an epoch) starts a clip; one too close to the end starts it at ``length -
    clip_length`` instead (the official skips it: the last frames of a video are sampled slightly more often). The
    largest interval is in seconds, converted with each video's frame rate (official 4 frames at DanceTrack's 20 FPS
    = 0.2 s; 2 frames at VastMAT's 10 FPS). Frames are taken by position in the video's frame list, so the training
    split must keep every frame (``filter_empty_gt=False``, as the MOTIP configs set: a frame without animals is a
    valid clip frame). A video shorter than ``clip_length`` gives all its frames (the official skips such videos;
    the model then trains on a shorter clip).

    Args:
        clip_length: frames per clip (official ``SAMPLE_LENGTHS``; must not exceed the ID decoder's
            ``rel_pe_length``).
        max_interval_seconds: the largest time between two consecutive clip frames (official ``SAMPLE_INTERVALS`` 4
            at 20 FPS).
        collect_video_keys: video keys copied to every sampled frame (mmdet's argument).
    """

    def __init__(self, clip_length: int = 30, max_interval_seconds: float = 4 / 20,
                 collect_video_keys: list[str] = ['video_id', 'video_length']) -> None:  # noqa: B006 (mmdet's)
        if clip_length < 1:
            raise ValueError(f'VastMATClipSample: clip_length must be >= 1, got {clip_length}')
        if max_interval_seconds <= 0:
            raise ValueError(f'VastMATClipSample: max_interval_seconds must be > 0, got {max_interval_seconds}')
        super().__init__(num_ref_imgs=max(clip_length - 1, 0), frame_range=0, filter_key_img=False,
                         collect_video_keys=collect_video_keys)
        self.clip_length = int(clip_length)
        self.max_interval_seconds = float(max_interval_seconds)

    def max_interval(self, video_infos: dict) -> int:
        """The largest interval in frames of this video (at least 1)."""
        return frames_for_seconds(video_infos, self.max_interval_seconds, 'VastMATClipSample')

    def clip_positions(self, num_frames: int, start: int, max_interval: int) -> list[int]:
        """Positions of the clip's frames in a video of ``num_frames`` frames, for a clip asked to start at
        ``start``."""
        length = self.clip_length
        if num_frames <= length:
            return list(range(num_frames))
        begin = min(start, num_frames - length)
        fitting = (num_frames - begin - 1) // (length - 1) if length > 1 else 1
        interval = min(random.randint(1, max_interval), fitting)
        return [begin + interval * k for k in range(length)]

    def transform(self, video_infos: dict) -> dict[str, Any]:
        start = start_position(video_infos, 'VastMATClipSample')
        positions = self.clip_positions(len(video_infos['images']), start, self.max_interval(video_infos))
        results = self.prepare_data(video_infos, positions)
        results['key_frame_flags'] = [k == 0 for k in range(len(positions))]
        return results

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(clip_length={self.clip_length}, '
                f'max_interval_seconds={self.max_interval_seconds})')
