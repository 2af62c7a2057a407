"""Training augmentations of FairMOT (official ``src/lib/datasets/dataset/jde.py``: the centred letterbox, the HSV
jitter, the random affine) and MOTIP (official ``data/transforms.py``: the clip colour jitter and the clip crop) that
mmdet lacks, and a wrapper that keeps VastMAT's per-instance arrays aligned through mmdet's geometric transforms.

mmdet's geometric transforms (``RandomAffine``, ``FilterAnnotations``, ``RandomCrop`` ...) drop boxes from
``gt_bboxes``, ``gt_bboxes_labels`` and ``gt_ignore_flags`` only: ``gt_instances_ids`` (and VastMAT's
``gt_categories`` / ``gt_groups``) would no longer match the boxes. :class:`AlignInstanceFields` runs such a
transform with the row numbers riding in ``gt_bboxes_labels`` and reindexes every per-instance array afterwards.
"""
from __future__ import annotations

import math
import random
from typing import Sequence

import cv2
import numpy as np
from mmcv.transforms import BaseTransform
from mmcv.transforms.utils import cache_random_params, cache_randomness
from mmdet.datasets.transforms import RandomCrop
from mmdet.structures.bbox import BaseBoxes

from vastmat.registry import TRANSFORMS

from .frame_sampling import OFFICIAL_MAX_IDENTITIES, OFFICIAL_MIN_IDENTITIES, frame_is_legal

# per-instance arrays of the loaders (LoadTrackAnnotations, LoadVastMATAnnotations) besides boxes and labels
INSTANCE_KEYS = ('gt_instances_ids', 'gt_categories', 'gt_groups')


def select_instances(results: dict, keep: np.ndarray, keys: Sequence[str] = INSTANCE_KEYS) -> dict:
    """Keep the instances ``keep`` (a boolean mask or row indices) in every per-instance array of ``results``."""
    for key in ('gt_bboxes', 'gt_bboxes_labels', 'gt_ignore_flags', *keys):
        if key in results and results[key] is not None:
            results[key] = results[key][keep]
    return results


@TRANSFORMS.register_module()
class AlignInstanceFields(BaseTransform):
    """Run a single-image transform that may drop boxes (e.g. mmdet's ``RandomAffine``, ``FilterAnnotations``) and
    drop the same instances from ``keys`` (identities, categories, groups).

    The transform sees ``gt_bboxes_labels`` replaced by the row numbers ``0..n-1``; whatever rows come back index the
    original labels and every array in ``keys``. Transforms that mix several images (Mosaic, MixUp) or read the label
    values are not supported.

    Args:
        transform: the wrapped transform's config.
        keys: per-instance arrays to keep aligned (those present in the results).
    """

    def __init__(self, transform: dict, keys: Sequence[str] = INSTANCE_KEYS) -> None:
        self.inner = TRANSFORMS.build(transform)
        self.keys = tuple(keys)

    def transform(self, results: dict) -> dict | None:
        labels = results.get('gt_bboxes_labels')
        if labels is None:
            return self.inner(results)
        labels = np.asarray(labels)
        for key in self.keys:
            if key in results and len(results[key]) != len(labels):
                raise ValueError(f'AlignInstanceFields: {key} has {len(results[key])} entries for {len(labels)} boxes '
                                 f'before {type(self.inner).__name__} (img_path: {results.get("img_path")})')
        results['gt_bboxes_labels'] = np.arange(len(labels), dtype=np.int64)
        out = self.inner(results)
        if out is None:
            return None
        rows = np.asarray(out['gt_bboxes_labels'], np.int64)
        out['gt_bboxes_labels'] = labels[rows]
        for key in self.keys:
            if key in out and out[key] is not None:
                out[key] = np.asarray(out[key])[rows]
        return out

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(transform={self.inner!r}, keys={self.keys})'


@TRANSFORMS.register_module()
class FairMOTHSVAug(BaseTransform):
    """FairMOT's colour jitter (``LoadImagesAndLabels.get_data``): in HSV, saturation and value are each multiplied
    by an independent factor drawn from ``[1 - fraction, 1 + fraction]`` (clipped to 255 when above 1); hue is
    untouched. Needs the BGR ``uint8`` image of ``LoadImageFromFile``."""

    def __init__(self, fraction: float = 0.5) -> None:
        if not 0 <= fraction < 1:
            raise ValueError(f'FairMOTHSVAug: fraction must be in [0, 1), got {fraction}')
        self.fraction = fraction

    @cache_randomness
    def _gains(self) -> tuple[float, float]:
        return ((random.random() * 2 - 1) * self.fraction + 1, (random.random() * 2 - 1) * self.fraction + 1)

    def transform(self, results: dict) -> dict:
        img = results['img']
        if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
            raise TypeError(f'FairMOTHSVAug: needs a BGR uint8 image (LoadImageFromFile without to_float32), got '
                            f'{img.dtype} {img.shape} ({results.get("img_path")})')
        hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
        for channel, gain in zip((1, 2), self._gains()):
            values = hsv[:, :, channel].astype(np.float32) * gain
            if gain > 1:
                np.clip(values, 0, 255, out=values)
            hsv[:, :, channel] = values.astype(np.uint8)
        results['img'] = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(fraction={self.fraction})'


