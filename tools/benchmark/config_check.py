#!/usr/bin/env python
"""Benchmark: every shipped config run as tools/train.py and tools/test.py run it, on a generated dataset in the
VastMAT layout at the config's own image size (vastmat/benchmarks/shipped_configs.py).

    python tools/benchmark/config_check.py [PATTERN ...] [--device cpu|cuda] [--iterations 3] [--warmup 1]
        [--batch-size N] [--amp | --no-amp] [--workers] [--out work_dirs/config_check]

PATTERN selects configs by their path under configs/ (shell patterns: 'yolox/*', '*_vastmat-p1.py'; default all).
Each training config builds its runner (loops, dataloaders, model, optimizer, schedulers, hooks) and trains
--warmup + --iterations iterations of its own loop at its own batch (--batch-size: images a GPU instead); each config
with a test tracks one generated test video. Printed per config: what it built, seconds per iteration and images per
second (after the warm-up), peak memory (GPU: allocated; CPU: the process's resident set), whether the losses were
finite, the projected time of the whole schedule on the GPUs its name gives (``8xb4``: 8 GPUs; epochs scaled to the
paper's training frames), and what the check replaced (data, starting checkpoints, downloads). Saved as JSON.
On CUDA, AMP is on where the config trains (``--no-amp`` turns it off), as ``tools/train.py --amp``.
``--compare-cpu`` (with ``--device cuda``) also tests each config with a test on the CPU and on the GPU with the same
weights (``--checkpoint CKPT`` for one config, else the training's initialisation, with which an untrained detector
may track nothing) and prints the tracks each wrote, those in common and the largest box difference.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import os.path as osp
import platform
import time

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from vastmat.benchmarks.shipped_configs import check_config, compare_devices, shipped_configs
from vastmat.utils.io import write_json_atomic


def device_description(device: str) -> str:
    import torch
    if device == 'cuda':
        return f'{torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA {torch.version.cuda}'
    return f'{platform.processor() or platform.machine()} CPU, {torch.get_num_threads()} threads, torch {torch.__version__}'


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('patterns', nargs='*', metavar='PATTERN', help='configs under configs/ (default: all)')
    parser.add_argument('--device', choices=('cpu', 'cuda'), default='cpu')
    parser.add_argument('--iterations', type=int, default=3, help='timed training iterations')
    parser.add_argument('--warmup', type=int, default=1, help='training iterations before the timed ones')
    parser.add_argument('--batch-size', type=int, help='images a GPU (default: the config\'s)')
    parser.add_argument('--amp', action=argparse.BooleanOptionalAction, default=None,
                        help='mixed precision (default: on CUDA)')
    parser.add_argument('--workers', action='store_true', help='the configs\' dataloader workers (default: none)')
    parser.add_argument('--out', default='work_dirs/config_check', help='folder of the JSON, work dirs and data')
    parser.add_argument('--compare-cpu', action='store_true', help='with --device cuda: the same test on the CPU')
    parser.add_argument('--checkpoint', help='weights of the --compare-cpu test (one config)')
    args = parser.parse_args(argv)
    if args.iterations < 1 or args.warmup < 0:
        parser.error('--iterations must be >= 1 and --warmup >= 0')
    import torch
    if args.device == 'cuda' and not torch.cuda.is_available():
        parser.error('--device cuda: torch sees no GPU')
    if args.device == 'cpu' and torch.cuda.is_available():
        os.environ['CUDA_VISIBLE_DEVICES'] = ''  # mmengine would otherwise put the model on the GPU
    configs = shipped_configs()
    if args.patterns:
        configs = [c for c in configs if any(fnmatch.fnmatch(c, p) for p in args.patterns)]
        if not configs:
            parser.error(f'no config under configs/ matches {" ".join(args.patterns)}')
    if args.compare_cpu and args.device != 'cuda':
        parser.error('--compare-cpu compares the GPU with the CPU: give --device cuda')
    if args.checkpoint and len(configs) != 1:
        parser.error(f'--checkpoint is for one config; {len(configs)} match')
    amp = args.device == 'cuda' if args.amp is None else args.amp
    console = Console(width=None if Console().is_terminal else 250)  # a log file keeps whole rows
    described = device_description(args.device)
    console.print(f'{len(configs)} configs on {described}: {args.warmup} + {args.iterations} iterations, '
                  f'batch {args.batch_size or "as configured"}, AMP {"on" if amp else "off"}')
    results = []
    start = time.perf_counter()
    out = osp.join(args.out, f'config_check_{args.device}.json')

    def save(comparisons: list[dict]) -> None:  # after every config: an interrupted run keeps what it measured
        write_json_atomic(dict(device=described, amp=amp, warmup=args.warmup, iterations=args.iterations,
                               batch_size=args.batch_size, results=results, cpu_comparisons=comparisons), out)

    with Progress(console=console, transient=True) as progress:
        task = progress.add_task('configs', total=len(configs))
        for config in configs:
            progress.update(task, description=config)
            result = check_config(config, osp.join(args.out, 'work_dirs', config), osp.join(args.out, 'data'),
                                  device=args.device, iterations=args.warmup + args.iterations, warmup=args.warmup,
                                  batch_size=args.batch_size, amp=amp, workers=args.workers)
            results.append(result.to_dict())
            progress.console.print(f'  {config}: ' + (result.error or summary(result.to_dict())))
            save([])
            progress.advance(task)
    console.print(results_table(results, described))
    failed = [r['config'] for r in results if r['error'] or r['loss_finite'] is False]
    console.print(f'{len(results) - len(failed)} of {len(results)} configs ran'
                  + (f'; failed: {", ".join(failed)}' if failed else '') + f' ({time.perf_counter() - start:.0f} s)')
    comparisons = []
    if args.compare_cpu:
        for result in (r for r in results if 'test' in r['kind']):
            comparisons.append(compare_devices(result['config'], osp.join(args.out, 'compare', result['config']),
                                               osp.join(args.out, 'data'), ('cpu', 'cuda'), args.checkpoint))
        console.print(comparison_table(comparisons))
    save(comparisons)
    console.print(f'saved {out}')
    return results


def summary(r: dict) -> str:
    """One line of what a config did."""
    parts = [f"built in {r['build_s']:.1f} s"]
    if r['seconds_per_iter'] is not None:
        parts.append(f"{r['seconds_per_iter']:.2f} s/iteration at batch {r['batch_size']}, loss {r['loss']:.3g}")
    if r['test_s'] is not None:
        parts.append(f"tested {r['test_frames']} frames in {r['test_s']:.1f} s")
    return ', '.join(parts)


def _number(value: float | None, digits: int = 2) -> str:
    return '-' if value is None else f'{value:.{digits}f}'


def results_table(results: list[dict], device: str) -> Table:
    table = Table(title=f'Shipped configs on {device}')
    for column in ('config', 'kind', 'input', 'batch', 'build s', 's/iter', 'img/s', 'peak MB', 'loss',
                   'projected h', 'test s', 'replaced', 'error'):
        table.add_column(column, justify='left' if column in ('config', 'kind', 'replaced', 'error') else 'right',
                         overflow='fold')
    for r in results:
        loss = '-' if r['loss'] is None else f"{r['loss']:.3g}" + ('' if r['loss_finite'] else ' (not finite)')
        projected = '-' if r['projected_hours'] is None else f"{r['projected_hours']:.1f} ({r['gpus']} GPU)"
        table.add_row(r['config'], r['kind'], '{}x{}'.format(*r['image_size']), str(r['batch_size'] or '-'),
                      _number(r['build_s'], 1), _number(r['seconds_per_iter']), _number(r['images_per_s'], 1),
                      _number(r['peak_memory_mb'], 0), loss, projected, _number(r['test_s'], 1),
                      str(len(r['notes'])), r['error'])
    return table


def comparison_table(comparisons: list[dict]) -> Table:
    table = Table(title='The same test on the CPU and on the GPU (same weights)')
    for column in ('config', 'CPU tracks', 'GPU tracks', 'in common', 'largest box difference (px)', 'error'):
        table.add_column(column, justify='left' if column in ('config', 'error') else 'right', overflow='fold')
    for c in comparisons:
        rows = c.get('rows') or ['-', '-']
        table.add_row(c['config'], str(rows[0]), str(rows[1]), str(c.get('common', '-')),
                      _number(c.get('max_box_difference'), 4), c['error'])
    return table


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
