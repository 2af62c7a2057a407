"""The spread of ``make demo``'s verdict (``tools/benchmark/demo_spread.py``): the zoo benchmark run once per
training seed and once more under another CPU kernel setting, each tracker's test HOTA over the runs (min, mean,
max) beside its dev HOTA, and whether every tracker holds HOTA 20 at its worst.

Each run is ``tools/zoo_benchmark.py --seed S`` in a process of its own (``ATEN_CPU_CAPABILITY`` must be set before
torch loads), in a work dir of its own: the first seed with no kernel setting is ``make demo``'s own work dir, so it
reuses the trainings of ``make demo``; the others are ``W/spread/seed<S>[-<kernels>]``. A run whose ``zoo.json`` is
there is read, not run again, unless ``rerun`` (after a recipe change; trainings are kept by seed and kernel setting
and by their resolved config, so a rerun trains and tests only what changed, and takes seconds when nothing did).
"""
from __future__ import annotations

import json
import os
import os.path as osp
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

from vastmat.utils.io import write_json_atomic
from vastmat.utils.provenance import PACKAGE_ROOT

PROTOCOL = 'protocol1'
FLOOR = 0.20  # the HOTA every tracker must hold at its worst (issue: "the same verdict on any machine")


@dataclass(frozen=True)
class SpreadRun:
    """One zoo run: its training seed and CPU kernel setting (:func:`kernel_environment`; None: the libraries'
    choice)."""

    seed: int
    kernels: str | None = None

    @property
    def name(self) -> str:
        return f'seed{self.seed}' + (f'-{self.kernels}' if self.kernels else '')

    def work_dir(self, base: str, first_seed: int) -> str:
        if self.seed == first_seed and self.kernels is None:
            return base
        return osp.join(base, 'spread', self.name)


def spread_runs(seeds: list[int], kernels: list[str]) -> list[SpreadRun]:
    """One run per seed, then one per kernel setting on the first seed."""
    return [SpreadRun(seed) for seed in seeds] + [SpreadRun(seeds[0], k) for k in kernels]


# the settings of an AVX2-only machine, emulated on an AVX-512 one: torch's, oneDNN's and MKL's kernels alike
EMULATED_MACHINES = {
    'avx2': dict(ATEN_CPU_CAPABILITY='avx2', ONEDNN_MAX_CPU_ISA='AVX2', MKL_ENABLE_INSTRUCTIONS='AVX2')}


def kernel_environment(kernels: str | None) -> dict[str, str]:
    """The environment of a run's kernel setting: an emulated machine's (:data:`EMULATED_MACHINES`), else
    ``ATEN_CPU_CAPABILITY`` alone; none for None."""
    if not kernels:
        return {}
    return dict(EMULATED_MACHINES.get(kernels, dict(ATEN_CPU_CAPABILITY=kernels)))


def run_zoo(run: SpreadRun, work_dir: str, zoo_args: list[str], log_path: str) -> float:
    """``tools/zoo_benchmark.py`` for one run, its output in ``log_path`` and on the console; returns its seconds.

    Raises:
        RuntimeError: the run failed (its log's last lines in the message).
    """
    env = dict(os.environ, **kernel_environment(run.kernels))
    tool = osp.join(PACKAGE_ROOT, 'tools', 'zoo_benchmark.py')
    command = [sys.executable, tool, '--seed', str(run.seed), '--work-dir', work_dir, *zoo_args]
    os.makedirs(osp.dirname(log_path) or '.', exist_ok=True)
    start = time.perf_counter()
    lines = []
    with open(log_path, 'w', encoding='utf-8') as log, subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as child:
        for line in child.stdout:
            log.write(line)
            lines.append(line)
            if line.startswith(('[', '  ')) or 'finished' in line:  # the zoo's steps and results, not the bars
                print(f'  {run.name} | {line}', end='', flush=True)
    if child.returncode != 0:
        raise RuntimeError(f'{run.name}: {" ".join(command)} failed ({child.returncode}); its log {log_path} ends:\n'
                           + ''.join(lines[-20:]))
    return time.perf_counter() - start


def read_run(work_dir: str) -> dict:
    """``{tracker: dict(test=HOTA, dev=HOTA or None, videos={video: HOTA})}`` of one run's ``zoo.json``: the test
    HOTA with the tracker's own association; the dev HOTA where the zoo tested on the dev videos (the calibrated
    models, at the scale chosen), None elsewhere."""
    saved = json.load(open(osp.join(work_dir, 'zoo.json'), encoding='utf-8'))
    thresholds = saved.get('thresholds', {}).get(PROTOCOL, {})
    out = {}
    for key, metrics in saved['runs'][PROTOCOL].items():
        tracker, matcher = key.split('/')
        if matcher != 'original':
            continue
        calibration = thresholds.get(tracker)
        # (a zoo.json of before the calibration grid's point labels names the point by its one scale)
        dev = calibration['hota'][calibration.get('label') or f'{calibration["scale"]:g}'] if calibration else None
        videos = {v: m['HOTA'] for v, m in metrics.items() if isinstance(m, dict) and v != 'COMBINED' and 'HOTA' in m}
        out[tracker] = dict(test=metrics['COMBINED']['HOTA'], dev=dev, videos=videos)
    return out