def letterbox_geometry(height: int, width: int, out_height: int,
                       out_width: int) -> tuple[float, int, int, float, float]:
    """FairMOT's letterbox of a ``height x width`` image into ``out_height x out_width``: ``(ratio, new_width,
    new_height, dw, dh)``, the scale, the resized size (Python's ``round``, as the official) and the centred padding
    before the image (``(out - new) / 2``, a half pixel when odd; the official pads ``round(d - 0.1)`` before and
    ``round(d + 0.1)`` after)."""
    ratio = min(float(out_height) / height, float(out_width) / width)
    new_width, new_height = round(width * ratio), round(height * ratio)
    return ratio, new_width, new_height, (out_width - new_width) / 2, (out_height - new_height) / 2


@TRANSFORMS.register_module()
class FairMOTLetterbox(BaseTransform):
    """FairMOT's letterbox (official ``jde.py`` ``letterbox``, training and tracking): the image resized with
    ``cv2.INTER_AREA`` by ``ratio = min(height / h, width / w)`` to ``round(w * ratio) x round(h * ratio)`` and padded
    CENTRED with ``pad_val`` to ``width x height`` (``round(dw - 0.1)`` columns on the left, ``round(dw + 0.1)`` on
    the right, likewise rows). Boxes become ``box * ratio + (dw, dh)`` (the official label conversion), unclipped.

    Written here because mmdet's ``FixShapeResize`` / ``Pad`` pad on the right and bottom. Sets ``img_shape``,
    ``scale_factor`` ``(ratio, ratio)``, ``keep_ratio`` and ``letterbox_pad`` ``(dw, dh)``; pack ``letterbox_pad``
    (``PackVastMATInputs(meta_keys=('letterbox_pad',))``) so that :class:`~vastmat.models.dense_heads.FairMOTHead`
    maps test boxes back to the frame about the centres, as the official tracker does.

    Args:
        width, height: the network input (official 1088 x 608).
        pad_val: the border value of every channel (official 127.5, which OpenCV rounds to 128 for uint8 images).
    """

    def __init__(self, width: int = 1088, height: int = 608, pad_val: float = 127.5) -> None:
        if width <= 0 or height <= 0:
            raise ValueError(f'FairMOTLetterbox: width and height must be positive, got {width} x {height}')
        self.width, self.height, self.pad_val = width, height, pad_val

    def transform(self, results: dict) -> dict:
        img = results['img']
        h, w = img.shape[:2]
        ratio, new_w, new_h, dw, dh = letterbox_geometry(h, w, self.height, self.width)
        img = cv2.resize(img, (new_w, new_h), interpolation=cv2.INTER_AREA)
        results['img'] = cv2.copyMakeBorder(img, round(dh - 0.1), round(dh + 0.1), round(dw - 0.1),
                                            round(dw + 0.1), cv2.BORDER_CONSTANT, value=(self.pad_val, ) * 3)
        results['img_shape'] = results['img'].shape[:2]
        results['scale_factor'] = (ratio, ratio)
        results['keep_ratio'] = True
        results['letterbox_pad'] = (dw, dh)
        matrix = np.array([[ratio, 0, dw], [0, ratio, dh], [0, 0, 1]], np.float32)
        if results.get('homography_matrix') is not None:
            results['homography_matrix'] = matrix @ results['homography_matrix']
        boxes = results.get('gt_bboxes')
        if boxes is not None:
            if isinstance(boxes, BaseBoxes):
                boxes.rescale_((ratio, ratio))
                boxes.translate_((dw, dh))
            else:
                results['gt_bboxes'] = (np.asarray(boxes, np.float64) * ratio
                                        + np.array([dw, dh, dw, dh])).astype(np.float32)
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(width={self.width}, height={self.height}, pad_val={self.pad_val})'


