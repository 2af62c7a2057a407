#!/usr/bin/env python
"""Next-frame box prediction on held-out videos: DiffMOT's D2MP against a constant-velocity Kalman filter.

    python tools/analysis/motion_prediction.py --data-root ../shared/data/AnimalTrack/train \\
        (--checkpoint D2MP_CKPT | --train-iters N [--train-minutes M] [--curve-minutes C] [--batch-size B]
         [--lr LR]) \\
        [--held-out VIDEO ... | --num-held-out 6] [--stride 1] [--threads 2] [--work-dir DIR] [--out FILE.json]

Every video of ``--data-root`` (a MOTChallenge split folder or a VastMAT root) either trains or is held out; the
held-out videos default to one per species (the name before the last ``_``), ``--num-held-out`` of them. Without
``--checkpoint`` a D2MP (configs/d2mp/d2mp_1xb2048-800e_vastmat-p1.py, the official model) is first trained on the
other videos through the Python API (mmengine's runner) for ``--train-iters`` iterations or ``--train-minutes``
minutes of training, whichever ends first; its weights go to ``WORK_DIR/d2mp.pth``. With ``--curve-minutes`` the
training also records a learning curve: D2MP's mean IoU on 2,000 fixed held-out windows every C minutes (not
counted as training time).

Scored windows: the D2MP training windows of the held-out tracks (valid rows of one track, 5 conditions from 6
rows, the 7th row the target; reference/trackers.md section 2) whose 7 rows are consecutive frames, i.e. true
next-frame predictions. For each, the box predicted for the 7th row by:

* ``D2MP``: the last box plus the one-step sampled delta (noise from a generator seeded ``--seed``);
* ``Kalman (CV)``: the project's ``KalmanFilterXYAH`` (ByteTrack's filter) run along the whole track in pixels,
  initiated at its first row, predicted once per elapsed frame and updated with every row; its prediction just
  before the update with the target row;
* ``last box``: no motion (the 6th row's box).

Each gets the IoU (no +1 pixel) with the target box; the table prints the mean, the median and the shares above
0.5 and 0.75, and the JSON (``--out``, default ``WORK_DIR/motion_prediction.json``) holds them with the held-out
videos, the training settings and the per-video means.
"""
from __future__ import annotations

import argparse
import os
import os.path as osp

import numpy as np

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
D2MP_CONFIG = osp.join(REPO, 'configs', 'd2mp', 'd2mp_1xb2048-800e_vastmat-p1.py')


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True, help='MOTChallenge split folder or VastMAT root')
    parser.add_argument('--checkpoint', help='a trained D2MP (otherwise one is trained first)')
    parser.add_argument('--config', default=D2MP_CONFIG, help='D2MP config (model and optimiser)')
    parser.add_argument('--held-out', nargs='+', help='the held-out videos (default: one per species)')
    parser.add_argument('--num-held-out', type=int, default=6)
    parser.add_argument('--stride', type=int, default=1, help='keep every STRIDE-th frame (3: 30 to 10 FPS)')
    parser.add_argument('--train-iters', type=int, default=1000)
    parser.add_argument('--train-minutes', type=float, help='stop training after this many minutes')
    parser.add_argument('--curve-minutes', type=float,
                        help='during training, score D2MP on a fixed subset of held-out windows this often')
    parser.add_argument('--batch-size', type=int, default=2048, help='training batch (official 2048)')
    parser.add_argument('--lr', type=float, default=1e-4, help='Adam learning rate (official 1e-4)')
    parser.add_argument('--threads', type=int, default=2, help='torch CPU threads')
    parser.add_argument('--seed', type=int, default=0, help='training seed and sampling noise seed')
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--work-dir', default='work_dirs/motion_prediction')
    parser.add_argument('--out', help='JSON file (default WORK_DIR/motion_prediction.json)')
    return parser.parse_args(argv)


def main(argv=None) -> dict:
    args = parse_args(argv)
    import torch
    from rich.console import Console
    from rich.table import Table

    from vastmat.datasets.sequences import list_sequences
    from vastmat.experiments.motion_prediction import default_held_out, evaluate, held_out_windows, train_d2mp
    from vastmat.utils.io import write_json_atomic

    torch.set_num_threads(args.threads)
    console = Console()
    videos = list_sequences(args.data_root)
    held_out = args.held_out or default_held_out(videos, args.num_held_out)
    unknown = [v for v in held_out if v not in videos]
    if unknown:
        raise KeyError(f'--held-out: {unknown} not under {args.data_root}')
    train_videos = [v for v in videos if v not in held_out]
    os.makedirs(args.work_dir, exist_ok=True)
    windows = held_out_windows(args, held_out)
    training = None
    checkpoint = args.checkpoint
    if checkpoint is None:
        total = sum(len(w['target']) for w in windows.values())
        pick = np.random.default_rng(args.seed).permutation(total)[:2000]  # the learning curve's windows
        probe = {k: np.concatenate([w[k] for w in windows.values()])[pick] for k in ('conds', 'last', 'target')}
        console.print(f'training D2MP on {len(train_videos)} videos (stride {args.stride}), at most '
                      f'{args.train_iters} iterations' + (f' / {args.train_minutes} min' if args.train_minutes else '')
                      + f', batch {args.batch_size}, lr {args.lr}, {args.threads} thread(s)')
        checkpoint, training = train_d2mp(args, train_videos, probe)
        console.print(f'trained {training["iterations"]} iterations in {training["seconds"]:.0f} s, loss '
                      f'{training["first_loss"]:.4f} -> {training["last_loss_mean_of_last_20"]:.4f}; {checkpoint}')
    result = evaluate(args, checkpoint, windows)
    table = Table(title=f'Next-frame box prediction on {len(held_out)} held-out videos ({", ".join(held_out)}), '
                        f'stride {args.stride}')
    for column in ('model', 'windows', 'mean IoU', 'median IoU', 'IoU > 0.5', 'IoU > 0.75'):
        table.add_column(column, justify='left' if column == 'model' else 'right')
    for name, row in result['models'].items():
        table.add_row(name, str(row['windows']), f'{100 * row["mean_iou"]:.2f}', f'{100 * row["median_iou"]:.2f}',
                      f'{100 * row["share_iou_gt_0_5"]:.1f}%', f'{100 * row["share_iou_gt_0_75"]:.1f}%')
    console.print(table)
    out = dict(data_root=args.data_root, stride=args.stride, held_out=held_out, train_videos=train_videos,
               checkpoint=checkpoint, training=training, seed=args.seed, **result)
    path = args.out or osp.join(args.work_dir, 'motion_prediction.json')
    write_json_atomic(out, path)
    console.print(f'saved {path}')
    return out


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
