#!/usr/bin/env python
"""Benchmark: training iterations per second and peak memory of full-size models, a few iterations each, through
the real runner, pipeline and optimizer of their configs (the GPU check of a model issue).

    python tools/benchmark/train_speed.py CONFIG [CONFIG ...] --data-root data/demo [--iters 20] [--warmup 5]
        [--amp] [--out work_dirs/train_speed.json]

Each config trains ``--warmup`` + ``--iters`` iterations on its own training pipeline and batch size (per GPU) from
``--data-root`` (any VastMAT root: the demo data is enough, its frames are resized to the config's input size), with
validation and checkpoints off, in a temporary work dir. Reported per config: iterations/s and samples/s (a sample
is one item of the batch: a frame, a key / reference pair for QDTrack, a clip of 30 frames for MOTIP) over the timed
iterations (after the warm-up; the GPU synchronised around them), peak memory (``torch.cuda.max_memory_allocated`` of the timed iterations on a GPU; on
a CPU the process's peak resident set so far, which includes earlier configs: give one config per run), parameters,
and the last losses. The table is printed and the numbers saved as JSON. On a CPU the same runs are a (slow) smoke
test of the configs.
"""
from __future__ import annotations

import argparse
import os.path as osp

from rich.console import Console
from rich.table import Table

from vastmat.experiments.train_speed import benchmark, device_name
from vastmat.utils.io import write_json_atomic


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('configs', nargs='+')
    parser.add_argument('--data-root', default='data/demo', help='a VastMAT root with a protocol1 train split')
    parser.add_argument('--iters', type=int, default=20, help='timed iterations')
    parser.add_argument('--warmup', type=int, default=5, help='iterations before timing starts')
    parser.add_argument('--amp', action='store_true', help='automatic mixed precision')
    parser.add_argument('--out', help='JSON file for the results')
    args = parser.parse_args(argv)
    if args.iters < 1 or args.warmup < 0:
        parser.error('--iters must be >= 1 and --warmup >= 0')
    results = []
    console = Console()
    for config in args.configs:
        console.print(f'[bold]{config}[/]: {args.warmup} + {args.iters} iterations on {device_name()}')
        results.append(benchmark(config, args.data_root, args.iters, args.warmup, args.amp))
    table = Table(title='Training speed')
    for column in ('config', 'batch', 'iter/s', 'samples/s', 'peak memory (GiB)', 'parameters', 'device'):
        table.add_column(column, justify='left' if column in ('config', 'device') else 'right')
    for r in results:
        table.add_row(osp.basename(r['config']), str(r['batch_size']), f"{r['iters_per_s']:.2f}",
                      f"{r['samples_per_s']:.1f}", f"{r['peak_memory_gib']:.2f}", f"{r['parameters']:,}", r['device'])
    console.print(table)
    if args.out:
        write_json_atomic(results, args.out)
    return results


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
