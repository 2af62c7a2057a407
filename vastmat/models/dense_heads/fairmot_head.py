"""FairMOT's heads (official ``src/lib/models/networks/pose_dla_dcn.py`` heads, ``trains/mot.py`` ``MotLoss``,
``datasets/dataset/jde.py`` target generation, ``models/decode.py`` ``mot_decode``), as an mmdet dense head: with
mmdet's ``SingleStageDetector(backbone=DLASeg, neck=None, bbox_head=FairMOTHead)`` it is the FairMOT network.

mmdet's CenterNet helpers are used where they compute the official math (``gen_gaussian_target`` =
``draw_umich_gaussian``, ``get_local_maximum`` = ``_nms``, ``get_topk_from_heatmap`` = ``_topk`` for one class,
``transpose_and_gather_feat`` = ``_tranpose_and_gather_feat``, ``GaussianFocalLoss`` = ``FocalLoss``, ``L1Loss`` with
a mask weight and ``avg_factor`` = ``RegL1Loss``); :func:`gaussian_radius` is written out because mmdet's differs.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from mmdet.models.dense_heads.base_dense_head import BaseDenseHead
from mmdet.models.utils import (gen_gaussian_target, get_local_maximum, get_topk_from_heatmap, multi_apply,
                                transpose_and_gather_feat)
from mmengine.config import ConfigDict
from mmengine.structures import InstanceData
from torch import Tensor, nn

from vastmat.models.backbones.dla import data_parallel_chunk_sizes
from vastmat.registry import MODELS

NUM_IDENTITIES_KEY = 'model.detector.bbox_head.num_identities'
MULTI_LOSS_MODES = ('uncertainty', 'fix')


def gaussian_radius(det_size: Sequence[float], min_overlap: float = 0.7) -> float:
    """Gaussian radius of a ``(height, width)`` box, the formula of the official CenterNet / FairMOT
    ``utils/image.py``.

    Written by hand: mmdet's ``gaussian_radius`` (CornerNet-Lite's corrected roots, ``(b - sqrt(d)) / (2a)``) gives
    radii several times smaller; FairMOT's heatmaps use CenterNet's form ``(b + sqrt(d)) / 2`` for all three cases,
    so its ``r3`` (the binding one for usual boxes) is ``2a = 2.8`` times the exact root.
    """
    height, width = det_size
    b1 = height + width
    c1 = width * height * (1 - min_overlap) / (1 + min_overlap)
    r1 = (b1 + math.sqrt(b1 ** 2 - 4 * c1)) / 2
    b2 = 2 * (height + width)
    c2 = (1 - min_overlap) * width * height
    r2 = (b2 + math.sqrt(b2 ** 2 - 16 * c2)) / 2
    a3 = 4 * min_overlap
    b3 = -2 * min_overlap * (height + width)
    c3 = (min_overlap - 1) * width * height
    r3 = (b3 + math.sqrt(b3 ** 2 - 4 * a3 * c3)) / 2
    return min(r1, r2, r3)


def uncertainty_loss(det_loss: Tensor, id_loss: Tensor, s_det: Tensor, s_id: Tensor) -> tuple[Tensor, Tensor]:
    """FairMOT's uncertainty weighting (``MotLoss``, ``multi_loss='uncertainty'``):
    ``0.5 * (exp(-s_det) * L_det + exp(-s_id) * L_id + s_det + s_id)``, returned as its detection and identity
    halves (their sum is the official loss)."""
    return 0.5 * (torch.exp(-s_det) * det_loss + s_det), 0.5 * (torch.exp(-s_id) * id_loss + s_id)


def letterbox_to_frame(bboxes: Tensor, img_shape: Sequence[int], ori_shape: Sequence[int]) -> Tensor:
    """Boxes (x1 y1 x2 y2) in the pixels of a centred letterbox of size ``img_shape`` back in the frame of size
    ``ori_shape``, as the official tracker maps them (``JDETracker.update``: ``c`` the frame's centre, ``s =
    max(inp_w / inp_h * h, w)``; ``ctdet_post_process``): about the centres, scaled by ``s / inp_w`` (= 1 / ratio).
    The official letterbox pads ``round(dw -/+ 0.1)`` around ``round(w * ratio)``; this centre mapping ignores that
    rounding (under a pixel of the frame), as the official does."""
    inp_h, inp_w = (float(v) for v in tuple(img_shape)[:2])
    height, width = (float(v) for v in tuple(ori_shape)[:2])
    scale = max(inp_w / inp_h * height, width) / inp_w
    centre_in = bboxes.new_tensor([inp_w / 2, inp_h / 2, inp_w / 2, inp_h / 2])
    centre_frame = bboxes.new_tensor([width / 2, height / 2, width / 2, height / 2])
    return (bboxes - centre_in) * scale + centre_frame


@MODELS.register_module()
class FairMOTHead(BaseDenseHead):
    """The four FairMOT heads on the stride-4 map (each 3x3 conv ``head_conv`` + ReLU + 1x1 conv): ``hm`` centre
    heatmap (``num_classes`` channels, bias -2.19), ``wh`` box size (4 channels: left, top, right, bottom distances
    from the centre when ``ltrb``, else width and height), ``reg`` sub-pixel centre offset (2), ``id`` appearance
    embedding (``reid_dim``); the identity classifier ``Linear(reid_dim, num_identities)`` and the uncertainty
    weights ``s_det``, ``s_id`` of the training loss.

    Training targets come from ``gt_instances``: ``bboxes`` (x1 y1 x2 y2, input pixels), ``labels`` and
    ``instances_ids`` (identity classes ``0..num_identities-1``, -1 for a box without identity: no ID loss), as
    ``VastMATDataset(instance_ids='global')`` numbers them. Ignored instances (valid=0) get no target, as the official
    label files leave them out.

    Args:
        in_channels: channels of the backbone's map (DLA-34: 64).
        num_classes: heatmap channels (1: ``animal``).
        head_conv: hidden channels of each head (256 for DLA-34; <= 0: a single conv).
        reid_dim: embedding size (128).
        num_identities: identity classes of the training set (``nID``); None only for a model that is not
            trained (no classifier).
        ltrb: 4-channel left/top/right/bottom sizes (official default) or 2-channel width/height.
        final_kernel: kernel of each head's last conv (1).
        max_objs: boxes per image given targets (official ``K`` = 500; later boxes are left out).
        min_overlap: IoU of the Gaussian radius (0.7).
        loss_hm / loss_wh / loss_offset / loss_id: mmdet losses, with the official weights 1, 0.1, 1 and 1.
        multi_loss: ``'uncertainty'`` (official) or ``'fix'`` (``L_det + 0.1 * L_id``).
        s_det_init / s_id_init: initial uncertainty weights (-1.85, -1.05).
        loss_chunks: the loss is the mean of the losses of this many chunks of the batch, each normalised on its
            own (its positives, its boxes, its identities), as the official ``nn.DataParallel`` training computes it
            over that many GPUs (``MotLoss`` per GPU, then ``loss.mean()``; chunk sizes as the official ``opts.py``:
            :func:`~vastmat.models.backbones.dla.data_parallel_chunk_sizes`). 1: one mean over the batch.
        test_cfg: ``topk`` (500), ``local_maximum_kernel`` (3), ``conf_thres`` (0.4: boxes scoring above it are kept).
    """

    def __init__(self, in_channels: int = 64, num_classes: int = 1, head_conv: int = 256, reid_dim: int = 128,
                 num_identities: int | None = None, ltrb: bool = True, final_kernel: int = 1, max_objs: int = 500,
                 min_overlap: float = 0.7,
                 loss_hm: dict = dict(type='GaussianFocalLoss', alpha=2.0, gamma=4.0, loss_weight=1.0),
                 loss_wh: dict = dict(type='L1Loss', loss_weight=0.1),
                 loss_offset: dict = dict(type='L1Loss', loss_weight=1.0),
                 loss_id: dict = dict(type='CrossEntropyLoss', ignore_index=-1, avg_non_ignore=True,
                                      loss_weight=1.0),
                 multi_loss: str = 'uncertainty', s_det_init: float = -1.85, s_id_init: float = -1.05,
                 loss_chunks: int = 1, train_cfg: dict | None = None, test_cfg: dict | None = None,
                 init_cfg: dict | list | None = None) -> None:
        super().__init__(init_cfg)
        if loss_chunks < 1:
            raise ValueError(f'FairMOTHead: loss_chunks must be >= 1, got {loss_chunks}')
        self.loss_chunks = loss_chunks
        if multi_loss not in MULTI_LOSS_MODES:
            raise ValueError(f'FairMOTHead: multi_loss must be one of {MULTI_LOSS_MODES}, got {multi_loss!r}')
        if num_identities is not None and num_identities < 3:
            # emb_scale = sqrt(2) * log(nID - 1) is 0 or undefined below 3
            raise ValueError(f'{NUM_IDENTITIES_KEY} must be >= 3 (the embedding scale is sqrt(2) * log(n - 1)), '
                             f'got {num_identities}')
        self.num_classes, self.reid_dim, self.num_identities = num_classes, reid_dim, num_identities
        self.ltrb, self.max_objs, self.min_overlap, self.multi_loss = ltrb, max_objs, min_overlap, multi_loss
        self.hm = self._head(in_channels, head_conv, num_classes, final_kernel)
        self.wh = self._head(in_channels, head_conv, 4 if ltrb else 2, final_kernel)
        self.reg = self._head(in_channels, head_conv, 2, final_kernel)
        self.id = self._head(in_channels, head_conv, reid_dim, final_kernel)
        # official init: heatmap prior bias -2.19 on the last conv; every conv bias of the other heads zero
        final = self.hm[-1] if isinstance(self.hm, nn.Sequential) else self.hm
        final.bias.data.fill_(-2.19)
        for head in (self.wh, self.reg, self.id):
            for m in head.modules():
                if isinstance(m, nn.Conv2d) and m.bias is not None:
                    nn.init.constant_(m.bias, 0)
        if num_identities is not None:
            self.classifier = nn.Linear(reid_dim, num_identities)  # PyTorch's default init, as official ('ce')
            self.emb_scale = math.sqrt(2) * math.log(num_identities - 1)
        self.s_det = nn.Parameter(s_det_init * torch.ones(1))
        self.s_id = nn.Parameter(s_id_init * torch.ones(1))
        self.loss_hm = MODELS.build(loss_hm)
        self.loss_wh = MODELS.build(loss_wh)
        self.loss_offset = MODELS.build(loss_offset)
        self.loss_id = MODELS.build(loss_id)
        self.train_cfg = train_cfg
        self.test_cfg = ConfigDict({**dict(topk=500, local_maximum_kernel=3, conf_thres=0.4), **(test_cfg or {})})

    @staticmethod
    def _head(in_channels: int, head_conv: int, out_channels: int, final_kernel: int) -> nn.Module:
        if head_conv > 0:
            return nn.Sequential(
                nn.Conv2d(in_channels, head_conv, kernel_size=3, padding=1, bias=True), nn.ReLU(inplace=True),
                nn.Conv2d(head_conv, out_channels, kernel_size=final_kernel, stride=1, padding=final_kernel // 2,
                          bias=True))
        return nn.Conv2d(in_channels, out_channels, kernel_size=final_kernel, stride=1, padding=final_kernel // 2,
                         bias=True)

    def forward(self, x: Sequence[Tensor]) -> tuple[list[Tensor], list[Tensor], list[Tensor], list[Tensor]]:
        """Raw outputs (no sigmoid) per level: heatmap, sizes, offsets, embeddings."""
        return multi_apply(self.forward_single, x)

    def forward_single(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return self.hm(x), self.wh(x), self.reg(x), self.id(x)

    # ------------------------------------------------------------------------------------------------ targets
    def get_targets(self, batch_gt_instances: list[InstanceData], feat_shape: tuple[int, int],
                    input_shape: tuple[int, int]) -> dict[str, Tensor]:
        """CenterNet targets of a batch, as the official ``JointDataset.__getitem__`` makes them.

        Boxes (input pixels) are scaled to the ``feat_shape`` map (``out / input`` per axis). For each of the first
        ``max_objs`` boxes with positive width and height: the centre ``ct`` clipped into the map, ``ct_int`` its
        integer part; a Gaussian of radius ``int(gaussian_radius((ceil(h), ceil(w))))`` drawn at ``ct_int``; ``wh``
        the distances from ``ct`` to the unclipped box's sides (ltrb) or its width and height; ``reg = ct -
        ct_int``; ``ind = ct_int_y * W + ct_int_x``; ``ids`` the identity.

        Returns ``hm (B, C, H, W)``, and per box slot ``ind (B, M)``, ``reg_mask (B, M)``, ``wh (B, M, 4|2)``,
        ``reg (B, M, 2)``, ``ids (B, M)`` (M: most boxes in an image, at most ``max_objs``).
        """
        out_h, out_w = feat_shape
        in_h, in_w = input_shape
        num = len(batch_gt_instances)
        slots = max([min(len(g), self.max_objs) for g in batch_gt_instances] + [1])
        hm = torch.zeros(num, self.num_classes, out_h, out_w)
        wh = np.zeros((num, slots, 4 if self.ltrb else 2), np.float32)
        reg = np.zeros((num, slots, 2), np.float32)
        ind = np.zeros((num, slots), np.int64)
        reg_mask = np.zeros((num, slots), np.uint8)
        ids = np.zeros((num, slots), np.int64)
        for b, gt in enumerate(batch_gt_instances):
            bboxes = _as_numpy(gt.bboxes).reshape(-1, 4).astype(np.float64)
            labels = _as_numpy(gt.labels).reshape(-1).astype(np.int64)
            if 'instances_ids' not in gt:
                raise KeyError('FairMOTHead: gt_instances has no instances_ids (identity numbers): load the '
                               'annotations with LoadTrackAnnotations and VastMATDataset(instance_ids="global")')
            identities = _as_numpy(gt.instances_ids).reshape(-1).astype(np.int64)
            self._check_identities(identities, labels)
            cx = (bboxes[:, 0] + bboxes[:, 2]) / 2 * out_w / in_w
            cy = (bboxes[:, 1] + bboxes[:, 3]) / 2 * out_h / in_h
            w = (bboxes[:, 2] - bboxes[:, 0]) * out_w / in_w
            h = (bboxes[:, 3] - bboxes[:, 1]) * out_h / in_h
            for k in range(min(len(bboxes), self.max_objs)):
                if not (h[k] > 0 and w[k] > 0):
                    continue
                radius = max(0, int(gaussian_radius((math.ceil(h[k]), math.ceil(w[k])), self.min_overlap)))
                ct = np.array([np.clip(cx[k], 0, out_w - 1), np.clip(cy[k], 0, out_h - 1)], np.float32)
                ct_int = ct.astype(np.int32)
                gen_gaussian_target(hm[b, labels[k]], [int(ct_int[0]), int(ct_int[1])], radius)
                left, top = cx[k] - w[k] / 2, cy[k] - h[k] / 2
                if self.ltrb:
                    wh[b, k] = ct[0] - left, ct[1] - top, left + w[k] - ct[0], top + h[k] - ct[1]
                else:
                    wh[b, k] = w[k], h[k]
                ind[b, k] = ct_int[1] * out_w + ct_int[0]
                reg[b, k] = ct - ct_int
                reg_mask[b, k] = 1
                ids[b, k] = identities[k]
        return dict(hm=hm, wh=torch.from_numpy(wh), reg=torch.from_numpy(reg), ind=torch.from_numpy(ind),
                    reg_mask=torch.from_numpy(reg_mask), ids=torch.from_numpy(ids))

    def _check_identities(self, identities: np.ndarray, labels: np.ndarray) -> None:
        if len(labels) and (labels.min() < 0 or labels.max() >= self.num_classes):
            raise ValueError(f'FairMOTHead: a box has class {int(labels.max())}, the head has num_classes='
                             f'{self.num_classes}')
        if len(identities) and identities.min() < -1:
            raise ValueError(f'FairMOTHead: identity {int(identities.min())} < -1 (-1 marks a box without identity)')
        if self.num_identities is None:
            raise ValueError(f'FairMOTHead: {NUM_IDENTITIES_KEY} is not set; set it to the number of training '
                             'identities (VastMATDataset(instance_ids="global") prints it)')
        if len(identities) and identities.max() >= self.num_identities:
            raise ValueError(f'FairMOTHead: identity {int(identities.max())} >= {NUM_IDENTITIES_KEY}='
                             f'{self.num_identities}; set it to at least the number of training identities '
                             '(VastMATDataset(instance_ids="global") prints it)')

    # --------------------------------------------------------------------------------------------------- loss
    def loss_by_feat(self, hm_preds: list[Tensor], wh_preds: list[Tensor], reg_preds: list[Tensor],
                     id_preds: list[Tensor], batch_gt_instances: list[InstanceData], batch_img_metas: list[dict],
                     batch_gt_instances_ignore: Any = None) -> dict[str, Tensor]:
        """Focal loss on the heatmap, masked L1 on sizes and offsets, cross-entropy of the scaled, normalised
        embeddings at the centres over the identities, combined by :func:`uncertainty_loss`; with ``loss_chunks``
        > 1, the mean of these losses over the chunks of the batch.

        Returns ``loss_det`` and ``loss_id`` (the two halves of the official total) and, for the log, the weighted
        parts ``det_hm``, ``det_wh``, ``det_off``, ``id_ce`` and ``s_det``, ``s_id`` (detached).
        """
        if len(hm_preds) != 1:
            raise ValueError(f'FairMOTHead works on one feature map, got {len(hm_preds)} (use neck=None)')
        preds = (hm_preds[0], wh_preds[0], reg_preds[0], id_preds[0])
        meta = batch_img_metas[0]
        input_shape = tuple(meta.get('batch_input_shape') or meta.get('pad_shape') or meta['img_shape'])[:2]
        targets = {k: v.to(preds[0].device) for k, v in
                   self.get_targets(batch_gt_instances, tuple(preds[0].shape[-2:]), input_shape).items()}
        chunks, start = [], 0
        for size in data_parallel_chunk_sizes(len(preds[0]), self.loss_chunks):
            part = slice(start, start + size)
            start += size
            chunks.append(self._loss_terms(*(p[part] for p in preds), {k: v[part] for k, v in targets.items()}))
        # official run_epoch: loss.mean() over the GPUs' losses (each of the logged parts likewise)
        return {key: torch.stack([c[key] for c in chunks]).mean() for key in chunks[0]}

    def _loss_terms(self, hm_pred: Tensor, wh_pred: Tensor, reg_pred: Tensor, id_pred: Tensor,
                    targets: dict[str, Tensor]) -> dict[str, Tensor]:
        """The official ``MotLoss`` of one batch (or one GPU's chunk) and its targets."""
        # official _sigmoid: the probabilities clamped to [1e-4, 1 - 1e-4]
        heatmap = torch.clamp(hm_pred.sigmoid(), min=1e-4, max=1 - 1e-4)
        num_pos = int(targets['hm'].eq(1).sum())
        # official: (pos + neg) / num_pos, or neg alone when there is no positive
        loss_hm = self.loss_hm(heatmap, targets['hm'], avg_factor=max(num_pos, 1))

        # RegL1Loss: |pred - target| at the centres, over (mask expanded to the channels).sum() + 1e-4
        mask = targets['reg_mask'].float()
        wh_mask = mask.unsqueeze(2).expand_as(targets['wh'])
        loss_wh = self.loss_wh(transpose_and_gather_feat(wh_pred, targets['ind']), targets['wh'], weight=wh_mask,
                               avg_factor=float(wh_mask.sum()) + 1e-4)
        reg_mask = mask.unsqueeze(2).expand_as(targets['reg'])
        loss_off = self.loss_offset(transpose_and_gather_feat(reg_pred, targets['ind']), targets['reg'],
                                    weight=reg_mask, avg_factor=float(reg_mask.sum()) + 1e-4)

        # identities: embeddings at the centres, L2-normalised, scaled, classified
        positive = targets['reg_mask'] > 0
        embeddings = transpose_and_gather_feat(id_pred, targets['ind'])[positive]
        embeddings = self.emb_scale * F.normalize(embeddings)
        logits = self.classifier(embeddings)
        # a batch without any identity: 0 (the official cross-entropy would be NaN)
        loss_id = self.loss_id(logits, targets['ids'][positive])

        det_loss = loss_hm + loss_wh + loss_off
        if self.multi_loss == 'uncertainty':
            loss_det_part, loss_id_part = uncertainty_loss(det_loss, loss_id, self.s_det, self.s_id)
        else:
            loss_det_part, loss_id_part = det_loss, 0.1 * loss_id
        return dict(loss_det=loss_det_part.reshape(()), loss_id=loss_id_part.reshape(()),
                    det_hm=loss_hm.detach(), det_wh=loss_wh.detach(), det_off=loss_off.detach(),
                    id_ce=loss_id.detach(), s_det=self.s_det.detach().reshape(()),
                    s_id=self.s_id.detach().reshape(()))

    # ---------------------------------------------------------------------------------------------- decoding
    def predict_by_feat(self, hm_preds: list[Tensor], wh_preds: list[Tensor], reg_preds: list[Tensor],
                        id_preds: list[Tensor], batch_img_metas: list[dict] | None = None,
                        cfg: dict | None = None, rescale: bool = False, **kwargs: Any) -> list[InstanceData]:
        """``mot_decode``: sigmoid, 3x3 max-pool peaks, the top ``topk``, boxes ``centre + offset -/+ sizes`` scaled
        to input pixels (and, when ``rescale``, to the original image: about the centres as the official tracker when
        the meta has ``letterbox_pad`` (:class:`FairMOTLetterbox`), else by ``scale_factor``), scores above
        ``conf_thres``; ``features`` are the L2-normalised embeddings at the same peaks."""
        if len(hm_preds) != 1:
            raise ValueError(f'FairMOTHead works on one feature map, got {len(hm_preds)} (use neck=None)')
        cfg = self.test_cfg if cfg is None else cfg
        hm_pred, wh_pred, reg_pred, id_pred = hm_preds[0], wh_preds[0], reg_preds[0], id_preds[0]
        batch_img_metas = batch_img_metas or [{} for _ in range(len(hm_pred))]
        results = []
        for i, meta in enumerate(batch_img_metas):
            results.append(self._decode_single(hm_pred[i:i + 1], wh_pred[i:i + 1], reg_pred[i:i + 1],
                                               id_pred[i:i + 1], meta, cfg, rescale))
        return results

    def _decode_single(self, hm: Tensor, wh: Tensor, reg: Tensor, emb: Tensor, meta: dict, cfg: dict,
                       rescale: bool) -> InstanceData:
        out_h, out_w = hm.shape[-2:]
        input_shape = meta.get('batch_input_shape') or meta.get('pad_shape') or meta.get('img_shape')
        in_h, in_w = tuple(input_shape)[:2] if input_shape else (out_h * 4, out_w * 4)
        heat = get_local_maximum(hm.sigmoid(), kernel=cfg.get('local_maximum_kernel', 3))
        k = min(int(cfg.get('topk', 500)), heat.numel())
        scores, inds, labels, ys, xs = get_topk_from_heatmap(heat, k=k)
        offsets = transpose_and_gather_feat(reg, inds)[0]
        xs = xs[0].float() + offsets[:, 0]
        ys = ys[0].float() + offsets[:, 1]
        sizes = transpose_and_gather_feat(wh, inds)[0]
        if self.ltrb:
            bboxes = torch.stack([xs - sizes[:, 0], ys - sizes[:, 1], xs + sizes[:, 2], ys + sizes[:, 3]], dim=1)
        else:
            bboxes = torch.stack([xs - sizes[:, 0] / 2, ys - sizes[:, 1] / 2, xs + sizes[:, 0] / 2,
                                  ys + sizes[:, 1] / 2], dim=1)
        bboxes = bboxes * bboxes.new_tensor([in_w / out_w, in_h / out_h, in_w / out_w, in_h / out_h])
        if rescale and meta.get('letterbox_pad') is not None:  # FairMOTLetterbox: padded centred
            bboxes = letterbox_to_frame(bboxes, meta['img_shape'], meta['ori_shape'])
        elif rescale and meta.get('scale_factor') is not None:
            bboxes = bboxes / bboxes.new_tensor(meta['scale_factor']).repeat(2)
        features = transpose_and_gather_feat(F.normalize(emb, dim=1), inds)[0]
        keep = scores[0] > cfg.get('conf_thres', 0.4)
        return InstanceData(bboxes=bboxes[keep], scores=scores[0][keep], labels=labels[0][keep].long(),
                            features=features[keep])


def _as_numpy(value: Any) -> np.ndarray:
    if hasattr(value, 'tensor'):  # mmdet box types
        value = value.tensor
    if isinstance(value, Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)
