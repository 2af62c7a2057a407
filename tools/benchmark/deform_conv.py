#!/usr/bin/env python
"""Benchmark: DCNv2 on the CPU, one forward and backward pass, mmcv's kernel against vastmat's CPU path
(vastmat/models/backbones/deform_conv.py), at the deformable convolutions of a FairMOT config's DLA-34 upsampling.

    python tools/benchmark/deform_conv.py [--config fairmot/fairmot_tiny_vastmat-demo.py] [--batch 2]
        [--size W H] [--repeats 3] [--threads 1] [--out FILE.json]

A forward of the config's backbone on a batch of ``--size`` (default: the config's ``img_scale``) records the input of
each of its DCNs; each is then timed alone with random offsets and masks (best of ``--repeats``), both ways, and the
table gives their sums: the seconds one training step spends in the DCNs. The largest differences of the outputs and
gradients are printed too. Goal: the CPU path at least 3 times as fast as mmcv's at the tiny FairMOT's sizes.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import torch


def _timed_step(forward, x: torch.Tensor, module: torch.nn.Module) -> tuple[float, list[torch.Tensor]]:
    """Seconds of one forward and backward pass of ``forward(x)``, and the output with every gradient."""
    module.zero_grad()
    leaf = x.clone().requires_grad_()
    start = time.perf_counter()
    out = forward(leaf)
    out.sum().backward()
    seconds = time.perf_counter() - start
    return seconds, [out.detach(), leaf.grad] + [p.grad.clone() for p in module.parameters()]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--config', default='fairmot/fairmot_tiny_vastmat-demo.py', help='under configs/')
    parser.add_argument('--batch', type=int, default=2)
    parser.add_argument('--size', type=int, nargs=2, metavar=('W', 'H'))
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--threads', type=int, default=1)
    parser.add_argument('--out', help='JSON file of the result')
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.batch < 1:
        parser.error('--repeats and --batch must be >= 1')
    from mmcv.ops import ModulatedDeformConv2dPack as MMCVPack
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    from rich.console import Console
    from rich.table import Table

    import vastmat.models  # noqa: F401  (registers)
    from vastmat.benchmarks.config_data import image_size
    from vastmat.models.backbones.deform_conv import ModulatedDeformConv2dPack
    from vastmat.models.trackers.zoo import config_path
    from vastmat.registry import MODELS
    from vastmat.utils.io import atomic_write
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cfg = Config.fromfile(config_path(args.config))
    width, height = args.size or cfg.get('img_scale') or image_size(cfg)
    init_default_scope('vastmat')
    backbone = MODELS.build(cfg.model.detector.backbone).train()
    inputs = []
    hooks = [m.register_forward_pre_hook(lambda module, x: inputs.append((module, x[0].detach())))
             for m in backbone.modules() if isinstance(m, ModulatedDeformConv2dPack)]
    with torch.no_grad():
        backbone(torch.randn(args.batch, 3, height, width))
    for hook in hooks:
        hook.remove()
    if not inputs:
        raise SystemExit(f'{args.config}: its backbone has no deformable convolutions (deformable=False?)')
    seconds = {'mmcv': 0.0, 'vastmat': 0.0}
    largest_difference = 0.0
    for module, x in inputs:
        with torch.no_grad():  # offsets and masks that are not the initial zeros
            module.conv_offset.weight.normal_(0, 0.5)
        ways = {'mmcv': lambda t, m=module: MMCVPack.forward(m, t), 'vastmat': module}
        results = {}
        for way, forward in ways.items():
            runs = [_timed_step(forward, x, module) for _ in range(args.repeats)]
            seconds[way] += min(s for s, _ in runs)
            results[way] = runs[0][1]
        largest_difference = max(largest_difference, *((a - b).abs().max().item()
                                                       for a, b in zip(results['mmcv'], results['vastmat'])))
    result = dict(config=args.config, batch=args.batch, size=[width, height], threads=args.threads,
                  dcns=len(inputs), seconds=seconds, speedup=seconds['mmcv'] / seconds['vastmat'],
                  largest_difference=largest_difference, machine=os.uname().machine)
    table = Table(title=f'DCNv2, forward + backward of the {len(inputs)} DCNs of {args.config} '
                        f'(batch {args.batch}, {width}x{height}, {args.threads} thread(s))')
    for column in ('kernel', 'seconds a step', 'x mmcv'):
        table.add_column(column)
    for way, value in seconds.items():
        table.add_row(way, f'{value:.4f}', f'{seconds["mmcv"] / value:.1f}')
    console = Console()
    console.print(table)
    console.print(f'largest difference of outputs and gradients: {largest_difference:.2e}')
    if args.out:
        with atomic_write(args.out) as f:
            json.dump(result, f, indent=2)
    return result


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
