"""``VastMATDataset``: a VastMAT root (or a MOTChallenge split folder) read directly, for tracking and detection."""
from __future__ import annotations

import copy
import os.path as osp
from typing import Any, Sequence as SequenceType

import numpy as np
from mmdet.datasets import BaseVideoDataset
from mmengine.logging import print_log

from vastmat.registry import DATASETS

from .categories import GROUPS, Categories
from .sequences import load_sequence, select_videos
from .serialization import SerializeWithoutCollectMixin

LOAD_MODES = ('video', 'image')
INSTANCE_ID_MODES = ('video', 'global')


@DATASETS.register_module()
class VastMATDataset(SerializeWithoutCollectMixin, BaseVideoDataset):
    """VastMAT videos with every animal mapped to the single class ``animal`` (paper section 3.5).

    Args:
        data_root: a VastMAT root (``videos/``, ``meta/``, ``splits/``) or a MOTChallenge split folder
            (``<seq>/gt/gt.txt``, ``<seq>/seqinfo.ini``), e.g. AnimalTrack's ``train``.
        protocol: ``protocol1`` (seen) / ``protocol2`` (unseen) (aliases 1, 2, p1, p2, seen, unseen).
        split: ``train``, ``test`` or ``dev`` of that protocol, or ``A-B``: A's videos less B's
            (:func:`~vastmat.datasets.sequences.held_out`); ``None`` takes every video of the root.
        videos: an explicit list of video names instead of a split.
        stride: keep every ``stride``-th frame (3 turns 30 FPS into 10 FPS); frames are renumbered.
        load_as: ``'video'``: one item per video (tracking, mmdet's video datasets); ``'image'``: one item per
            frame (detector training, e.g. YOLOX with ``MultiImageMixDataset``).
        img_dir: frame folder inside each video when seqinfo.ini has no ``imDir`` (default ``img1``).
        instance_ids: ``'video'``: each instance's ``instance_id`` is its gt.txt id (unique within a video);
            ``'global'``: the identities ``(video, gt.txt id)`` of the loaded videos are numbered 0..K-1 (videos in
            order, ids ascending) and ``metainfo['num_identities']`` is K: the identity classes of a joint
            detection-and-embedding model (FairMOT) trained on this split.
        with_gt: False: gt.txt is not read and frames carry no ``instances`` (a test whose metric reads each
            video's gt.txt itself: tracking on cached detections); training needs it.
        min_visibility: boxes whose gt.txt visibility is known and below it are left out of the frame's instances
            altogether, as if not annotated (the official TransTrack / CenterTrack MOT annotations keep boxes of
            visibility >= 0.25: ``track_tools/convert_mot_to_coco.py``); unknown visibility (-1) is kept. ``None``
            (default) keeps every box. A dropped box is neither a target nor an ignored region.

    Each frame carries, besides mmdet's keys, ``video_dir`` (the video's folder), ``source_frame`` (its number in
    the folder's own gt.txt / det.txt, before ``stride``), ``source_length`` (the folder's seqLength) and
    ``frame_stride``; cached detections (:class:`LoadTrackingDetections`) and the tracking metric key by them.

    Each instance carries ``bbox`` (x1, y1, x2, y2), ``bbox_label`` 0, ``instance_id`` (the gt.txt id),
    ``ignore_flag`` (1 for valid=0 rows), ``category_id`` (1..337, -1 unknown), ``group`` (index into
    :data:`vastmat.datasets.categories.GROUPS`, -1 unknown) and ``visibility``.
    """

    METAINFO = dict(classes=('animal', ), palette=[(220, 120, 60)])

    def __init__(self, *args: Any, protocol: str | int | None = None, split: str | None = None,
                 videos: SequenceType[str] | None = None, stride: int = 1, load_as: str = 'video',
                 img_dir: str = 'img1', instance_ids: str = 'video', with_gt: bool = True,
                 min_visibility: float | None = None, **kwargs: Any) -> None:
        if load_as not in LOAD_MODES:
            raise ValueError(f'VastMATDataset: load_as must be one of {LOAD_MODES}, got {load_as!r}')
        if instance_ids not in INSTANCE_ID_MODES:
            raise ValueError(f'VastMATDataset: instance_ids must be one of {INSTANCE_ID_MODES}, got {instance_ids!r}')
        if videos is not None and split is not None:
            raise ValueError('VastMATDataset: give either videos or split, not both')
        if stride < 1:
            raise ValueError(f'VastMATDataset: stride must be >= 1, got {stride}')
        self.protocol, self.split, self.videos = protocol, split, list(videos) if videos is not None else None
        self.stride, self.load_as, self.img_dir, self.instance_ids = stride, load_as, img_dir, instance_ids
        if not with_gt and not kwargs.get('test_mode', False):
            raise ValueError('VastMATDataset: with_gt=False is for testing (test_mode=True); training reads gt.txt')
        if min_visibility is not None and not 0.0 <= float(min_visibility) <= 1.0:
            raise ValueError(f'VastMATDataset: min_visibility must be in [0, 1] or None, got {min_visibility}')
        self.with_gt = with_gt
        self.min_visibility = None if min_visibility is None else float(min_visibility)
        kwargs.setdefault('ann_file', '')
        self._last_video: tuple[int, dict] | None = None
        super().__init__(*args, **kwargs)

    def load_data_list(self) -> list[dict]:
        root = self.data_root
        names = self.videos if self.videos is not None else select_videos(root, self.protocol, self.split)
        categories = Categories.for_root(root)
        group_index = {g: i for i, g in enumerate(GROUPS)}
        videos, img_id, num_identities = [], 0, 0
        for video_id, name in enumerate(names):
            sequence = load_sequence(root, name, stride=self.stride, with_gt=self.with_gt)
            if self.test_mode and sequence.length == 0:  # it would have no test item: dropped without a word
                raise ValueError(f'{osp.join(sequence.directory, "seqinfo.ini")}: seqLength is 0, the video has no '
                                 'frames to test; remove it from the split or the folder')
            if sequence.gt is None and not self.test_mode:
                raise FileNotFoundError(f'{sequence.directory}/gt/gt.txt: missing (needed for training)')
            info = dict(sequence.info)
            info.setdefault('imDir', self.img_dir)
            sequence.info = info
            gt = sequence.gt
            order = np.argsort(gt.frames, kind='stable') if gt is not None else np.zeros(0, np.int64)
            if gt is not None and self.instance_ids == 'global':
                ids, identity = np.unique(gt.ids, return_inverse=True)
                identity, num_identities = identity + num_identities, num_identities + len(ids)
            else:
                identity = gt.ids if gt is not None else None
            frame_starts = (np.searchsorted(gt.frames[order], np.arange(1, sequence.length + 2))
                            if gt is not None else np.zeros(sequence.length + 1, np.int64))
            images = []
            for frame_index in range(sequence.length):
                rows = order[frame_starts[frame_index]:frame_starts[frame_index + 1]]
                if self.min_visibility is not None and gt is not None:  # known, too low: not annotated (-1 kept)
                    visibility = gt.visibility[rows]
                    rows = rows[(visibility < 0) | (visibility >= self.min_visibility)]
                instances = []
                for r in rows:
                    left, top, width, height = gt.boxes[r].tolist()
                    category = int(gt.categories[r])
                    group = categories.group_of(category) if category in categories else None
                    instances.append(dict(
                        bbox=[left, top, left + width, top + height], bbox_label=0,
                        instance_id=int(identity[r]), ignore_flag=int(gt.valid[r] == 0), category_id=category,
                        group=group_index[group] if group else -1, visibility=float(gt.visibility[r])))
                images.append(dict(
                    img_id=img_id, img_path=sequence.image_path(frame_index + 1), frame_id=frame_index,
                    video_id=video_id, video_name=name, video_length=sequence.length,
                    frame_rate=info.get('frameRate'), video_dir=sequence.directory,
                    source_frame=sequence.source_frame(frame_index + 1), source_length=sequence.source_length,
                    frame_stride=sequence.stride,
                    height=info.get('imHeight'), width=info.get('imWidth'), instances=instances))
                img_id += 1
            videos.append(dict(video_id=video_id, video_name=name, video_length=sequence.length, images=images))
        if self.instance_ids == 'global':
            self._metainfo['num_identities'] = num_identities
            print_log(f'VastMATDataset: {num_identities} identities in {len(names)} videos (instance ids '
                      f'0..{num_identities - 1})', 'current')
        if self.load_as == 'image':
            return [image for video in videos for image in video['images']]
        return videos

    def filter_data(self) -> list[dict]:
        """Training only: with ``filter_cfg=dict(filter_empty_gt=True, min_size=S)`` drop frames without an
        evaluated instance or smaller than ``S``."""
        if self.test_mode or not self.filter_cfg:
            return self.data_list
        filter_empty = self.filter_cfg.get('filter_empty_gt', False)
        min_size = self.filter_cfg.get('min_size', 0)

        def keep(image: dict) -> bool:
            if filter_empty and not any(not inst['ignore_flag'] for inst in image['instances']):
                return False
            return min(image['width'] or 0, image['height'] or 0) >= min_size

        if self.load_as == 'image':
            kept = [image for image in self.data_list if keep(image)]
            before, after = len(self.data_list), len(kept)
        else:
            # a video's video_length becomes its number of kept frames (mmdet's frame samplers index the list);
            # frame_id keeps each frame's place in the video, and videos without a kept frame are left out
            kept = []
            for video in self.data_list:
                images = [image for image in video['images'] if keep(image)]
                if images:
                    kept.append(dict(video, images=images, video_length=len(images)))
            before = sum(len(v['images']) for v in self.data_list)
            after = sum(len(v['images']) for v in kept)
        print_log(f'VastMATDataset: frames before / after filtering: {before} / {after}', 'current')
        if before and not after:
            raise ValueError(f'VastMATDataset: filter_cfg={self.filter_cfg} leaves no frame of the {before} in '
                             f'{self.data_root} (protocol {self.protocol}, split {self.split})')
        return kept

    # Image mode behaves as an image dataset (mmengine's BaseDataset), video mode as mmdet's video datasets.
    def prepare_data(self, idx: Any) -> Any:
        if self.load_as == 'image':
            return self.pipeline(self.get_data_info(idx))
        if self.test_mode and isinstance(idx, tuple):
            return self.pipeline(self._test_frame_info(*idx))
        return super().prepare_data(idx)

    def _test_frame_info(self, video_idx: int, frame_idx: int) -> dict:
        """mmdet's test-mode data info of one frame (``TrackImgSampler``: every key a one-item list,
        ``ori_video_length`` the video's), from the last video read: mmdet unpickles the whole video again for each
        of its frames, which makes a video's frames cost quadratic time in its length."""
        if self._last_video is None or self._last_video[0] != video_idx:
            self._last_video = (video_idx, self.get_data_info(video_idx))
        video = self._last_video[1]
        frame = dict(copy.deepcopy(video['images'][frame_idx]), video_id=video['video_id'])
        info = {key: [value] for key, value in frame.items()}
        info.update(ori_video_length=[video['video_length']], video_length=[1])
        return info

    def get_cat_ids(self, index: Any) -> list[int]:
        if self.load_as == 'image':
            return [inst['bbox_label'] for inst in self.get_data_info(index)['instances']]
        return super().get_cat_ids(index)

    @property
    def num_all_imgs(self) -> int:
        return len(self) if self.load_as == 'image' else super().num_all_imgs

    def get_len_per_video(self, idx: int) -> int:
        if self.load_as == 'image':
            raise TypeError('VastMATDataset(load_as="image") has no videos; use load_as="video"')
        return super().get_len_per_video(idx)
