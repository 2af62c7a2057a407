"""Sweeps: a grid over tracker and matcher settings on cached detections, one tracking run per grid point, a table
of them (``tools/analysis/sweep.py`` is the command line).

Grid: each ``--grid`` axis is a dotted key of the config (``model.tracker.match_thresh=0.6,0.8``) with values in the
language of :mod:`vastmat.utils.options`; the runs are the Cartesian product of the axes. ``--base-options`` sets keys
for every run. A key must exist in the config or be a new argument of a component dict (``type=...``), as
``--cfg-options``; a dict value replaces the whole entry. Every key and every run's model is checked before anything
runs. The modules: :mod:`.plan` (settings, axes, the paper's table layouts), :mod:`.runs` (run specs, ids, the cache,
one run, :func:`execute_todo` through :mod:`vastmat.experiments.launchers`: local, ray, torchrun), :mod:`.report`
(tables, CSV / JSON, the alpha plot).
"""
from __future__ import annotations

import time

from ..launchers import LAUNCHERS, import_ray, rank_share, torchrun_barrier, torchrun_env
from .plan import (DEFAULT_POST_PROCESSORS, DIST_TIMEOUT_S, TABLES, Axis, Plan, SweepSettings, grid_axes, make_plan,
                   option_pairs, post_processors, resolve_options, table_preset)
from .report import COLUMNS, CONSOLE_WIDTH, make_table, print_tables, read_rows, wide_console
from .runs import build_config, check_runs, execute_run, execute_todo, is_done, make_runs, resolve_videos, run_id

__all__ = ['SweepSettings', 'run_sweep', 'Axis', 'Plan', 'make_plan', 'grid_axes', 'option_pairs', 'post_processors',
           'resolve_options', 'table_preset', 'build_config', 'make_runs', 'check_runs', 'resolve_videos', 'is_done',
           'execute_run', 'run_id', 'execute_todo', 'import_ray', 'rank_share',
           'torchrun_env', 'torchrun_barrier', 'make_table', 'print_tables', 'read_rows', 'wide_console', 'COLUMNS',
           'CONSOLE_WIDTH', 'LAUNCHERS', 'TABLES', 'DEFAULT_POST_PROCESSORS', 'DIST_TIMEOUT_S']


def run_sweep(settings: SweepSettings) -> dict:
    """Run a sweep: the plan and the videos checked, every run's model built, the runs not done yet executed, then
    the table printed and written. Returns its rows, the table (as in W/table.json), how many runs were computed and
    reused, and the seconds it took (rows and table are None on the other ranks of a torchrun)."""
    start = time.perf_counter()
    if settings.launcher == 'ray':
        import_ray()
    plan = make_plan(settings)
    videos = resolve_videos(settings)
    runs = make_runs(settings, plan.fixed, plan.axes, videos, settings.work_dir)
    check_runs(runs, plan.flags)

    rank, world_size = torchrun_env() if settings.launcher == 'torchrun' else (0, 1)
    mine = [runs[i] for i in rank_share(len(runs), rank, world_size)]
    todo = [run for run in mine if not is_done(run)]
    where = f'rank {rank}/{world_size}: ' if world_size > 1 else ''
    print(f'{where}{len(mine) - len(todo)} runs done before, {len(todo)} to run '
          f'({len(runs)} in the grid, {len(videos)} video(s) each)', flush=True)
    execute_todo(todo, settings)
    if settings.launcher == 'torchrun':
        torchrun_barrier(world_size, settings.dist_timeout)
    result = dict(computed=len(todo), reused=len(mine) - len(todo), rank=rank, world_size=world_size)
    if rank != 0:
        return dict(result, rows=None, table=None, seconds=time.perf_counter() - start)
    rows, table = make_table(settings, plan, runs, videos)
    print_tables(rows, plan.axes, table['title'], matrix_only=settings.table == '23')
    return dict(result, rows=rows, table=table, seconds=time.perf_counter() - start)
