"""A sweep's outputs: W/table.csv (one row per run, ratios as fractions), W/table.json (settings and rows), the
printed table (percentages; for two axes also a HOTA matrix) and, when alpha varies, W/alpha.png (HOTA and AssA
against alpha, IDSW on the right axis)."""
from __future__ import annotations

import csv
import json
import os.path as osp
from typing import Any

from mmengine.config import Config

from vastmat.utils.io import atomic_write, save_figure_atomic, write_json_atomic
from vastmat.utils.options import format_value

from .plan import Axis, Plan, resolve_options
from .runs import build_config

# the paper's appendix columns (Tables 19-23): (header, TrackEval name)
COLUMNS = (('HOTA', 'HOTA'), ('DetA', 'DetA'), ('AssA', 'AssA'), ('IDF1', 'IDF1'), ('MOTA', 'MOTA'),
           ('IDSW', 'IDSW'), ('FP', 'CLR_FP'), ('FN', 'CLR_FN'))
# printed tables' width when the output is not a terminal (rich's default there is 80: the labels would wrap)
CONSOLE_WIDTH = 140


def read_rows(runs: list[dict]) -> list[dict]:
    """One row per run (grid order): its parameters, COMBINED metrics (fractions, counts) and id."""
    rows = []
    for run in runs:
        path = osp.join(run['run_dir'], 'metrics.json')
        if not osp.isfile(path):
            raise FileNotFoundError(f'{path}: missing (run {run["label"]} did not finish)')
        with open(path, encoding='utf-8') as f:
            combined = json.load(f)['COMBINED']
        rows.append(dict(label=run['label'], id=run['id'], params=run['params'],
                         metrics={key: combined[key] for _, key in COLUMNS}))
    return rows


def make_table(settings: Any, plan: Plan, runs: list[dict], videos: list[str]) -> tuple[list, dict]:
    """The rows of the finished runs and the table (settings, title, rows), written to W/table.{csv,json} and,
    when alpha varies, W/alpha.png.

    Args:
        settings: a :class:`SweepSettings`.
    """
    rows = read_rows(runs)
    fixed = resolve_options(plan.fixed)
    first = build_config(runs[0]['config_file'], runs[0]['options'])
    table_settings = dict(config=settings.config, caption=plan.caption, fixed=fixed,
                          axes=[dict(key=a.key, name=a.name, labels=a.labels, values=a.values) for a in plan.axes],
                          det_root=settings.det_root, data_root=settings.data_root, videos=videos,
                          preset=settings.preset, table=settings.table)
    title = title_of(settings, first, plan.caption, fixed, plan.axes, len(videos))
    table = dict(settings=table_settings, title=title, columns=[key for _, key in COLUMNS], rows=rows)
    write_csv(rows, plan.axes, osp.join(settings.work_dir, 'table.csv'))
    write_json_atomic(table, osp.join(settings.work_dir, 'table.json'))
    if alpha_axis(plan.axes) is not None:
        plot_alpha(rows, runs, plan.axes, osp.join(settings.work_dir, 'alpha.png'),
                   f'{short_title(settings.config, first)}, {len(videos)} video(s)')
    return rows, table


def title_of(settings: Any, cfg: Config, caption: str, fixed: dict, axes: list[Axis], num_videos: int) -> str:
    """The table's title: the config, the data and the settings every row shares (``cfg``: a run's resolved
    config; the varied keys are left out)."""
    tracker = cfg.model.get('tracker', {})
    varied = {axis.key for axis in axes}
    shared = [f'{k}={format_value(v)}' for k, v in tracker.items()
              if k != 'matcher' and f'model.tracker.{k}' not in varied
              and ('thr' in k or any(f == f'model.tracker.{k}' or f.startswith(f'model.tracker.{k}.') for f in fixed))]
    matcher = tracker.get('matcher')
    if isinstance(matcher, dict) and 'model.tracker.matcher' not in varied:
        matcher = {k: ('*' if f'model.tracker.matcher.{k}' in varied else v) for k, v in matcher.items()}
        shared.append(f'matcher={format_value(matcher)}')
    if 'model.post_processors' not in varied:
        shared.append(f'post_processors={format_value(cfg.model.get("post_processors") or [])}')
    shared += [f'{k}={format_value(v)}' for k, v in fixed.items()
               if not k.startswith(('model.tracker.', 'model.post_processors')) and k not in varied]
    return '\n'.join([f'{short_title(settings.config, cfg)} on {num_videos} video(s) of {settings.data_root}, '
                      f'preset {settings.preset}',
                      caption or ('varied: ' + ', '.join(axis.key for axis in axes) if axes else 'one run'),
                      'shared: ' + ', '.join(shared)])


