"""Next-frame box prediction on held-out videos: DiffMOT's D2MP against a constant-velocity Kalman filter and the
last box (``tools/analysis/motion_prediction.py``, whose docstring defines the scored windows).

The functions take the tool's options (``args``: ``data_root``, ``config``, ``stride``, ``work_dir``, ``device``,
``seed``, and for training ``train_iters``, ``train_minutes``, ``curve_minutes``, ``batch_size``, ``lr``).
"""
from __future__ import annotations

import os.path as osp
import time
from collections import defaultdict
from typing import Any

import numpy as np

from vastmat.structures.bbox import cxcywh_to_xyxy, paired_iou


def species(video: str) -> str:
    return video.rsplit('_', 1)[0] if '_' in video else video


def default_held_out(videos: list[str], count: int) -> list[str]:
    """One video per species, species in name order, the first video (sorted) of each, round-robin to ``count``."""
    groups: dict[str, list[str]] = defaultdict(list)
    for video in sorted(videos):
        groups[species(video)].append(video)
    picked: list[str] = []
    depth = 0
    limit = min(count, len(videos) - 1)  # at least one video trains
    while len(picked) < limit:
        for name in sorted(groups):
            if depth < len(groups[name]) and len(picked) < limit:
                picked.append(groups[name][depth])
        depth += 1
    return picked


def train_d2mp(args: Any, train_videos: list[str],
               probe: dict[str, np.ndarray] | None = None) -> tuple[str, dict]:
    """Train D2MP on ``train_videos`` through mmengine's runner; returns the weights' path and a summary. Every
    ``--curve-minutes`` the mean IoU of D2MP on ``probe`` (held-out windows: ``conds``, ``last``, ``target``) is
    recorded (the learning curve; its time is not counted as training time)."""
    import torch
    from mmengine.config import Config
    from mmengine.hooks import Hook

    from vastmat.engine.runner_builder import build_quiet_runner

    class TimeLimit(Hook):
        """Stops the loop after ``seconds`` of training, keeps the losses and records the learning curve."""

        def __init__(self, seconds: float | None, curve_seconds: float | None) -> None:
            self.seconds, self.curve_seconds, self.losses, self.curve = seconds, curve_seconds, [], []
            self.start = self.last_probe = self.paused = 0.0

        def before_train(self, runner) -> None:
            self.start = self.last_probe = time.perf_counter()

        def trained_seconds(self) -> float:
            return time.perf_counter() - self.start - self.paused

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
            self.losses.append(float(outputs['loss'].detach()))
            now = time.perf_counter()
            if probe is not None and self.curve_seconds and now - self.last_probe >= self.curve_seconds:
                model = runner.model.module if hasattr(runner.model, 'module') else runner.model
                model.eval()
                generator = torch.Generator(device=args.device).manual_seed(args.seed)
                boxes = d2mp_boxes(model, probe['conds'], probe['last'], generator, args.device)
                model.train()
                score = float(paired_iou(cxcywh_to_xyxy(boxes), cxcywh_to_xyxy(probe['target'])).mean())
                self.curve.append(dict(iteration=len(self.losses), seconds=self.trained_seconds(), mean_iou=score))
                self.paused += time.perf_counter() - now
                self.last_probe = time.perf_counter()
            if self.seconds is not None and self.trained_seconds() > self.seconds:
                runner.train_loop.stop_training = True

    cfg = Config.fromfile(args.config)
    cfg.work_dir = osp.join(args.work_dir, 'train')
    cfg.train_dataloader.batch_size = args.batch_size
    cfg.train_dataloader.num_workers = 0
    cfg.train_dataloader.persistent_workers = False
    cfg.train_dataloader.dataset = dict(type='TrajectoryWindowDataset', data_root=args.data_root, protocol=None,
                                        split=None, videos=train_videos, stride=args.stride, interval=5)
    cfg.train_cfg = dict(type='IterBasedTrainLoop', max_iters=args.train_iters)
    cfg.optim_wrapper.optimizer.lr = args.lr
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=10 ** 9, by_epoch=False)
    cfg.default_hooks.logger = dict(type='LoggerHook', interval=50)
    cfg.log_processor = dict(by_epoch=False)
    cfg.randomness = dict(seed=args.seed)
    cfg.find_unused_parameters = True
    runner = build_quiet_runner(cfg)
    limit = TimeLimit(None if args.train_minutes is None else 60 * args.train_minutes,
                      None if args.curve_minutes is None else 60 * args.curve_minutes)
    runner.register_hook(limit)
    start = time.perf_counter()
    runner.train()
    seconds = time.perf_counter() - start - limit.paused
    path = osp.join(args.work_dir, 'd2mp.pth')
    model = runner.model.module if hasattr(runner.model, 'module') else runner.model
    torch.save({'state_dict': model.state_dict(), 'meta': dict(iter=len(limit.losses))}, path)
    losses = limit.losses
    summary = dict(iterations=len(losses), seconds=seconds, batch_size=args.batch_size, lr=args.lr,
                   windows=len(runner.train_dataloader.dataset), first_loss=losses[0] if losses else None,
                   last_loss_mean_of_last_20=float(np.mean(losses[-20:])) if losses else None,
                   loss_curve=[float(np.mean(losses[i:i + 20])) for i in range(0, len(losses), 20)],
                   held_out_curve=limit.curve)
    return path, summary


