"""Key / reference frame sampling on VastMAT videos for models trained on frame pairs (QDTrack's quasi-dense
matching): mmdet's ``UniformRefFrameSample`` with the range in seconds and frames located by their number."""
from __future__ import annotations

import random
from typing import Any

from mmdet.datasets.transforms import UniformRefFrameSample

from vastmat.registry import TRANSFORMS


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
        rate = video_infos['images'][0].get('frame_rate') if video_infos['images'] else None
        if not rate:
            raise ValueError(f"VastMATRefFrameSample: video {video_infos.get('video_name')!r} has no frame rate "
                             '(frameRate in its seqinfo.ini), needed to convert frame_range_seconds to frames')
        return max(1, round(self.frame_range_seconds * float(rate)))

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
        images = video_infos['images']
        if not images:
            raise ValueError(f"VastMATRefFrameSample: video {video_infos.get('video_name')!r} has no frames")
        key = video_infos.get('key_frame_id')
        if key is None:
            key = random.randrange(len(images))
        if not 0 <= key < len(images):
            raise IndexError(f"VastMATRefFrameSample: key frame {key} outside the {len(images)} frames of video "
                             f"{video_infos.get('video_name')!r}")
        positions, flags = self.sample_positions([image['frame_id'] for image in images], key,
                                                 self.range_in_frames(video_infos))
        results = self.prepare_data(video_infos, positions)
        results['key_frame_flags'] = flags
        return results

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(num_ref_imgs={self.num_ref_imgs}, '
                f'frame_range_seconds={self.frame_range_seconds}, filter_key_img={self.filter_key_img}, '
                f'direction={self.direction!r})')
