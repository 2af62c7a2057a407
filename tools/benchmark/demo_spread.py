#!/usr/bin/env python
"""The spread of make demo's verdict: every learned part of the zoo trained with several seeds, and once more under
another CPU kernel setting, each tracker's test HOTA over the runs and its dev HOTA.

    python tools/benchmark/demo_spread.py [--seeds 0 1 2] [--kernels avx2] [--work-dir work_dirs/zoo_benchmark]
        [--machine TEXT] [--rerun] [-- ZOO_BENCHMARK_OPTIONS ...]

Each run is ``tools/zoo_benchmark.py --seed S`` (a kernel run on the first seed: ``avx2`` emulates an AVX2-only
machine, ``ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2``; another K sets
``ATEN_CPU_CAPABILITY=K``). The first seed's plain run is make demo's own work dir (its trainings reused: a finished
make demo costs nothing here); the others go to ``WORK_DIR/spread/seed<S>[-<K>]``, and a finished run is read again,
not rerun; ``--rerun`` after a change of a recipe runs every run again (each training and test whose config is
unchanged is reused).
Prints a table (each run's HOTA, min / mean / max, dev HOTA, whether the minimum is 20 or more) and saves
``WORK_DIR/spread/spread.json`` and ``spread.png``. About 10 minutes a run on 2 cores.
"""
from __future__ import annotations

import argparse
import platform
import sys


def cpu_name() -> str:
    """This machine's CPU model and core count, as /proc/cpuinfo names it (the platform's name elsewhere)."""
    import os
    try:
        with open('/proc/cpuinfo', encoding='utf-8') as f:
            model = next(line.split(':', 1)[1].strip() for line in f if line.startswith('model name'))
    except (OSError, StopIteration):
        model = platform.processor() or platform.machine()
    return f'{model}, {os.cpu_count()} cores'


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--seeds', nargs='+', type=int, default=[0, 1, 2], help='training seeds (default 0 1 2)')
    parser.add_argument('--kernels', nargs='*', default=['avx2'], metavar='K',
                        help='kernel settings run on the first seed (default avx2: an emulated AVX2 machine; '
                        'none: no such run)')
    parser.add_argument('--work-dir', default='work_dirs/zoo_benchmark', help="make demo's work dir")
    parser.add_argument('--machine', default=None, help='the machine named in the table (default: the CPU model)')
    parser.add_argument('--rerun', action='store_true',
                        help='run the finished runs again too (after a recipe change: what did not change is reused)')
    argv = list(sys.argv[1:] if argv is None else argv)
    zoo_args = argv[argv.index('--') + 1:] if '--' in argv else []
    args = parser.parse_args(argv[:argv.index('--')] if '--' in argv else argv)
    if len(set(args.seeds)) != len(args.seeds):
        parser.error(f'--seeds must differ, got {args.seeds}')
    return args, zoo_args


def main(argv: list[str] | None = None) -> dict:
    from vastmat.benchmarks.demo_spread import demo_spread
    args, zoo_args = parse_args(argv)
    return demo_spread(args.seeds, args.kernels, args.work_dir, zoo_args, args.machine or cpu_name(),
                       rerun=args.rerun)


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
