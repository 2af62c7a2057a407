"""TransTrack (Sun et al., 2020): the tracking model around :class:`TransTrackDeformableDETR`, its released training
recipe and the per-video state that links the frames.

Per frame (``_detect``) the network fuses the frame's projected features with the previous frame's, runs the
detection decoder (all ``num_queries`` object queries) and, from the second frame on, the track decoder (the previous
frame's queries relocated into this frame). The tracker (``TransTrackTracker``) receives a ``TrackingFrame`` whose
``detections`` are ALL object queries in query order (row ``i`` = query ``i``; ``x1 y1 x2 y2`` in original-frame
pixels; score ``sigmoid`` of the logit of class 0, ``animal``) and ``extra_dets['tracking']`` the track decoder's
boxes and scores, row ``i`` = the previous frame's query ``i``. On a video's first frame the previous frame is the
current one and ``tracking`` repeats the detections (the official ``deformable_detrtrack_test.py``).

Training (``loss``, the official ``deformable_detrtrack_train.py``):

1. the previous frame: ``previous_frame='shift'`` (the released recipe) simulates it by a CenterTrack-style random
   shift of the same image (:func:`random_shift`); ``previous_frame='reference'`` takes the reference frame of a real
   key / reference pair (``VastMATRefFrameSample(num_ref_imgs=1)`` in the train pipeline);
2. without gradients, the network runs on the previous frame, fused with its own previous frame (a second random
   shift: of the current image in the released recipe, of the reference frame with real pairs), giving the previous
   frame's ``hs[-1]``, boxes and backbone features;
3. with probability ``track_prob`` (official 0.5) the current frame goes through the track decoder (queries and
   reference boxes from step 2), otherwise through the detection decoder with the previous frame used only for the
   feature fusion. The neck projects the previous frame's backbone features with gradients, as the official
   ``input_proj`` does;
4. the loss is Deformable DETR's set loss on the current frame's ground truth (``bbox_head.loss``: Hungarian matching
   with focal / L1 / GIoU costs, focal, L1 and GIoU losses on every decoder layer). Track outputs are matched to the
   ground truth independently, not by identity.
"""
from __future__ import annotations

from typing import Any, Sequence

import torch
import torch.nn.functional as F
from mmdet.structures.bbox import BaseBoxes
from torch import Tensor

from vastmat.registry import MODELS
from vastmat.structures.tracking import FrameDetections

from .detr_outputs import queries_to_detections
from .tracking_by_detection import TrackingByDetection
from .transtrack_detr import TransTrackDeformableDETR

PREVIOUS_FRAME_MODES = ('shift', 'reference')


@torch.no_grad()
def random_shift(images: Tensor, img_shapes: Sequence[tuple[int, int]], max_shift: int = 100) -> tuple[Tensor, Tensor]:
    """The official ``randshift``: a simulated neighbouring frame of each image of a padded batch.

    Per image, shifts ``dx, dy`` are drawn as ``int(max_shift * U[0, 1))`` with a random sign (torch's generator, as
    the official code). The unpadded image (``img_shapes[i]`` = ``(h, w)``) is cut to the window
    ``[max(0, -d), min(P, P - d))`` on each axis (``P`` the PADDED size, as the official code: on a padded image a
    positive shift crops less), and that window is resized back to ``(h, w)`` with nearest-neighbour interpolation
    (``F.interpolate``'s default); the padding keeps its values. So the content moves by about ``-dx`` (``-dy``) pixels
    and is slightly zoomed.

    Args:
        images: ``(bs, C, P_h, P_w)`` normalised images.
        img_shapes: each image's unpadded ``(h, w)``.
        max_shift: largest shift in pixels of ``images`` (official 100, at inputs of 480-800 px short side).

    Returns:
        the shifted images, and the windows ``(bs, 4)`` ``x0, y0, x1, y1`` (pixels of the unpadded image) that were
        stretched to the whole image (:func:`shift_boxes` maps boxes with them).
    """
    bs, _, height, width = images.shape
    xshift = (max_shift * torch.rand(bs)).int()
    xshift *= (torch.randn(bs) > 0.0).int() * 2 - 1
    yshift = (max_shift * torch.rand(bs)).int()
    yshift *= (torch.randn(bs) > 0.0).int() * 2 - 1
    shifted = images.clone()
    windows = []
    for i in range(bs):
        img_h, img_w = (int(v) for v in img_shapes[i][:2])
        dx, dy = int(xshift[i]), int(yshift[i])
        y0, y1 = max(0, -dy), min(height, height - dy)
        x0, x1 = max(0, -dx), min(width, width - dx)
        patch = images[i, :, :img_h, :img_w][:, y0:y1, x0:x1]
        if patch.shape[1] == 0 or patch.shape[2] == 0:
            raise ValueError(f'random_shift: a shift of ({dx}, {dy}) px leaves nothing of a {img_w}x{img_h} image; '
                             f'max_shift={max_shift} must be smaller than the input (scale it with the input size)')
        shifted[i, :, :img_h, :img_w] = F.interpolate(patch[None], size=(img_h, img_w))[0]
        windows.append((x0, y0, x0 + patch.shape[2], y0 + patch.shape[1]))
    return shifted, torch.tensor(windows, dtype=torch.float32).reshape(-1, 4)


