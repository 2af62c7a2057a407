#!/usr/bin/env python
"""Train a detector, tracker or model from a config (MMDetection 3.3's flags).

    python tools/train.py CONFIG [--work-dir DIR] [--data-root DIR] [--checkpoint CKPT] [--resume [CKPT]] [--amp]
        [--cfg-options k=v ...]
    tools/dist_train.sh CONFIG NUM_PROCESSES [args]     # torchrun; on a machine without GPUs it uses gloo
"""
import argparse

from vastmat.engine import close_distributed
from vastmat.engine.checkpoint import check_starting_point
from vastmat.engine.config_options import point_datasets
from vastmat.utils.errors import UserInputError
from vastmat.engine.cli import add_common_arguments, finish_parsing, load_config
from vastmat.engine.runner_builder import build_runner, enable_amp


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Train a VastMAT detector, tracker or model')
    add_common_arguments(parser)
    parser.add_argument('--checkpoint', help='initialise the weights from this checkpoint (sets load_from); '
                        'use --resume to continue a run')
    parser.add_argument('--resume', nargs='?', type=str, const='auto',
                        help='resume from this checkpoint, or without a value from the latest checkpoint in the '
                        'work dir')
    parser.add_argument('--amp', action='store_true', help='automatic mixed precision training')
    parser.add_argument('--data-root', metavar='DIR',
                        help='train (and validate) on this VastMAT root: every dataset of the config is pointed at it')
    parser.add_argument('--auto-scale-lr', action='store_true',
                        help='scale the learning rate by the real batch size / auto_scale_lr.base_batch_size')
    return finish_parsing(parser.parse_args(argv))


def main(argv=None) -> None:
    args = parse_args(argv)
    cfg = load_config(args)
    if not cfg.get('train_dataloader') or not cfg.get('train_cfg'):
        raise UserInputError(f'{args.config} trains nothing (no train_dataloader / train_cfg): it is a tracking '
                             'config for tools/test.py; a detector in its loop trains with the detector\'s config '
                             '(its _base_)')
    if args.checkpoint is not None:
        cfg.load_from = args.checkpoint
    if args.data_root is not None:
        if not sum(point_datasets(cfg.get(loader), args.data_root, every_dataset=True)
                   for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader')):
            raise UserInputError(f'--data-root: no dataset of {args.config} names a data_root to point there')
    if args.amp:
        enable_amp(cfg)
    if args.auto_scale_lr:
        if not {'enable', 'base_batch_size'} <= set(cfg.get('auto_scale_lr') or {}):
            raise KeyError(f'--auto-scale-lr: {args.config} has no auto_scale_lr=dict(enable=..., '
                           'base_batch_size=...)')
        cfg.auto_scale_lr.enable = True
    # resume priority: an explicit checkpoint > the latest one in work_dir
    if args.resume == 'auto':
        cfg.resume = True
        # the config's starting point, used when the work dir holds no checkpoint yet (VastMATRunner.load_or_resume)
        cfg.starting_point, cfg.load_from = cfg.get('load_from'), None
    elif args.resume is not None:
        cfg.resume = True
        cfg.load_from = args.resume
    check_starting_point(cfg.get('load_from'), args.config)  # before anything is built
    runner = build_runner(cfg)
    runner.train()
    close_distributed()


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