def short_title(config: str, cfg: Config) -> str:
    """``Tracker (config file name)``."""
    return f'{cfg.model.get("tracker", {}).get("type", cfg.model.get("type"))} ({osp.basename(config)})'


def wide_console() -> Any:
    """rich's console; off a terminal (a log file, a pipe) wide enough for the labels, whatever $COLUMNS says."""
    from rich.console import Console
    console = Console()
    return console if console.is_terminal else Console(width=max(console.width, CONSOLE_WIDTH))


def print_tables(rows: list[dict], axes: list[Axis], title: str, matrix_only: bool) -> None:
    """The long table (best two of each column marked) and, for two axes, the HOTA matrix."""
    from vastmat.evaluation.report import ranked_table
    console = wide_console()
    if not matrix_only:
        table, _ = ranked_table({row['label']: row['metrics'] for row in rows},
                                [(key, header, key) for header, key in COLUMNS], title,
                                row_label=' / '.join(axis.name for axis in axes) or 'run')
        console.print(table)
    else:
        console.print(title)
    if len(axes) == 2:
        console.print(hota_matrix(rows, axes))


def hota_matrix(rows: list[dict], axes: list[Axis]) -> Any:
    """HOTA (%) with the first axis down and the second across (a rich table, the best bold)."""
    from rich.table import Table
    first, second = axes
    cells = {(row['params'][first.name], row['params'][second.name]): row['metrics']['HOTA'] for row in rows}
    best = max(cells.values())
    table = Table(title=f'HOTA (%) by {first.name} and {second.name}, best bold')
    table.add_column(f'{first.name} \\ {second.name}')
    for label in second.labels:
        table.add_column(label, justify='right')
    for a in first.labels:
        texts = [f'{100 * cells[a, b]:.3f}' for b in second.labels]
        table.add_row(a, *(f'[bold]{t}[/bold]' if cells[a, b] == best else t for t, b in zip(texts, second.labels)))
    return table


def write_csv(rows: list[dict], axes: list[Axis], path: str) -> None:
    """The long form: the axes' values, the metrics (fractions, counts) and the run id, one row per run."""
    with atomic_write(path) as f:
        writer = csv.writer(f)
        writer.writerow([axis.name for axis in axes] + [header for header, _ in COLUMNS] + ['run_id'])
        for row in rows:
            writer.writerow([row['params'][axis.name] for axis in axes]
                            + [row['metrics'][key] for _, key in COLUMNS] + [row['id']])


def alpha_axis(axes: list[Axis]) -> Axis | None:
    """The axis that varies a numeric ``...alpha``, if any."""
    return next((axis for axis in axes if axis.key.endswith('.alpha')
                 and all(isinstance(v, (int, float)) for v in axis.values)), None)


def plot_alpha(rows: list[dict], runs: list[dict], axes: list[Axis], path: str, title: str) -> None:
    """HOTA and AssA (%, left) and IDSW (right) against alpha; one set of lines per setting of the other axes."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    axis = alpha_axis(axes)
    others = [a for a in axes if a is not axis]
    groups: dict[str, list] = {}
    for row, run in zip(rows, runs):
        group = ', '.join(row['params'][a.name] for a in others)
        groups.setdefault(group, []).append((float(run['values'][axis.key]), row['metrics']))
    fig, left = plt.subplots(figsize=(6.4, 4.0))
    right = left.twinx()
    for i, (group, points) in enumerate(groups.items()):
        points.sort(key=lambda p: p[0])
        x = [p[0] for p in points]
        # one group: a colour per metric; several: a colour per group, the line style tells the metric
        colors = ('C0', 'C1', 'C2') if len(groups) == 1 else (f'C{i}',) * 3
        suffix = f' ({group})' if group else ''
        left.plot(x, [100 * p[1]['HOTA'] for p in points], 'o-', color=colors[0], label=f'HOTA{suffix}')
        left.plot(x, [100 * p[1]['AssA'] for p in points], 's--', color=colors[1], label=f'AssA{suffix}')
        right.plot(x, [p[1]['IDSW'] for p in points], '^:', color=colors[2], label=f'IDSW{suffix}')
    left.set_xlabel('alpha (IoU weight)')
    left.set_ylabel('HOTA, AssA (%)')
    right.set_ylabel('IDSW')
    handles = left.get_legend_handles_labels()
    extra = right.get_legend_handles_labels()
    left.legend(handles[0] + extra[0], handles[1] + extra[1], fontsize=8, loc='best')
    left.grid(alpha=0.3)
    left.set_title(title, fontsize=9)
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=120)