@TRANSFORMS.register_module()
class FairMOTRandomAffine(BaseTransform):
    """FairMOT's ``random_affine``: rotation and scale about the image centre, translation, shear, in that order
    (``M = S @ T @ R``), on an image of the same size (border 127.5); boxes are the bounding boxes of their warped
    corners shrunk by ``sqrt(max(|sin a|, |cos a|))`` about their centres, not clipped; a box is dropped unless
    width and height exceed ``min_size``, its area is above ``min_area_ratio`` of the original, its aspect ratio
    below ``max_aspect_ratio``, and it overlaps the image. Every per-instance array (``INSTANCE_KEYS`` too) follows.

    Written by hand because mmdet's ``RandomAffine`` rotates and scales about the top-left corner (no centring), has
    no angle reduction and no area / aspect filters. As in the official code, the x translation is drawn as a
    fraction of the image *height* and the y translation of its *width*.

    Args:
        max_rotate_degree: rotation drawn from ``[-d, d]`` (5).
        max_translate_ratio: translation fraction (0.1).
        scaling_ratio_range: scale drawn from this range ((0.5, 1.2)).
        max_shear_degree: shear in x and in y drawn from ``[-d, d]`` (2).
        border_val: fill of the uncovered area (127.5, as the letterbox).
        min_size, min_area_ratio, max_aspect_ratio: the box filters (4 px, 0.1, 10).
    """

    def __init__(self, max_rotate_degree: float = 5.0, max_translate_ratio: float = 0.1,
                 scaling_ratio_range: tuple[float, float] = (0.5, 1.2), max_shear_degree: float = 2.0,
                 border_val: tuple[float, float, float] = (127.5, 127.5, 127.5), min_size: float = 4.0,
                 min_area_ratio: float = 0.1, max_aspect_ratio: float = 10.0) -> None:
        if scaling_ratio_range[0] > scaling_ratio_range[1] or scaling_ratio_range[0] <= 0:
            raise ValueError(f'FairMOTRandomAffine: bad scaling_ratio_range {scaling_ratio_range}')
        self.max_rotate_degree, self.max_translate_ratio = max_rotate_degree, max_translate_ratio
        self.scaling_ratio_range, self.max_shear_degree = tuple(scaling_ratio_range), max_shear_degree
        self.border_val = tuple(border_val)
        self.min_size, self.min_area_ratio, self.max_aspect_ratio = min_size, min_area_ratio, max_aspect_ratio

    @cache_randomness
    def _random_params(self) -> tuple[float, ...]:
        """angle, scale, x and y translation fractions, x and y shear angles (the official draw order)."""
        angle = random.uniform(-self.max_rotate_degree, self.max_rotate_degree)
        scale = random.uniform(*self.scaling_ratio_range)
        tx = (random.random() * 2 - 1) * self.max_translate_ratio
        ty = (random.random() * 2 - 1) * self.max_translate_ratio
        shx = random.uniform(-self.max_shear_degree, self.max_shear_degree)
        shy = random.uniform(-self.max_shear_degree, self.max_shear_degree)
        return angle, scale, tx, ty, shx, shy

    @staticmethod
    def warp_matrix(height: int, width: int, angle: float, scale: float, tx: float, ty: float, shx: float,
                    shy: float) -> np.ndarray:
        """The official 3x3 ``M = S @ T @ R`` for an image of ``height x width``."""
        rotation = np.eye(3)
        rotation[:2] = cv2.getRotationMatrix2D(angle=angle, center=(width / 2, height / 2), scale=scale)
        translation = np.eye(3)
        translation[0, 2] = tx * height  # official: x by the height, y by the width
        translation[1, 2] = ty * width
        shear = np.eye(3)
        shear[0, 1] = math.tan(shx * math.pi / 180)
        shear[1, 0] = math.tan(shy * math.pi / 180)
        return shear @ translation @ rotation

    def transform(self, results: dict) -> dict:
        img = results['img']
        height, width = img.shape[:2]
        angle, *params = self._random_params()
        matrix = self.warp_matrix(height, width, angle, *params)
        results['img'] = cv2.warpPerspective(img, matrix, dsize=(width, height), flags=cv2.INTER_LINEAR,
                                             borderValue=self.border_val)
        results['img_shape'] = results['img'].shape[:2]
        boxes = results.get('gt_bboxes')
        if boxes is None or len(boxes) == 0:
            return results
        box_type = type(boxes) if hasattr(boxes, 'tensor') else None
        points = (boxes.tensor.numpy() if box_type else np.asarray(boxes)).astype(np.float64).reshape(-1, 4)
        n = len(points)
        area0 = (points[:, 2] - points[:, 0]) * (points[:, 3] - points[:, 1])
        corners = np.ones((n * 4, 3))
        corners[:, :2] = points[:, [0, 1, 2, 3, 0, 3, 2, 1]].reshape(n * 4, 2)
        corners = (corners @ matrix.T)[:, :2].reshape(n, 8)
        xs, ys = corners[:, [0, 2, 4, 6]], corners[:, [1, 3, 5, 7]]
        radians = angle * math.pi / 180
        reduction = max(abs(math.sin(radians)), abs(math.cos(radians))) ** 0.5
        cx, cy = (xs.min(1) + xs.max(1)) / 2, (ys.min(1) + ys.max(1)) / 2
        w, h = (xs.max(1) - xs.min(1)) * reduction, (ys.max(1) - ys.min(1)) * reduction
        warped = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
        area = w * h
        aspect = np.maximum(w / (h + 1e-16), h / (w + 1e-16))
        keep = ((w > self.min_size) & (h > self.min_size) & (area / (area0 + 1e-16) > self.min_area_ratio)
                & (aspect < self.max_aspect_ratio) & (warped[:, 0] < width) & (warped[:, 2] > 0)
                & (warped[:, 1] < height) & (warped[:, 3] > 0))
        warped = warped.astype(np.float32)
        results['gt_bboxes'] = box_type(warped) if box_type else warped
        return select_instances(results, keep)

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(max_rotate_degree={self.max_rotate_degree}, max_translate_ratio='
                f'{self.max_translate_ratio}, scaling_ratio_range={self.scaling_ratio_range}, max_shear_degree='
                f'{self.max_shear_degree}, border_val={self.border_val})')


