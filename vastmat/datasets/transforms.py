"""Pipeline transforms of VastMAT: the instance fields of gt.txt (category, animal group), cached detections
(MMTracking's ``LoadDetections`` idea) per frame or per whole video, and the packing of both into track data
samples."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
from mmcv.transforms import BaseTransform, to_tensor
from mmdet.datasets.transforms import LoadTrackAnnotations, PackTrackInputs
from mmdet.structures import DetDataSample, TrackDataSample
from mmengine.structures import InstanceData

from vastmat.registry import TRANSFORMS
from vastmat.structures.tracking import FrameDetections

from .detections import VideoDetections, cached_frames

# what VastMATDataset puts into each frame's data info beyond mmdet's keys, packed into the metainfo of each frame
# (``letterbox_pad``: FairMOTLetterbox's padding, which the FairMOT head needs to map boxes back; packed when present)
VASTMAT_META_KEYS = ('video_name', 'frame_rate', 'source_frame', 'source_length', 'frame_stride', 'video_dir',
                     'letterbox_pad')


@TRANSFORMS.register_module()
class LoadVastMATAnnotations(LoadTrackAnnotations):
    """mmdet's ``LoadTrackAnnotations`` plus ``gt_categories`` (1..337, -1 unknown) and ``gt_groups`` (index into
    ``GROUPS``, -1 unknown). Use in test pipelines: the geometric training augmentations of mmdet do not carry
    extra per-instance keys."""

    def transform(self, results: dict) -> dict:
        results = super().transform(results)
        instances = results['instances']
        results['gt_categories'] = np.array([i.get('category_id', -1) for i in instances], dtype=np.int64)
        results['gt_groups'] = np.array([i.get('group', -1) for i in instances], dtype=np.int64)
        return results


@TRANSFORMS.register_module()
class LoadTrackingDetections(BaseTransform):
    """Cached detections of the frame from ``<det_root>/<video>.txt`` (or ``<det_root>/<video>/det/det.txt``),
    keyed by the frame's number in the video's own files (``source_frame``), with every extra det.txt column as
    per-detection features.

    Adds ``detections`` and ``extra_dets`` (name -> detections), each a :class:`~vastmat.structures.FrameDetections`
    (x1 y1 x2 y2, scores, features or None) and, when no image was loaded, ``ori_shape`` from seqinfo.ini's size. A
    file whose frames do not fit the video (past its seqLength, another stride) is rejected with file and line
    (:meth:`VideoDetections.check`). One video per root is held in memory (the frames of a video come in order).

    Args:
        det_root: folder of the main detections.
        extra_det_roots: named extra detection sets, e.g. ``dict(nms95='dets_nms0.95/')`` (TrackTrack).
    """

    def __init__(self, det_root: str, extra_det_roots: dict[str, str] | None = None) -> None:
        self.det_root, self.extra_det_roots = det_root, dict(extra_det_roots or {})
        self._cache: dict[str, tuple[str, VideoDetections]] = {}  # root -> (video, its detections)

    def _video(self, root: str, results: dict) -> VideoDetections:
        name = results['video_name']
        cached = self._cache.get(root)
        if cached is None or cached[0] != name:
            tracked = np.arange(1, results['source_length'] + 1, results['frame_stride'])
            self._cache[root] = cached = (name, VideoDetections.for_video(root, name, results['source_length'],
                                                                          tracked))
        return cached[1]

    def transform(self, results: dict) -> dict:
        missing = [k for k in ('video_name', 'source_frame', 'source_length', 'frame_stride') if k not in results]
        if missing:
            raise KeyError(f'LoadTrackingDetections: the data info has no {", ".join(missing)} (VastMATDataset '
                           'provides them)')
        frame = int(results['source_frame'])
        results['detections'] = self._video(self.det_root, results).get(frame)
        results['extra_dets'] = {name: self._video(root, results).get(frame)
                                 for name, root in self.extra_det_roots.items()}
        if 'ori_shape' not in results and results.get('height') and results.get('width'):
            results['ori_shape'] = (int(results['height']), int(results['width']))
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(det_root={self.det_root!r}, extra_det_roots={self.extra_det_roots})'


# the video-level keys of a video item that PackVideoTrackingInputs puts into the metainfo
VIDEO_META_KEYS = ('video_id', 'video_name', 'video_dir', 'frame_rate', 'source_length', 'frame_stride')


@TRANSFORMS.register_module()
class LoadVideoDetections(BaseTransform):
    """A whole video's tracker inputs from its cached detections, each file read once (the video-level test path:
    ``tools/test.py --det-root``, one item per video, ``DefaultSampler(shuffle=False)``).

    Takes mmdet's video-level test item (a dict of per-frame lists) and adds ``tracking_frames``: one
    :class:`~vastmat.structures.TrackingFrame` per frame (frame ids 1, 2, ...; detections keyed by ``source_frame``,
    the frame's number in the video's own files; extra det.txt columns as features; ``image_size`` from seqinfo.ini)
    and ``source_frames``. The checks are :class:`LoadTrackingDetections`'s.

    Args:
        det_root: folder of the main detections (``<video>.txt`` or ``<video>/det/det.txt``).
        extra_det_roots: named extra detection sets, e.g. ``dict(nms95='dets_nms0.95/')`` (TrackTrack).
    """

    def __init__(self, det_root: str, extra_det_roots: dict[str, str] | None = None) -> None:
        self.det_root, self.extra_det_roots = det_root, dict(extra_det_roots or {})

    def transform(self, results: dict) -> dict:
        missing = [k for k in ('video_name', 'source_frame', 'source_length', 'frame_stride') if k not in results]
        if missing or not isinstance(results.get('source_frame'), list):
            raise KeyError(f'LoadVideoDetections: needs a video-level test item of VastMATDataset (per-frame lists '
                           f'of video_name, source_frame, source_length, frame_stride; missing: {missing}); one '
                           'frame per item takes LoadTrackingDetections')
        name, length = results['video_name'][0], int(results['source_length'][0])
        source_frames = np.asarray(results['source_frame'], np.int64)
        detections = VideoDetections.for_video(self.det_root, name, length, source_frames)
        extra = {set_name: VideoDetections.for_video(root, name, length, source_frames)
                 for set_name, root in self.extra_det_roots.items()}
        height, width = (results.get('height') or [None])[0], (results.get('width') or [None])[0]
        size = (int(height), int(width)) if height and width else None
        results['source_frames'] = source_frames
        results['tracking_frames'] = list(cached_frames(detections, name, source_frames.tolist(),
                                                        results.get('frame_rate', [None])[0], size, extra))
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(det_root={self.det_root!r}, extra_det_roots={self.extra_det_roots})'


@TRANSFORMS.register_module()
class PackVideoTrackingInputs(BaseTransform):
    """Packs a video item of :class:`LoadVideoDetections` as one :class:`VastMATTrackDataSample` without frames:
    ``tracking_frames`` (the tracker inputs) and ``source_frames`` as data, the video's keys (``VIDEO_META_KEYS``
    and ``video_length``, ``ori_video_length``) as metainfo. No ground truth is packed (the tracking metric reads
    each video's gt.txt) and no per-frame data sample is built."""

    def transform(self, results: dict) -> dict:
        if 'tracking_frames' not in results:
            raise KeyError('PackVideoTrackingInputs: no tracking_frames (put LoadVideoDetections before it)')
        meta = {key: results[key][0] for key in VIDEO_META_KEYS if results.get(key)}
        meta.update(video_length=len(results['tracking_frames']), ori_video_length=len(results['tracking_frames']))
        sample = VastMATTrackDataSample(metainfo=meta)
        sample.tracking_frames = results['tracking_frames']
        sample.source_frames = results['source_frames']
        return dict(data_samples=sample)


def detections_to_instances(detections: FrameDetections) -> InstanceData:
    """Cached detections as mmdet's ``pred_instances`` (labels 0: the single class ``animal``)."""
    instances = InstanceData(bboxes=torch.from_numpy(np.asarray(detections.bboxes, np.float64).reshape(-1, 4)),
                             scores=torch.from_numpy(np.asarray(detections.scores, np.float64).reshape(-1)),
                             labels=torch.zeros(len(detections), dtype=torch.long))
    if detections.features is not None:
        instances.features = torch.from_numpy(np.asarray(detections.features, np.float64))
    return instances


class VastMATTrackDataSample(TrackDataSample):
    """mmdet's ``TrackDataSample`` without the cost of its ``video_data_samples`` setter: mmdet 3.3's setter has a
    stray f-string statement that formats the first frame (every tensor of it) on each assignment, which happens
    at packing and at every device cast; on cached detections that was a third of ``tools/test.py``'s time."""

    @property
    def video_data_samples(self) -> list[DetDataSample]:
        return self._video_data_samples

    @video_data_samples.setter
    def video_data_samples(self, value: list[DetDataSample] | DetDataSample) -> None:
        value = [value] if isinstance(value, DetDataSample) else value
        if not isinstance(value, list) or not value or not isinstance(value[0], DetDataSample):
            raise TypeError(f'video_data_samples must be a non-empty list of DetDataSample, got {type(value)}')
        self.set_field(value, '_video_data_samples', dtype=list)

    @video_data_samples.deleter
    def video_data_samples(self) -> None:
        del self._video_data_samples


@TRANSFORMS.register_module()
class PackVastMATInputs(PackTrackInputs):
    """mmdet's ``PackTrackInputs`` for VastMAT, into a :class:`VastMATTrackDataSample`: the frames' images as
    ``inputs`` ``(T, C, H, W)``; per frame a ``DetDataSample`` with ``gt_instances`` / ``ignored_instances`` (the
    ``mapping_table`` keys, split by ``gt_ignore_flags``; VastMAT adds ``gt_categories`` / ``gt_groups`` as
    ``categories`` / ``groups``), cached detections as ``pred_instances`` (bboxes, scores, labels, features) and
    ``extra_det_instances`` (name -> InstanceData), and the metainfo (mmdet's keys plus VastMAT's video name and
    rate, source frame, video folder); ``key_frames_inds`` / ``ref_frames_inds`` from ``key_frame_flags``.

    The packing is written here rather than taken from ``PackTrackInputs.transform``: mmdet 3.3 assigns the frames
    through ``TrackDataSample.video_data_samples``'s setter, whose stray f-string formats the first frame (every
    tensor and the metainfo's ``instances``) on each call; the same fields, without that cost."""

    mapping_table = dict(PackTrackInputs.mapping_table, gt_categories='categories', gt_groups='groups')

    def __init__(self, meta_keys: Any = None, **kwargs: Any) -> None:
        keys = tuple(meta_keys) if isinstance(meta_keys, (tuple, list)) else ((meta_keys, ) if meta_keys else ())
        super().__init__(meta_keys=tuple(dict.fromkeys(VASTMAT_META_KEYS + keys)), **kwargs)

    def transform(self, results: dict) -> dict:
        if 'img_id' not in results:
            raise KeyError("PackVastMATInputs: the results have no 'img_id' (one per frame)")
        num_frames = len(results['img_id'])
        inputs = {}
        if 'img' in results:
            inputs = to_tensor(np.stack(results['img'], axis=0).transpose(0, 3, 1, 2))
        ignore_flags = results.get('gt_ignore_flags')
        frames = []
        for i in range(num_frames):
            valid, ignored = InstanceData(), InstanceData()
            if ignore_flags is not None:
                keep, drop = np.flatnonzero(ignore_flags[i] == 0), np.flatnonzero(ignore_flags[i] == 1)
            for key, name in self.mapping_table.items():
                if key not in results:
                    continue
                value = results[key][i]
                pack = (lambda v: v) if key == 'gt_masks' else to_tensor
                if ignore_flags is None:
                    valid[name] = pack(value)
                else:
                    valid[name], ignored[name] = pack(value[keep]), pack(value[drop])
            frame = DetDataSample(metainfo={key: results[key][i] for key in self.meta_keys if key in results})
            frame.gt_instances, frame.ignored_instances = valid, ignored
            if 'detections' in results:
                frame.pred_instances = detections_to_instances(results['detections'][i])
                frame.extra_det_instances = {name: detections_to_instances(dets)
                                             for name, dets in results['extra_dets'][i].items()}
            frames.append(frame)
        sample = VastMATTrackDataSample()
        sample.video_data_samples = frames
        if 'key_frame_flags' in results:
            flags = np.asarray(results['key_frame_flags'])
            sample.set_metainfo(dict(key_frames_inds=np.flatnonzero(flags).tolist(),
                                     ref_frames_inds=np.flatnonzero(~flags).tolist()))
        return dict(inputs=inputs, data_samples=sample)