def summarise(results: dict[str, dict]) -> dict[str, dict]:
    """``{tracker: dict(min, mean, max, dev_min, dev_mean, dev_max, runs={run: HOTA}, holds)}`` over the runs
    (``results``: ``{run name: read_run(...)}``); ``holds``: the minimum is at least :data:`FLOOR`."""
    trackers = sorted({t for run in results.values() for t in run})
    out = {}
    for tracker in trackers:
        test = {name: run[tracker]['test'] for name, run in results.items() if tracker in run}
        dev = [run[tracker]['dev'] for run in results.values() if tracker in run and run[tracker]['dev'] is not None]
        values = np.array(list(test.values()))
        row = dict(min=float(values.min()), mean=float(values.mean()), max=float(values.max()), runs=test,
                   holds=bool(values.min() >= FLOOR))
        row.update(dict(dev_min=min(dev), dev_mean=float(np.mean(dev)), dev_max=max(dev)) if dev else
                   dict(dev_min=None, dev_mean=None, dev_max=None))
        out[tracker] = row
    return out


def print_spread(summary: dict, runs: list[str], machine: str) -> None:
    """The spread table: one row per tracker, each run's test HOTA, min / mean / max, dev HOTA, the verdict."""
    from rich.table import Table

    from vastmat.experiments.zoo_report import make_console
    table = Table(title=f'make demo over seeds and CPU kernels ({PROTOCOL} test videos, HOTA %; {machine})')
    for column in ['tracker', *runs, 'min', 'mean', 'max', 'dev (min-max)', f'min >= {100 * FLOOR:.0f}']:
        table.add_column(column, justify='left' if column == 'tracker' else 'right')
    for tracker, row in summary.items():
        dev = '-' if row['dev_min'] is None else f'{100 * row["dev_min"]:.1f}-{100 * row["dev_max"]:.1f}'
        table.add_row(tracker, *(f'{100 * row["runs"][r]:.1f}' if r in row['runs'] else '-' for r in runs),
                      f'{100 * row["min"]:.1f}', f'{100 * row["mean"]:.1f}', f'{100 * row["max"]:.1f}', dev,
                      'yes' if row['holds'] else '[bold red]no[/]')
    make_console().print(table)


def plot_spread(summary: dict, path: str) -> None:
    """Each tracker's test HOTA in every run (dots) and its range (bar), the floor of 20 drawn."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    trackers = list(summary)
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(trackers), 3.6))
    for i, tracker in enumerate(trackers):
        row = summary[tracker]
        ax.vlines(i, 100 * row['min'], 100 * row['max'], color='0.6', linewidth=6)
        ax.scatter([i] * len(row['runs']), [100 * v for v in row['runs'].values()], color='C0', zorder=3, s=18)
    ax.axhline(100 * FLOOR, color='C3', linestyle='--', linewidth=1)
    ax.set_xticks(range(len(trackers)), trackers, rotation=30, ha='right')
    ax.set_ylabel('test HOTA (%)')
    ax.set_title('make demo: HOTA over seeds and CPU kernel settings')
    fig.tight_layout()
    tmp = path + '.tmp.png'
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    os.replace(tmp, path)


def demo_spread(seeds: list[int], kernels: list[str], work_dir: str, zoo_args: list[str], machine: str,
                rerun: bool = False) -> dict:
    """Run (or read: a finished run, unless ``rerun``) every spread run, print and save the table
    (``W/spread/spread.json``, ``spread.png``)."""
    runs = spread_runs(seeds, kernels)
    results, seconds = {}, {}
    for i, run in enumerate(runs, 1):
        run_dir = run.work_dir(work_dir, seeds[0])
        if rerun or not osp.isfile(osp.join(run_dir, 'zoo.json')):
            print(f'[{i}/{len(runs)}] {run.name}: tools/zoo_benchmark.py in {run_dir}', flush=True)
            seconds[run.name] = run_zoo(run, run_dir, zoo_args, osp.join(work_dir, 'spread', f'{run.name}.log'))
        else:
            print(f'[{i}/{len(runs)}] {run.name}: reading {run_dir}/zoo.json (--rerun after a recipe change)',
                  flush=True)
        results[run.name] = read_run(run_dir)
    summary = summarise(results)
    print_spread(summary, [r.name for r in runs], machine)
    out_dir = osp.join(work_dir, 'spread')
    os.makedirs(out_dir, exist_ok=True)
    out = dict(machine=machine, protocol=PROTOCOL, floor=FLOOR, runs=[dict(seed=r.seed, kernels=r.kernels,
               name=r.name, work_dir=r.work_dir(work_dir, seeds[0]), seconds=seconds.get(r.name)) for r in runs],
               trackers=summary, per_run=results, holds=all(row['holds'] for row in summary.values()))
    write_json_atomic(out, osp.join(out_dir, 'spread.json'))
    plot_spread(summary, osp.join(out_dir, 'spread.png'))
    print(f'saved in {out_dir}: spread.json, spread.png; every tracker at HOTA {100 * FLOOR:.0f} or more at its '
          f'worst: {"yes" if out["holds"] else "no"}')
    return out