@TRANSFORMS.register_module()
class ClipColorJitter(BaseTransform):
    """torchvision's ``ColorJitter`` (brightness, contrast, saturation, hue in a random order) on the BGR ``uint8``
    image of ``LoadImageFromFile``, for clips: MOTIP's ``MultiColorJitter`` draws the factors and the order once per
    clip and applies them to every frame. Inside ``TransformBroadcaster(share_random_params=True)`` the draw
    (``_params``, cached randomness) is shared by the clip's frames. torchvision's own transform is reused (its
    ``make_params`` draws, its ``transform`` applies); only the BGR numpy <-> RGB tensor conversion is written here.

    Args:
        brightness, contrast, saturation, hue: torchvision's ranges (MOTIP: 0.4, 0.4, 0.4, 0.2).
    """

    def __init__(self, brightness: float = 0.4, contrast: float = 0.4, saturation: float = 0.4,
                 hue: float = 0.2) -> None:
        from torchvision.transforms import v2
        self.jitter = v2.ColorJitter(brightness=brightness, contrast=contrast, saturation=saturation, hue=hue)
        self.ranges = dict(brightness=brightness, contrast=contrast, saturation=saturation, hue=hue)

    @cache_randomness
    def _params(self) -> dict:
        return self.jitter.make_params([])

    def transform(self, results: dict) -> dict:
        import torch
        img = results['img']
        if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
            raise TypeError(f'ClipColorJitter: needs a BGR uint8 image (LoadImageFromFile without to_float32), got '
                            f'{img.dtype} {img.shape} ({results.get("img_path")})')
        rgb = torch.from_numpy(np.ascontiguousarray(img[:, :, ::-1])).permute(2, 0, 1)
        out = self.jitter.transform(rgb, self._params())
        results['img'] = np.ascontiguousarray(out.permute(1, 2, 0).numpy()[:, :, ::-1])
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}({", ".join(f"{k}={v}" for k, v in self.ranges.items())})'


