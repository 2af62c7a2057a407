"""Identity crops for appearance (ReID) models, in the form mmdet's ReID pipeline expects (``ReIDDataset``,
``PackReIDInputs``, ``BaseReID``).

* :class:`VastMATReIDDataset`: crops cut from VastMAT ground truth (valid rows, optional minimum size and
  visibility, every k-th box of a track, at most N per identity), identities numbered 0..K-1 over the split (video
  by video, then by gt id); mmdet's triplet sampling (``triplet_sampler=dict(num_ids=P, ins_per_id=K)``) for training.
* :class:`VastMATDetectionCrops`: one item per row of cached detections (``<det_root>/<video>.txt``), to compute the
  appearance features of a detector's boxes (``tools/test.py REID_CONFIG --det-root DIR --dump-feats OUT``).

Frames are not pre-cut: each item names its frame and box, :class:`LoadCachedFrame` reads the frame (once for all
crops of it that come in a row) and :class:`CropReIDInstance` cuts the box, before the config's ``Resize``.
"""
from __future__ import annotations

import os.path as osp
from typing import Any, Sequence as SequenceType

import numpy as np
from mmcv.transforms import BaseTransform, LoadImageFromFile
from mmdet.datasets import ReIDDataset
from mmengine.dataset import BaseDataset
from mmengine.logging import print_log

from vastmat.registry import DATASETS, TRANSFORMS
from vastmat.structures.bbox import ltwh_to_xyxy

from .detections import detection_file
from .formats import read_detections
from .sequences import load_sequence, select_videos
from .serialization import SerializeWithoutCollectMixin

ANCHORS = ('crops', 'identities')


def crop_box(image: np.ndarray, box: SequenceType[float]) -> np.ndarray:
    """The pixels of ``box`` (x1 y1 x2 y2, original-frame pixels) in ``image`` (H, W, C), as a new array.

    As TrackTrack's FastReID feature extraction (``emb_computer.py``): the box is rounded to whole pixels
    (``np.round``) and clipped to the image. A box that is empty after clipping (outside the frame, or thinner than
    half a pixel) is widened to one pixel inside the image, so that every box gets a crop (the official code would
    fail on it).
    """
    height, width = image.shape[:2]
    x1, y1, x2, y2 = np.round(np.asarray(box, np.float64)).astype(np.int64).tolist()
    x1, x2 = min(max(x1, 0), width), min(max(x2, 0), width)
    y1, y2 = min(max(y1, 0), height), min(max(y2, 0), height)
    if x2 <= x1:
        x1 = min(x1, width - 1)
        x2 = x1 + 1
    if y2 <= y1:
        y1 = min(y1, height - 1)
        y2 = y1 + 1
    return np.array(image[y1:y2, x1:x2])


