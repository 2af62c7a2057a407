"""Each learned tracker's association inputs measured directly, on videos it did not train on (
``tools/analysis/association_split.py``, its second table). Where :mod:`.association_split` scores the tracks, these measure
what the association is given, at the ground-truth boxes, so that a weak input is told apart from a weak use of it:

* every tracker, from its results: **identity continuation**, the share of animals present in two consecutive frames
  and found (a result box at IoU >= 0.5, one to one per frame) in both whose result identity is the same in both;
* FairMOT and QDTrack: **embedding retrieval** at the ground-truth boxes (FairMOT: the L2-normalised identity map at
  each box's centre cell, its training target's position; QDTrack: the track head's RoI embedding of the box). Rank-1
  against the previous frame: does each animal's nearest (cosine) box of the previous frame belong to the same animal;
  rank-1 against the video: its nearest box of any other frame;
* TransTrack: the **track boxes**: each animal found by a query of the previous frame (score >= the tracker's
  ``track_thresh``, IoU >= 0.5, one to one) is followed to that query's track-decoder box in this frame; its IoU
  with the animal's box of this frame, beside the IoU of the previous frame's box (no motion);
* MOTIP: the **ID decoder's accuracy** on ground-truth trajectories, its training target: the queries matched to the
  ground-truth boxes (the Hungarian assignment of the layer training uses, ``MOTIP.id_matching_layer``) give the
  tokens; consecutive
  clips of the training clip length, one random assignment of the ID words, no occlusion or switch augmentation; the
  share of tokens of frames 1.. whose argmax is the target label (a known animal's word, or newborn).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterator

import numpy as np
import torch
import torch.nn.functional as F

from vastmat.datasets.formats import GroundTruth, TrackResults
from vastmat.structures.bbox import ltwh_to_xyxy, paired_iou

from vastmat.evaluation.oracle_association import TRUTH_IOU, iou_pairs, match_truth


def identity_continuation(results: TrackResults, gt: GroundTruth, min_iou: float = TRUTH_IOU) -> tuple[int, int]:
    """``(kept, continuing)``: of the animals found in two consecutive frames (a result box at IoU >= ``min_iou``,
    one to one per frame), how many keep their result identity."""
    rows, gt_ids = match_truth(results.frames, results.boxes, gt.frames, gt.ids, gt.boxes, min_iou)
    own = {(int(results.frames[r]), int(g)): int(results.ids[r]) for r, g in zip(rows, gt_ids)}
    kept = continuing = 0
    for (frame, animal), track in own.items():
        before = own.get((frame - 1, animal))
        if before is not None:
            continuing += 1
            kept += int(before == track)
    return kept, continuing


# ---------------------------------------------------------------------------------------------- frames with truth
def frames_with_truth(model: Any, data_root: str, protocol: str, videos: list[str]) -> Iterator[tuple[str, list]]:
    """Per video, its frames through the model's test pipeline and data preprocessor: ``(video, [(image (1, C, H,
    W), frame sample, gt ids, gt boxes x1 y1 x2 y2 in input pixels, the same in original pixels), ...])``, the
    evaluated ground-truth rows only."""
    from mmengine.runner import Runner

    from vastmat.datasets.formats import read_gt
    from vastmat.datasets.sequences import load_sequence
    cfg = model.cfg.test_dataloader.copy()
    cfg.dataset = dict(cfg.dataset, data_root=data_root, protocol=protocol, split=None, videos=list(videos))
    cfg.num_workers, cfg.persistent_workers = 0, False
    loader = Runner.build_dataloader(cfg)
    gt, current, frames = None, None, []
    for batch in loader:
        data = model.data_preprocessor(batch, False)
        sample = data['data_samples'][0][0]
        video = sample.metainfo['video_name']
        if video != current:  # the loader gives each video's frames together, in order
            if frames:
                yield current, frames
            current, frames = video, []
            sequence = load_sequence(data_root, video, with_gt=False)
            gt = read_gt(f'{sequence.directory}/gt/gt.txt', sequence.length)
        rows = np.flatnonzero((gt.frames == int(sample.metainfo['frame_id']) + 1) & (gt.valid == 1))
        original = ltwh_to_xyxy(gt.boxes[rows])
        scale = np.tile(np.asarray(sample.metainfo.get('scale_factor') or (1.0, 1.0), np.float64), 2)
        pad = np.tile(np.asarray(sample.metainfo.get('letterbox_pad') or (0.0, 0.0), np.float64), 2)  # FairMOT's
        frames.append((data['inputs'][0][0][None], sample, gt.ids[rows], original * scale + pad, original))
    if frames:
        yield current, frames


# -------------------------------------------------------------------------------------------------- embeddings
@torch.no_grad()
def truth_embeddings(model: Any, image: torch.Tensor, boxes: np.ndarray) -> np.ndarray:
    """L2-normalised embeddings of ground-truth boxes (input pixels) of one frame: FairMOT's identity map at the
    boxes' centre cells, QDTrack's RoI embeddings."""
    if len(boxes) == 0:
        return np.zeros((0, 0))
    box = torch.as_tensor(boxes, dtype=torch.float32)
    if hasattr(model, 'track_head'):  # mmdet QDTrack
        feats = model.detector.extract_feat(image)
        embeddings = model.track_head.predict(feats, [box])
    else:  # FairMOT: a TrackingByDetection around a CenterNet-style detector with FairMOTHead
        net = model.detector
        emb = net.bbox_head(net.extract_feat(image))[3][0]
        stride_y, stride_x = image.shape[-2] / emb.shape[-2], image.shape[-1] / emb.shape[-1]
        cx = ((box[:, 0] + box[:, 2]) / 2 / stride_x).long().clamp(0, emb.shape[-1] - 1)
        cy = ((box[:, 1] + box[:, 3]) / 2 / stride_y).long().clamp(0, emb.shape[-2] - 1)
        embeddings = emb[0][:, cy, cx].T
    return F.normalize(embeddings.double(), dim=1).numpy()


def retrieval_rank1(frame_ids: np.ndarray, ids: np.ndarray, embeddings: np.ndarray) -> dict[str, tuple[int, int]]:
    """Rank-1 hits and queries of one video's ground-truth embeddings: against the previous frame's boxes (the
    queries: animals present there too) and against every other frame's boxes (animals seen in another frame)."""
    similarity = embeddings @ embeddings.T
    out = dict(previous=[0, 0], video=[0, 0])
    for i in range(len(ids)):
        for key, gallery in (('previous', frame_ids == frame_ids[i] - 1), ('video', frame_ids != frame_ids[i])):
            if not (gallery & (ids == ids[i])).any():
                continue
            candidates = np.flatnonzero(gallery)
            out[key][0] += int(ids[candidates[np.argmax(similarity[i, candidates])]] == ids[i])
            out[key][1] += 1
    return {key: (hits, total) for key, (hits, total) in out.items()}