@TRANSFORMS.register_module()
class ClipRandomCrop(RandomCrop):
    """MOTIP's clip crop (official ``data/transforms.py`` ``MultiRandomCrop``): one random window for every frame of
    a clip; boxes are translated and clipped to it and a box left without area (``x2 <= x1`` or ``y2 <= y1``) is
    dropped with its identity; when a frame would then not be legal (:func:`frame_is_legal`: 1 to 300 evaluated
    identities, the official ``is_legal``) the whole clip stays uncropped: no other window is tried and the clip is
    not dropped.

    The window is mmdet's ``RandomCrop``'s (``absolute_range``: a height and a width each drawn in ``crop_size``,
    at most the image's, then a uniform offset: the official draws) and mmdet's crop cuts the image and the boxes
    (``bbox_clip_border=True``). mmdet's ``RandomCrop`` inside ``TransformBroadcaster`` cannot reject a crop for the
    whole clip (it sees one frame; ``allow_negative_crop=False`` would skip the clip, ``True`` keeps empty frames),
    so this transform takes the clip (every key a per-frame list, as ``VastMATClipSample`` and
    ``TransformBroadcaster`` leave it) and stands between broadcasters, not inside one.

    Args:
        crop_size: mmdet's (MOTIP: ``(384, 600)``, official ``AUG_RANDOM_CROP_MIN`` / ``AUG_RANDOM_CROP_MAX``).
        crop_type: mmdet's (MOTIP: ``'absolute_range'``).
        min_identities: the fewest evaluated identities of a cropped frame (official 1).
        max_identities: the most evaluated identities of a cropped frame (official 300).
    """

    # per-instance arrays kept with their boxes (LoadTrackAnnotations' and LoadVastMATAnnotations')
    instance_keys = ('gt_bboxes_labels', 'gt_ignore_flags', *INSTANCE_KEYS)

    def __init__(self, crop_size: tuple[int, int], crop_type: str = 'absolute_range',
                 min_identities: int = OFFICIAL_MIN_IDENTITIES, max_identities: int = OFFICIAL_MAX_IDENTITIES) -> None:
        super().__init__(crop_size, crop_type=crop_type, allow_negative_crop=True, recompute_bbox=False,
                         bbox_clip_border=True)
        if not 0 <= min_identities <= max_identities:
            raise ValueError(f'ClipRandomCrop: need 0 <= min_identities <= max_identities, got {min_identities} and '
                             f'{max_identities}')
        self.min_identities, self.max_identities = int(min_identities), int(max_identities)

    def _crop_frame(self, frame: dict) -> dict:
        """One frame cropped by mmdet's ``RandomCrop`` (the window cached for the clip), its boxes without area
        dropped with every per-instance array."""
        frame = dict(frame)
        boxes = frame.get('gt_bboxes')
        if boxes is None:
            return RandomCrop.transform(self, frame)
        for key in ('gt_masks', 'gt_seg_map'):
            if frame.get(key) is not None:
                raise ValueError(f'ClipRandomCrop: {key} is not supported ({frame.get("img_path")})')
        originals = {key: np.asarray(frame.pop(key)) for key in self.instance_keys if frame.get(key) is not None}
        for key, value in originals.items():
            if len(value) != len(boxes):
                raise ValueError(f'ClipRandomCrop: {key} has {len(value)} entries for {len(boxes)} boxes '
                                 f'({frame.get("img_path")})')
        frame['gt_bboxes'] = boxes.clone() if isinstance(boxes, BaseBoxes) else np.array(boxes, dtype=np.float32)
        frame['gt_bboxes_labels'] = np.arange(len(boxes), dtype=np.int64)  # row numbers through mmdet's crop
        out = RandomCrop.transform(self, frame)
        rows = out.pop('gt_bboxes_labels')
        cropped = out['gt_bboxes']
        corners = cropped.numpy() if isinstance(cropped, BaseBoxes) else np.asarray(cropped)
        with_area = (corners[:, 2] > corners[:, 0]) & (corners[:, 3] > corners[:, 1])
        out['gt_bboxes'] = cropped[with_area]
        for key, value in originals.items():
            out[key] = value[rows[with_area]]
        return out

    def transform(self, results: dict) -> dict:
        images = results.get('img')
        if not isinstance(images, list):
            raise TypeError('ClipRandomCrop: needs a whole clip (per-frame lists: after, not inside, '
                            f'TransformBroadcaster), got img of type {type(images).__name__}')
        num = len(images)
        for key, value in results.items():
            if not isinstance(value, (list, tuple)) or len(value) != num:
                raise ValueError(f'ClipRandomCrop: {key} is not a list of the clip\'s {num} frames')
        frames = [{key: value[t] for key, value in results.items()} for t in range(num)]
        with cache_random_params(self):  # one window for the clip
            cropped = [self._crop_frame(frame) for frame in frames]
        for frame in cropped:
            if 'gt_instances_ids' not in frame:
                raise KeyError(f'ClipRandomCrop: no gt_instances_ids ({frame.get("img_path")}): load the clip with '
                               'LoadTrackAnnotations')
            if not frame_is_legal(frame['gt_instances_ids'], frame.get('gt_ignore_flags'), self.min_identities,
                                  self.max_identities):
                return results  # the official keeps the uncropped clip
        results.update({key: [frame[key] for frame in cropped] for key in cropped[0]})
        return results

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(crop_size={self.crop_size}, crop_type={self.crop_type!r}, '
                f'min_identities={self.min_identities}, max_identities={self.max_identities})')