@TRANSFORMS.register_module()
class LoadCachedFrame(LoadImageFromFile):
    """mmcv's ``LoadImageFromFile`` that keeps the last frame it decoded: the crops of one frame come one after
    another (detection crops are ordered by frame), so each frame is read once instead of once per box.

    The kept frame is handed out read-only (an in-place change by a later transform fails instead of altering the
    next crop); :class:`CropReIDInstance` copies the box's pixels.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._last: tuple[str, dict] | None = None

    def transform(self, results: dict) -> dict | None:
        path = results['img_path']
        if self._last is None or self._last[0] != path:
            loaded = super().transform(dict(img_path=path))
            if loaded is None:  # ignore_empty
                return None
            loaded['img'].flags.writeable = False
            self._last = (path, loaded)
        loaded = self._last[1]
        results.update(img=loaded['img'], img_shape=loaded['img_shape'], ori_shape=loaded['ori_shape'])
        return results


@TRANSFORMS.register_module()
class CropReIDInstance(BaseTransform):
    """Cut ``results['crop_bbox']`` (x1 y1 x2 y2 in frame pixels) out of the frame (:func:`crop_box`); the crop
    becomes the sample's image (``img``, ``img_shape`` and ``ori_shape`` are its size), as the images of mmdet's
    ``ReIDDataset`` are crops already. Put it after the loading and before ``Resize``."""

    def __init__(self, box_key: str = 'crop_bbox') -> None:
        self.box_key = box_key

    def transform(self, results: dict) -> dict:
        if self.box_key not in results:
            raise KeyError(f'CropReIDInstance: the data info has no {self.box_key!r} (VastMATReIDDataset and '
                           'VastMATDetectionCrops provide it)')
        crop = crop_box(results['img'], results[self.box_key])
        results['img'] = crop
        results['img_shape'] = results['ori_shape'] = crop.shape[:2]
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(box_key={self.box_key!r})'


def _subsample(rows: np.ndarray, frame_interval: int, max_per_id: int | None) -> np.ndarray:
    """Every ``frame_interval``-th row of a track (rows in frame order), then at most ``max_per_id`` of them, evenly
    spaced over the track (first and last kept)."""
    rows = rows[::frame_interval]
    if max_per_id is not None and len(rows) > max_per_id:
        rows = rows[np.unique(np.round(np.linspace(0, len(rows) - 1, max_per_id)).astype(np.int64))]
    return rows


@DATASETS.register_module()
class VastMATReIDDataset(SerializeWithoutCollectMixin, ReIDDataset):
    """Identity crops cut from the ground truth of a VastMAT split (or a MOTChallenge split folder), for mmdet's
    ReID models.

    Each item is one box: ``img_path`` (its frame), ``crop_bbox`` (x1 y1 x2 y2), ``gt_label`` (the identity,
    0..K-1), ``video_name``, ``frame`` (number in the video's gt.txt) and ``instance_id`` (the gt.txt id). Identities
    are the (video, gt id) pairs that keep at least ``min_per_id`` boxes, numbered in split order, then by id.

    Args:
        data_root: a VastMAT root or a MOTChallenge split folder.
        protocol, split: the videos (as :class:`VastMATDataset`); ``split=None`` takes every video of the root.
        videos: an explicit list of video names instead of a split.
        frame_interval: keep every k-th box of each track (after the filters below).
        max_per_id: at most this many boxes per identity, evenly spaced over its track (None: all).
        min_per_id: identities with fewer boxes are left out.
        min_size: boxes whose width or height (pixels) is below this are left out.
        min_visibility: boxes less visible are left out (unknown visibility, -1, is kept); None keeps all.
        valid_only: leave out the ignored rows (valid 0).
        triplet_sampler: mmdet's P x K sampling for training, ``dict(num_ids=P, ins_per_id=K)``: an item is then P
            identities with K crops each (the item's identity and P - 1 others), packed as one sample.
        anchors: with ``triplet_sampler``, what one item of an epoch is: ``'crops'`` (mmdet: each crop anchors one
            P x K batch, so an epoch is as many batches as crops) or ``'identities'`` (each identity anchors one,
            so an epoch draws every identity once as the anchor).
        num_classes: the classifier size of the model (``model.head.num_classes``), checked against K.
    """

    def __init__(self, *args: Any, protocol: str | int | None = None, split: str | None = None,
                 videos: SequenceType[str] | None = None, frame_interval: int = 1, max_per_id: int | None = None,
                 min_per_id: int = 1, min_size: float = 0.0, min_visibility: float | None = None,
                 valid_only: bool = True, triplet_sampler: dict | None = None, anchors: str = 'crops',
                 num_classes: int | None = None, **kwargs: Any) -> None:
        if videos is not None and split is not None:
            raise ValueError('VastMATReIDDataset: give either videos or split, not both')
        if frame_interval < 1:
            raise ValueError(f'VastMATReIDDataset: frame_interval must be >= 1, got {frame_interval}')
        if max_per_id is not None and max_per_id < 1:
            raise ValueError(f'VastMATReIDDataset: max_per_id must be >= 1 or None, got {max_per_id}')
        if anchors not in ANCHORS:
            raise ValueError(f'VastMATReIDDataset: anchors must be one of {ANCHORS}, got {anchors!r}')
        if anchors == 'identities' and triplet_sampler is None:
            raise ValueError("VastMATReIDDataset: anchors='identities' needs a triplet_sampler")
        self.protocol, self.split = protocol, split
        self.videos = list(videos) if videos is not None else None
        self.frame_interval, self.max_per_id, self.min_per_id = frame_interval, max_per_id, min_per_id
        self.min_size, self.min_visibility, self.valid_only = min_size, min_visibility, valid_only
        self.anchors, self.num_classes = anchors, num_classes
        self.identities: list[tuple[str, int]] = []
        kwargs.setdefault('ann_file', '')
        super().__init__(triplet_sampler, *args, **kwargs)

    def _describe(self) -> str:
        where = f'videos {self.videos}' if self.videos is not None else (
            f'{self.protocol}/{self.split}' if self.split is not None else 'all videos')
        return f'{self.data_root} ({where})'

    def load_data_list(self) -> list[dict]:
        names = self.videos if self.videos is not None else select_videos(self.data_root, self.protocol, self.split)
        data_list: list[dict] = []
        self.identities = []
        for name in names:
            sequence = load_sequence(self.data_root, name)
            gt = sequence.gt
            if gt is None:
                raise FileNotFoundError(f'{sequence.directory}/gt/gt.txt: missing (ReID crops are cut from the '
                                        'ground truth)')
            keep = np.minimum(gt.boxes[:, 2], gt.boxes[:, 3]) >= self.min_size
            if self.valid_only:
                keep &= gt.valid == 1
            if self.min_visibility is not None:
                keep &= (gt.visibility < 0) | (gt.visibility >= self.min_visibility)
            rows = np.flatnonzero(keep)
            rows = rows[np.lexsort((gt.frames[rows], gt.ids[rows]))]  # by id, then frame
            starts = np.flatnonzero(np.r_[True, gt.ids[rows][1:] != gt.ids[rows][:-1]]) if len(rows) else []
            xyxy = ltwh_to_xyxy(gt.boxes)
            for start, end in zip(starts, [*starts[1:], len(rows)]):
                track = _subsample(rows[start:end], self.frame_interval, self.max_per_id)
                if len(track) < self.min_per_id:
                    continue
                label = len(self.identities)
                self.identities.append((name, int(gt.ids[track[0]])))
                for r in track.tolist():
                    frame = int(gt.frames[r])
                    data_list.append(dict(img_path=sequence.image_path(frame), crop_bbox=xyxy[r].tolist(),
                                          gt_label=np.array(label, dtype=np.int64), video_name=name, frame=frame,
                                          instance_id=int(gt.ids[r])))
        num_ids = len(self.identities)
        if not num_ids:
            raise ValueError(f'VastMATReIDDataset: no identity crops in {self._describe()} with valid_only='
                             f'{self.valid_only}, min_size={self.min_size}, min_visibility={self.min_visibility}, '
                             f'min_per_id={self.min_per_id}')
        if self.num_classes is not None and num_ids > self.num_classes:
            raise ValueError(f'VastMATReIDDataset: {self._describe()} has {num_ids} identities but num_classes is '
                             f'{self.num_classes}: set model.head.num_classes (and the dataset\'s num_classes) to at '
                             f'least {num_ids}')
        if self.triplet_sampler is not None and self.triplet_sampler.get('num_ids', 8) > num_ids:
            raise ValueError(f'VastMATReIDDataset: triplet_sampler.num_ids={self.triplet_sampler["num_ids"]} but '
                             f'{self._describe()} has only {num_ids} identities')
        self._parse_ann_info(data_list)
        print_log(f'VastMATReIDDataset: {len(data_list)} crops of {num_ids} identities from {len(names)} videos of '
                  f'{self._describe()}', 'current')
        return data_list

    @property
    def num_ids(self) -> int:
        """K, the number of identities (labels 0..K-1)."""
        if not self._fully_initialized:
            self.full_init()
        return len(self.identities)

    def __len__(self) -> int:
        if self.anchors == 'identities':
            return self.num_ids
        return super().__len__()

    def prepare_data(self, idx: int) -> Any:
        if self.anchors == 'identities':
            return self.pipeline(self.triplet_sampling(self.pids[idx], **self.triplet_sampler))
        return super().prepare_data(idx)


@DATASETS.register_module()
class VastMATDetectionCrops(SerializeWithoutCollectMixin, BaseDataset):
    """One item per row of the cached detections ``<det_root>/<video>.txt`` (or ``<video>/det/det.txt``) of the
    videos of a split: ``img_path`` (the frame of the row, by its number in the video's own files), ``crop_bbox``
    (x1 y1 x2 y2), ``video_name``, ``det_row`` (0-based index of the row among the file's rows), ``frame`` and
    ``gt_label`` -1 (no identity). Items come video by video, frame by frame.

    The metainfo lists ``videos``, ``det_files`` (video -> file) and ``num_rows`` (video -> rows), so that a
    consumer (:class:`~vastmat.evaluation.metrics.DumpReIDFeatures`) writes every video, those without rows too.
    """

    def __init__(self, *args: Any, det_root: str, protocol: str | int | None = None, split: str | None = None,
                 videos: SequenceType[str] | None = None, **kwargs: Any) -> None:
        if videos is not None and split is not None:
            raise ValueError('VastMATDetectionCrops: give either videos or split, not both')
        self.det_root, self.protocol, self.split = det_root, protocol, split
        self.videos = list(videos) if videos is not None else None
        kwargs.setdefault('ann_file', '')
        kwargs.setdefault('test_mode', True)
        # read once, in one process: nothing to gain from mmengine's serialisation, which also fails on a split
        # whose detection files are all empty (a detector that found nothing above its threshold)
        kwargs.setdefault('serialize_data', False)
        super().__init__(*args, **kwargs)

    def load_data_list(self) -> list[dict]:
        names = self.videos if self.videos is not None else select_videos(self.data_root, self.protocol, self.split)
        data_list: list[dict] = []
        det_files, num_rows = {}, {}
        for name in names:
            sequence = load_sequence(self.data_root, name, with_gt=False)
            path = detection_file(self.det_root, name)
            dets = read_detections(path, seq_length=sequence.source_length)
            xyxy = ltwh_to_xyxy(dets.boxes)
            det_files[name], num_rows[name] = osp.abspath(path), len(dets)
            for row in np.argsort(dets.frames, kind='stable').tolist():
                frame = int(dets.frames[row])
                data_list.append(dict(img_path=sequence.image_path(frame), crop_bbox=xyxy[row].tolist(),
                                      video_name=name, det_row=row, frame=frame,
                                      gt_label=np.array(-1, dtype=np.int64)))
        self._metainfo.update(videos=list(names), det_files=det_files, num_rows=num_rows)
        return data_list