def embedding_retrieval(model: Any, data_root: str, protocol: str, videos: list[str]) -> dict[str, float]:
    """Rank-1 of FairMOT's or QDTrack's embedding at the ground-truth boxes of ``videos``
    (:func:`retrieval_rank1`): ``{'rank1_previous', 'rank1_video', 'queries_previous', 'queries_video'}``."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for _, frames in frames_with_truth(model, data_root, protocol, videos):
        per_frame = [(i, ids, truth_embeddings(model, image, boxes))
                     for i, (image, _, ids, boxes, _) in enumerate(frames) if len(ids)]
        if not per_frame:
            continue
        frame_ids = np.concatenate([np.full(len(ids), i) for i, ids, _ in per_frame])
        counts = retrieval_rank1(frame_ids, np.concatenate([ids for _, ids, _ in per_frame]),
                                 np.concatenate([emb for _, _, emb in per_frame]))
        for key, (hits, total) in counts.items():
            totals[key][0] += hits
            totals[key][1] += total
    return {**{f'rank1_{key}': hits / max(total, 1) for key, (hits, total) in totals.items()},
            **{f'queries_{key}': total for key, (_, total) in totals.items()}}


# ------------------------------------------------------------------------------------------------ TransTrack
@torch.no_grad()
def track_box_iou(model: Any, data_root: str, protocol: str, videos: list[str],
                  min_iou: float = TRUTH_IOU) -> dict[str, float]:
    """TransTrack's track boxes against the next frame's truth (module docstring): ``{'track_iou', 'track_hit'
    (share at IoU >= 0.5), 'still_iou', 'still_hit' (the previous frame's box), 'followed'}``."""
    threshold = float(model.tracker.track_thresh)
    track, still, truth = [], [], []  # per followed animal: its track box, previous box and box in this frame
    for _, frames in frames_with_truth(model, data_root, protocol, videos):
        model.start_video()
        previous = None
        for image, sample, ids, _, boxes in frames:
            detections, extra = model._detect(image, sample)
            if previous is not None:
                prev_dets, prev_ids, prev_boxes = previous
                confident = np.flatnonzero(prev_dets.scores >= threshold)
                now = {int(i): row for row, i in enumerate(ids)}
                for query, animal in zip(*iou_pairs(prev_dets.bboxes[confident], prev_boxes, min_iou)):
                    target = now.get(int(prev_ids[animal]))
                    if target is not None:
                        track.append(extra['tracking'].bboxes[confident[query]])
                        still.append(prev_dets.bboxes[confident[query]])
                        truth.append(boxes[target])
            previous = (detections, ids, boxes)
    out = dict(followed=len(truth))
    for key, found in (('track', track), ('still', still)):
        iou = paired_iou(np.asarray(found).reshape(-1, 4), np.asarray(truth).reshape(-1, 4))
        out[f'{key}_iou'] = float(iou.mean()) if len(iou) else 0.0
        out[f'{key}_hit'] = float((iou >= min_iou).mean()) if len(iou) else 0.0
    return out


# ------------------------------------------------------------------------------------------------------ MOTIP
@torch.no_grad()
def id_decoder_accuracy(model: Any, data_root: str, protocol: str, videos: list[str], seed: int = 0) -> dict[str, float]:
    """MOTIP's ID decoder on ground-truth trajectories (module docstring): ``{'id_accuracy', 'known_accuracy',
    'newborn_accuracy', 'tokens'}``."""
    from mmengine.structures import InstanceData

    from vastmat.models.mot.motip_targets import gather_clip_features, generate_id_labels, trajectory_and_unknown
    decoder, modelling = model.tracker.id_decoder, model.tracker.trajectory_modeling
    vocabulary, length = decoder.num_id_vocabulary, decoder.rel_pe_length
    torch.manual_seed(seed)
    hits = dict(known=[0, 0], newborn=[0, 0])
    for _, frames in frames_with_truth(model, data_root, protocol, videos):
        tokens = []
        for image, sample, ids, boxes, _ in frames:
            logits, det_boxes, outputs = model._run_detr(image, [sample])
            truth = sample.clone()
            truth.gt_instances = InstanceData(bboxes=torch.as_tensor(boxes, dtype=torch.float32),
                                              labels=torch.zeros(len(ids), dtype=torch.long))
            layer = model.id_matching_layer  # the training's choice of layer (official: the second-to-last)
            queries = model.matched_queries(logits[layer][0], det_boxes[layer][0], truth) if len(ids) else []
            tokens.append((torch.as_tensor(ids), outputs[0][queries]))
        for start in range(0, len(tokens) - length + 1, length):
            clip = tokens[start:start + length]
            labels = generate_id_labels([ids for ids, _ in clip], vocabulary, 1, vocabulary)
            targets = trajectory_and_unknown(labels, vocabulary, 0.0, 0.0)
            seq = gather_clip_features([targets], [[feats for _, feats in clip]])
            id_logits = decoder(modelling(seq['trajectory_features']), seq['trajectory_id_labels'],
                                seq['trajectory_times'], seq['trajectory_masks'], seq['unknown_features'],
                                seq['unknown_times'], seq['unknown_masks'])
            keep = ~seq['unknown_masks'][:, :, 1:]
            target = seq['unknown_id_labels'][:, :, 1:][keep]
            right = id_logits[:, :, 1:][keep].argmax(-1) == target
            for key, rows in (('known', target < vocabulary), ('newborn', target == vocabulary)):
                hits[key][0] += int(right[rows].sum())
                hits[key][1] += int(rows.sum())
    total = hits['known'][1] + hits['newborn'][1]
    return dict(id_accuracy=(hits['known'][0] + hits['newborn'][0]) / max(total, 1),
                known_accuracy=hits['known'][0] / max(hits['known'][1], 1),
                newborn_accuracy=hits['newborn'][0] / max(hits['newborn'][1], 1), tokens=total)


# ------------------------------------------------------------------------------------------------------ the zoo
def continuation_share(data_root: str, results_dir: str, videos: list[str]) -> dict[str, float]:
    """:func:`identity_continuation` of a results folder over ``videos``: ``{'continuation', 'continuing'}``."""
    import os.path as osp

    from vastmat.datasets.formats import read_gt, read_results
    from vastmat.datasets.sequences import load_sequence
    kept = continuing = 0
    for video in videos:
        sequence = load_sequence(data_root, video, with_gt=False)
        results = read_results(osp.join(results_dir, f'{video}.txt'), sequence.length)
        gt = read_gt(osp.join(sequence.directory, 'gt', 'gt.txt'), sequence.length)
        k, c = identity_continuation(results, gt)
        kept, continuing = kept + k, continuing + c
    return dict(continuation=kept / max(continuing, 1), continuing=continuing)


def measure_for(model: Any) -> Any:
    """The association-input measure of a model: QDTrack's and FairMOT's embeddings, TransTrack's track boxes,
    MOTIP's ID decoder; None for a model without one of these."""
    from vastmat.models.dense_heads import FairMOTHead
    from vastmat.models.mot.motip import MOTIP
    from vastmat.models.mot.transtrack import TransTrack
    if isinstance(model, MOTIP):
        return id_decoder_accuracy
    if isinstance(model, TransTrack):
        return track_box_iou
    head = getattr(getattr(model, 'detector', None), 'bbox_head', None)
    if hasattr(model, 'track_head') or isinstance(head, FairMOTHead):
        return embedding_retrieval
    return None


def zoo_association_inputs(ctx: Any, members: list) -> dict[str, dict]:
    """The association-input measure of every zoo model that has one (FairMOT, QDTrack: embedding retrieval;
    TransTrack: track boxes; MOTIP: ID decoder; TCEI runs MOTIP's checkpoint, so MOTIP's row is its), on
    ``ctx.videos`` at the zoo's last checkpoint with the test config: ``{tracker: {measure: value}}``."""
    import glob
    import os.path as osp

    from vastmat.apis import init_model

    from vastmat.experiments.zoo import run_model_member, train
    by_name = {m.name: m for m in members}
    out = {}
    for member in members:
        if member.checkpoint_of or not member.demo_config:
            continue
        run_dir = osp.dirname(run_model_member(ctx, member, ['original'], by_name)['runs']['original']['results'])
        training = train(ctx, member.demo_config, member.name)
        configs = sorted(glob.glob(osp.join(run_dir, '*.py')))
        if not configs:
            raise FileNotFoundError(f'{run_dir}: no test config of {member.name} (run the zoo first)')
        model = init_model(configs[0], training.checkpoint)
        measure = measure_for(model)
        if measure is not None:
            out[member.name] = measure(model, ctx.data_root, ctx.protocol, ctx.videos)
    return out