def shift_boxes(boxes: Tensor, window: Sequence[float], img_shape: tuple[int, int]) -> Tensor:
    """Boxes ``x1 y1 x2 y2`` (pixels) of an image, in the image that :func:`random_shift` made from it with
    ``window`` (the official ``randshift``'s target boxes, there unused by the loss)."""
    x0, y0, x1, y1 = (float(v) for v in window)
    img_h, img_w = img_shape[:2]
    scale = boxes.new_tensor([img_w / (x1 - x0), img_h / (y1 - y0)] * 2)
    return (boxes - boxes.new_tensor([x0, y0, x0, y0])) * scale


@MODELS.register_module()
class TransTrack(TrackingByDetection):
    """TransTrack: :class:`TransTrackDeformableDETR` carrying the previous frame through a video, feeding
    ``TransTrackTracker``; trains with the official recipe (module docstring).

    Args:
        detector: the network, ``dict(type='TransTrackDeformableDETR', ...)``.
        tracker: the association, ``dict(type='TransTrackTracker', track_thresh=0.4, ...)``.
        previous_frame: ``'shift'`` (the released recipe: single frames, the previous one simulated by
            :func:`random_shift`; train pipeline ``UniformRefFrameSample(num_ref_imgs=0)``) or ``'reference'`` (real
            key / reference pairs; ``VastMATRefFrameSample(num_ref_imgs=1)``).
        max_shift: the random shift's largest value in pixels of the network input (official 100).
        track_prob: probability that a training step trains the track decoder (official 0.5), else the detection
            decoder.
        post_processors: per-video post-processors (``TASK_UTILS`` configs), as :class:`TrackingByDetection`.
        data_preprocessor: default ``TrackingDataPreprocessor``.
    """

    # its association needs the track decoder's boxes: no cached-detections path
    tracks_cached_detections = False

    def __init__(self, detector: dict, tracker: dict, previous_frame: str = 'shift', max_shift: int = 100,
                 track_prob: float = 0.5, post_processors: list | None = None, data_preprocessor: dict | None = None,
                 init_cfg: dict | None = None) -> None:
        if previous_frame not in PREVIOUS_FRAME_MODES:
            raise ValueError(f'TransTrack: previous_frame must be one of {PREVIOUS_FRAME_MODES}, '
                             f'got {previous_frame!r}')
        if not 0.0 <= track_prob <= 1.0:
            raise ValueError(f'TransTrack: track_prob must be in [0, 1], got {track_prob}')
        if max_shift < 1:
            raise ValueError(f'TransTrack: max_shift must be >= 1 pixel, got {max_shift}')
        super().__init__(tracker=tracker, detector=detector, post_processors=post_processors,
                         data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        if not isinstance(self.detector, TransTrackDeformableDETR):
            raise TypeError(f'TransTrack: model.detector must be a TransTrackDeformableDETR, got '
                            f'{type(self.detector).__name__}')
        self.previous_frame, self.max_shift, self.track_prob = previous_frame, int(max_shift), float(track_prob)
        self.state: dict[str, Any] | None = None

    # ------------------------------------------------------------------------------------------------- training
    def _training_frames(self, inputs: Tensor, data_samples: list) -> tuple[Tensor, list, Tensor | None, list]:
        """The current frames and, with real pairs, the previous (reference) frames of a batch of clips."""
        if inputs is None or inputs.dim() != 5:
            raise ValueError('TransTrack.loss: inputs must be (N, T, C, H, W) video clips (PackVastMATInputs), got '
                             f'{None if inputs is None else tuple(inputs.shape)}')
        frames = inputs.size(1)
        if self.previous_frame == 'shift':
            if frames != 1:
                raise ValueError(f"TransTrack(previous_frame='shift') trains on single frames, got clips of {frames} "
                                 'frames: use UniformRefFrameSample(num_ref_imgs=0) in the train pipeline, or '
                                 "previous_frame='reference' for key / reference pairs")
            samples = [clip[0] for clip in data_samples]
            return inputs[:, 0], samples, None, samples
        if frames != 2:
            raise ValueError(f"TransTrack(previous_frame='reference') trains on key / reference pairs, got clips of "
                             f'{frames} frames: use VastMATRefFrameSample(num_ref_imgs=1) in the train pipeline')
        keys, refs = [], []
        for clip in data_samples:
            key, ref = clip.metainfo.get('key_frames_inds'), clip.metainfo.get('ref_frames_inds')
            if not key or not ref:
                raise ValueError('TransTrack: a training pair without key_frames_inds / ref_frames_inds (the frame '
                                 'sampler sets key_frame_flags, PackVastMATInputs packs them)')
            keys.append(key[0])
            refs.append(ref[0])
        rows = torch.arange(len(data_samples))
        return (inputs[rows, keys], [clip[k] for clip, k in zip(data_samples, keys)], inputs[rows, refs],
                [clip[r] for clip, r in zip(data_samples, refs)])

    def loss(self, inputs: Tensor, data_samples: list, **kwargs: Any) -> dict:
        """The official training step (module docstring) on a batch of clips; Deformable DETR's losses of the
        decoder that ran (``loss_cls``, ``loss_bbox``, ``loss_iou`` and ``d{0..4}.*`` of the earlier layers)."""
        net = self.detector
        current, samples, previous, previous_samples = self._training_frames(inputs, data_samples)
        for sample in samples:  # the DETR head works on plain tensors (mmdet's boxtype2tensor)
            if isinstance(sample.gt_instances.bboxes, BaseBoxes):
                sample.gt_instances.bboxes = sample.gt_instances.bboxes.tensor
        with torch.no_grad():
            if previous is None:  # the released recipe: both earlier frames are shifts of the current image
                shapes = [s.metainfo['img_shape'] for s in samples]
                previous = random_shift(current, shapes, self.max_shift)[0]
                before_previous = random_shift(current, shapes, self.max_shift)[0]
            else:
                before_previous = random_shift(previous, [s.metainfo['img_shape'] for s in previous_samples],
                                               self.max_shift)[0]
            previous_backbone = net.backbone(previous)
            pre = net.forward_fused(net.neck(previous_backbone), net.extract_feat(before_previous), previous_samples)
            pre_boxes = net.heads(pre['detection'])[1][-1]
            pre_queries = pre['detection']['hidden_states'][-1]
        feats = net.extract_feat(current)
        previous_feats = net.neck(previous_backbone)
        if torch.rand(()).item() < self.track_prob:
            out = net.forward_fused(feats, previous_feats, samples, track_queries=(pre_queries, pre_boxes),
                                    detect=False)['tracking']
        else:
            out = net.forward_fused(feats, previous_feats, samples)['detection']
        return net.bbox_head.loss(**out, enc_outputs_class=None, enc_outputs_coord=None, batch_data_samples=samples)

    # ------------------------------------------------------------------------------------------------- tracking
    def start_video(self) -> None:
        """A new video: the tracker restarts and the previous frame is forgotten (the first frame is its own)."""
        super().start_video()
        self.state = None

    @torch.no_grad()
    def _detect(self, image: Tensor, frame_sample: Any) -> tuple[FrameDetections, dict]:
        """Every object query of the frame, and the previous frame's queries relocated by the track decoder
        (``extra['tracking']``); the frame's projected features, ``hs[-1]`` and boxes become the state."""
        net = self.detector
        feats = net.extract_feat(image)
        state = self.state
        if state is not None and any(a.shape != b.shape for a, b in zip(feats, state['feats'])):
            raise ValueError(f"TransTrack: frame {frame_sample.metainfo.get('frame_id')} of video "
                             f"{frame_sample.metainfo.get('video_name')!r} has input size {tuple(image.shape[-2:])}, "
                             'unlike the previous frame: the test pipeline must give every frame of a video one size')
        out = net.forward_fused(feats, feats if state is None else state['feats'], [frame_sample],
                                track_queries=None if state is None else (state['queries'], state['boxes']))
        logits, boxes = (x[-1] for x in net.heads(out['detection']))
        tracking = (logits, boxes) if state is None else tuple(x[-1] for x in net.heads(out['tracking']))
        self.state = dict(feats=feats, queries=out['detection']['hidden_states'][-1], boxes=boxes)
        ori_shape = frame_sample.metainfo['ori_shape']
        return (queries_to_detections(logits[0], boxes[0], ori_shape),
                {'tracking': queries_to_detections(tracking[0][0], tracking[1][0], ori_shape)})