def kalman_predictions(tracks: list[np.ndarray], frames: list[np.ndarray]) -> list[np.ndarray]:
    """For every track (pixel ``cx cy w h`` rows), the Kalman prediction (cx cy w h) of each row from the rows
    before it (row 0: nan); one batched filter over all tracks, stepped row by row."""
    from vastmat.models.motion import KalmanFilterXYAH
    kf = KalmanFilterXYAH()
    out = [np.full_like(t, np.nan) for t in tracks]
    lengths = np.array([len(t) for t in tracks])

    def xyah(rows: np.ndarray) -> np.ndarray:
        return np.column_stack([rows[:, 0], rows[:, 1], rows[:, 2] / rows[:, 3], rows[:, 3]])

    mean, cov = kf.initiate(xyah(np.array([t[0] for t in tracks])))
    for step in range(1, lengths.max()):
        active = np.flatnonzero(lengths > step)
        gaps = np.array([frames[i][step] - frames[i][step - 1] for i in active])
        m, c = mean[active], cov[active]
        m, c = kf.predict(m, c)
        for extra in range(1, int(gaps.max())):  # tracks with missing frames: one step per frame
            more = gaps > extra
            m[more], c[more] = kf.predict(m[more], c[more])
        for k, i in enumerate(active):
            a, h = m[k, 2], m[k, 3]
            out[i][step] = [m[k, 0], m[k, 1], a * h, h]
        m, c = kf.update(m, c, xyah(np.array([tracks[i][step] for i in active])))
        mean[active], cov[active] = m, c
    return out


def held_out_windows(args: Any, held_out: list[str]) -> dict[str, dict[str, np.ndarray]]:
    """Per held-out video, its scored windows: ``conds (k, 5, 8)``, ``target``, ``last`` and ``kalman`` boxes
    (normalised ``cx cy w h``)."""
    from vastmat.datasets.sequences import load_sequence
    from vastmat.datasets.trajectory_windows import track_rows

    out = {}
    for video in held_out:
        sequence = load_sequence(args.data_root, video, stride=args.stride)
        width, height = float(sequence.info['imWidth']), float(sequence.info['imHeight'])
        gt = sequence.gt.select(sequence.gt.valid != 0)
        order = np.lexsort((gt.frames, gt.ids))
        frames_sorted, ids_sorted = gt.frames[order], gt.ids[order]
        tracks = track_rows(gt.frames, gt.ids, gt.boxes, width, height)
        frame_lists = np.split(frames_sorted, np.flatnonzero(np.diff(ids_sorted)) + 1) if len(order) else []
        keep = [i for i, t in enumerate(tracks) if len(t) >= 7]
        tracks, frame_lists = [tracks[i] for i in keep], [frame_lists[i] for i in keep]
        if not tracks:
            continue
        scale = np.array([width, height, width, height])
        kalman = kalman_predictions([t * scale for t in tracks], frame_lists)
        parts: dict[str, list] = defaultdict(list)
        for track, frames, kf in zip(tracks, frame_lists, kalman):
            starts = np.arange(len(track) - 6)
            starts = starts[frames[starts + 6] - frames[starts] == 6]  # 7 consecutive frames
            if not len(starts):
                continue
            rows = track[starts[:, None] + np.arange(7)]
            history = rows[:, :6]
            parts['conds'].append(np.concatenate([history[:, 1:], history[:, 1:] - history[:, :-1]], axis=2))
            parts['target'].append(rows[:, 6])
            parts['last'].append(rows[:, 5])
            parts['kalman'].append(kf[starts + 6] / scale)
        if parts:
            out[video] = {name: np.concatenate(arrays) for name, arrays in parts.items()}
    return out


def d2mp_boxes(model, conds: np.ndarray, last: np.ndarray, generator, device: str) -> np.ndarray:
    """D2MP's predicted boxes (normalised cx cy w h): the last box plus the sampled delta."""
    import torch
    deltas = []
    with torch.no_grad():
        for chunk in range(0, len(conds), 4096):
            batch = torch.from_numpy(conds[chunk:chunk + 4096].astype(np.float32)).to(device)
            deltas.append(model.predict_deltas(batch, generator).cpu().numpy().astype(np.float64))
    return last + np.concatenate(deltas)


def evaluate(args: Any, checkpoint: str, windows: dict[str, dict[str, np.ndarray]]) -> dict:
    import torch
    from mmengine.config import Config

    from vastmat.registry import MODELS
    model = MODELS.build(dict(Config.fromfile(args.config).model.to_dict(), checkpoint=checkpoint))
    model = model.to(args.device).eval()
    generator = torch.Generator(device=args.device).manual_seed(args.seed)
    per_model: dict[str, list[np.ndarray]] = defaultdict(list)
    per_video: dict[str, dict] = {}
    for video, w in windows.items():
        predicted = {'D2MP': d2mp_boxes(model, w['conds'], w['last'], generator, args.device),
                     'Kalman (CV)': w['kalman'], 'last box': w['last']}
        target_xyxy = cxcywh_to_xyxy(w['target'])
        per_video[video] = dict(windows=len(target_xyxy))
        for name, boxes in predicted.items():
            scores = paired_iou(cxcywh_to_xyxy(boxes), target_xyxy)
            per_model[name].append(scores)
            per_video[video][name] = float(scores.mean())
    results = {}
    for name, parts in per_model.items():
        scores = np.concatenate(parts)
        results[name] = dict(mean_iou=float(scores.mean()), median_iou=float(np.median(scores)),
                             share_iou_gt_0_5=float((scores > 0.5).mean()),
                             share_iou_gt_0_75=float((scores > 0.75).mean()), windows=int(len(scores)))
    return dict(models=results, per_video=per_video)
