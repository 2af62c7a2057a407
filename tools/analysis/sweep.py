#!/usr/bin/env python
"""A grid over tracker and matcher settings on cached detections: one tracking run per grid point, a table of them.

    python tools/analysis/sweep.py CONFIG --det-root DIR --data-root DIR --work-dir W
        [--split protocol2/test | --videos V ...] [--grid KEY=V1,V2,... ...] [--table 19|20|21|22|23]
        [--base-options KEY=V ...] [--post-processors LIST] [--workers N] [--launcher local|ray|torchrun]
        [--preset vastmat]

Grid: each ``--grid`` axis is a dotted key of CONFIG (``model.tracker.match_thresh=0.6,0.8``) with values read as
Python literals (numbers, strings, None, True, lists, ``dict(type='CDA', alpha=0.5)``; a bare word is a string);
the runs are the Cartesian product of the axes. ``--base-options`` sets keys for every run. A key must exist in the
config or be a new argument of a component dict (``type=...``), as ``--cfg-options``; a dict value replaces the
whole entry (the old keys do not leak into it). Every key and every run's model is checked before anything runs.

Paper layouts (``--table``, for any tracker with a ``matcher``; appendix E of the VastMAT paper):
* 19: CDA fixed, alpha 0.5, CenterSim's denominator mean / min / max / enclosing;
* 20 (21: the same layout, another tracker): CDA fixed, alpha 0, 0.25, 0.5, 0.75, 1 (and W/alpha.png);
* 22: {CDA fixed, CDA adaptive} x post-processing off / on (``--post-processors``, default
  ``[dict(type='InterpolateTracks')]``; the paper's is AFLink);
* 23: CDA adaptive, k in {0.025, 0.05, 0.1} x N_ref in {5, 10, 15}, printed as a k x N_ref matrix of HOTA.
A table preset sets the matcher to the complete dict of configs/matchers/cda_fixed.py or cda_adaptive.py;
``--base-options`` then adjust it (e.g. ``"model.tracker.matcher.gate=dict(type='NormDIoUGate', thr=0.1)"``) and
``--grid`` adds axes.

Runs: W/runs/<id>/ holds results/<video>.txt, metrics.json (per video and COMBINED, TrackEval names) and
settings.json; the id is a hash of the config (path and content), the resolved options, the detection and data roots,
the videos and the evaluation preset. A run whose metrics.json exists is reused, so a sweep resumes where it stopped.
Launchers: ``local`` (``--workers`` processes), ``ray`` (remote tasks; ``RAY_ADDRESS`` set: the running cluster,
whose workers must import vastmat and see the same paths), ``torchrun`` (rank r takes runs r, r + world size, ...;
rank 0 writes the table once every rank is done: ``torchrun --nproc_per_node 2 tools/analysis/sweep.py ...``).

Outputs: W/table.csv (one row per run, ratios as fractions), W/table.json (settings and rows), the printed table
(percentages) and, when alpha varies, W/alpha.png (HOTA and AssA against alpha, IDSW on the right axis).

    python tools/analysis/sweep.py configs/bytetrack/bytetrack_cached-dets.py --table 20 --workers 2 \\
        --data-root ../shared/data/AnimalTrack-10fps-sim/gt --det-root ../shared/data/AnimalTrack-10fps-sim/dets \\
        --work-dir work_dirs/sweep_at10
"""
from __future__ import annotations

import argparse
import ast
import copy
import csv
import hashlib
import itertools
import json
import multiprocessing
import os
import os.path as osp
import sys
import time
import types
from datetime import timedelta
from typing import Any, Callable, NamedTuple

from mmengine.config import Config

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
LAUNCHERS = ('local', 'ray', 'torchrun')
TABLES = ('19', '20', '21', '22', '23')
# the paper's appendix columns (Tables 19-23): (header, TrackEval name)
COLUMNS = (('HOTA', 'HOTA'), ('DetA', 'DetA'), ('AssA', 'AssA'), ('IDF1', 'IDF1'), ('MOTA', 'MOTA'),
           ('IDSW', 'IDSW'), ('FP', 'CLR_FP'), ('FN', 'CLR_FN'))
# appendix E.2 (Table 19): alpha fixed at 0.5, only the centre-distance denominator varies
TABLE19_ALPHA = 0.5
# appendix E.3 (Tables 20 and 21, Figure 13): "as alpha increases from 0 to 1", in steps of 0.25
TABLE20_ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
# appendix E.4 (Table 23): nine (k, N_ref) configurations around the defaults k = 0.05, N_ref = 10 (the paper does
# not print the grid's values; these halve and double k and move N_ref by 5)
TABLE23_K = (0.025, 0.05, 0.1)
TABLE23_NREF = (5, 10, 15)
# Table 22's "on" setting when --post-processors is not given (the paper's is AFLink)
DEFAULT_POST_PROCESSORS = [dict(type='InterpolateTracks')]
# how long rank 0 waits at the torchrun barrier for the other ranks' runs (a whole sweep's worth: a day)
DIST_TIMEOUT_S = 24 * 3600
# printed tables' width when the output is not a terminal (rich's default there is 80: the labels would wrap)
CONSOLE_WIDTH = 140


def _user_error(message: str) -> Exception:
    from vastmat.utils.errors import UserInputError
    return UserInputError(message)


# ----------------------------------------------------------------------------------------------------- values

def _literal(node: ast.AST) -> Any:
    """A Python literal, plus ``dict(key=literal, ...)`` calls."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == 'dict' and not node.args:
        return {kw.arg: _literal(kw.value) for kw in node.keywords}
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_literal(e) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values)}
    return ast.literal_eval(node)


def parse_value(text: str) -> Any:
    """A command-line value: a Python literal (``dict(...)`` allowed), or the text itself when it is none."""
    text = text.strip()
    try:
        return _literal(ast.parse(text, mode='eval').body)
    except (SyntaxError, ValueError, TypeError):
        return text


def split_top_level(text: str) -> list[str]:
    """Split at the commas outside brackets and quotes: ``0.5,[1,2],dict(a=1)`` -> three items."""
    items, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in '\'"':
            quote = ch
        elif ch in '([{':
            depth += 1
        elif ch in ')]}':
            depth -= 1
        elif ch == ',' and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items]


def parse_assignment(text: str, flag: str) -> tuple[str, list[Any]]:
    """``KEY=V1,V2`` -> ``(KEY, [V1, V2])``."""
    key, sep, values = text.partition('=')
    key = key.strip()
    if not sep or not key or not values.strip():
        raise _user_error(f'{flag} {text!r}: expected KEY=VALUE[,VALUE...]')
    return key, [parse_value(v) for v in split_top_level(values)]


def format_value(value: Any) -> str:
    """A short label: ``0.25``, ``mean``, ``CDA(mode=fixed, alpha=0.25)``, ``[InterpolateTracks]``."""
    if isinstance(value, float):
        return f'{value:g}'
    if isinstance(value, dict):
        args = ', '.join(f'{k}={format_value(v)}' for k, v in value.items() if k != 'type')
        return f'{value["type"]}({args})' if 'type' in value else '{' + args + '}'
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(format_value(v).split('(')[0] if isinstance(v, dict) else format_value(v)
                               for v in value) + ']'
    return str(value)


# ------------------------------------------------------------------------------------------------ the grid

class Axis(NamedTuple):
    """One varied setting: a config key, its values and how the table shows them."""

    key: str
    values: list
    name: str
    labels: list[str]


def grid_axes(texts: list[str]) -> list[Axis]:
    """``--grid`` arguments as axes (a column named by the key's last part, the whole key when ambiguous)."""
    pairs = [parse_assignment(text, '--grid') for text in texts]
    keys = [key for key, _ in pairs]
    short = [key.rsplit('.', 1)[-1] for key in keys]
    axes = []
    for (key, values), name in zip(pairs, short):
        if keys.count(key) > 1:
            raise _user_error(f'--grid {key}: given twice')
        axes.append(Axis(key, values, name if short.count(name) == 1 else key, [format_value(v) for v in values]))
    return axes


def table_preset(table: str, post_processors: list) -> tuple[list[tuple[str, Any]], list[Axis], str]:
    """The fixed options, the axes and a caption of one of the paper's appendix layouts."""
    from vastmat.apis import matcher_fragment
    from vastmat.models.association.matchers import CENTER_DENOMINATORS
    fixed, adaptive = matcher_fragment('cda_fixed'), matcher_fragment('cda_adaptive')
    key = 'model.tracker.matcher'
    if table == '19':
        return ([(key, matcher_fragment('cda_fixed', alpha=TABLE19_ALPHA))],
                [Axis(f'{key}.center_denominator', list(CENTER_DENOMINATORS), 'denominator',
                      list(CENTER_DENOMINATORS))],
                f'Table 19 layout: CDA fixed, alpha {TABLE19_ALPHA:g}, centre-distance denominator')
    if table in ('20', '21'):
        return ([(key, fixed)], [Axis(f'{key}.alpha', list(TABLE20_ALPHAS), 'alpha',
                                      [format_value(a) for a in TABLE20_ALPHAS])],
                f'Table {table} layout: CDA fixed, fusion weight alpha')
    if table == '22':
        post_label = 'on (' + ', '.join(p.get('type', '?') for p in post_processors) + ')'
        return ([], [Axis(key, [fixed, adaptive], 'CDA', ['fixed', 'adaptive']),
                     Axis('model.post_processors', [[], post_processors], 'post-processing', ['off', post_label])],
                'Table 22 layout: CDA fixed / adaptive, post-processing off / on')
    if table == '23':
        return ([(key, adaptive)], [Axis(f'{key}.k', list(TABLE23_K), 'k', [format_value(k) for k in TABLE23_K]),
                                    Axis(f'{key}.n_ref', list(TABLE23_NREF), 'N_ref',
                                         [format_value(n) for n in TABLE23_NREF])],
                'Table 23 layout: adaptive CDA, slope k x reference count N_ref')
    raise _user_error(f'--table {table}: one of {", ".join(TABLES)}')


def resolve_options(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Options given in order as one canonical, sorted dict: a key set under an earlier dict value is folded into
    it, a key set again replaces what was set under it (so equal settings give equal options, hence one run id)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        value = copy.deepcopy(value)
        parent = next((p for p in out if key.startswith(p + '.') and isinstance(out[p], dict)), None)
        if parent is not None and _set_nested(out[parent], key[len(parent) + 1:].split('.'), value):
            continue
        for below in [p for p in out if p.startswith(key + '.')]:
            del out[below]
        out[key] = value
    return dict(sorted(out.items()))


def _set_nested(node: dict, parts: list[str], value: Any) -> bool:
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            return False
        node = node[part]
    node[parts[-1]] = value
    return True


def apply_options(cfg: Config, options: dict[str, Any], flags: dict[str, str] | None = None) -> Config:
    """Set ``options`` in ``cfg`` in order, each key checked first (a dict value replaces the whole entry).

    Args:
        flags: the command-line flag that gave each key, named in the error of an unknown key.
    """
    from vastmat.engine.cli import ConfigKeyError, check_cfg_options
    for key, value in options.items():
        try:
            check_cfg_options(cfg, {key: value})
        except ConfigKeyError as exc:
            flag = (flags or {}).get(key, '--cfg-options')
            raise ConfigKeyError(str(exc).replace('--cfg-options', flag, 1)) from None
        value = copy.deepcopy(value)
        cfg.merge_from_dict({key: dict(value, _delete_=True) if isinstance(value, dict) else value})
    return cfg


def build_config(config: str, options: dict[str, Any], flags: dict[str, str] | None = None) -> Config:
    from vastmat.plugins import adjust_config  # as tools/test.py: options first, then the plugins' adjustments
    return adjust_config(apply_options(Config.fromfile(config), options, flags))


# ------------------------------------------------------------------------------------------------------ runs

def run_id(settings: dict) -> str:
    """A short stable hash of what makes a run (config path and content, options, roots, videos, preset)."""
    text = json.dumps(settings, sort_keys=True, default=repr)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _config_path(config: str) -> str:
    path = osp.realpath(config)
    return osp.relpath(path, REPO) if path.startswith(REPO + os.sep) else path


def make_runs(args: argparse.Namespace, fixed: list[tuple[str, Any]], axes: list[Axis], videos: list[str],
              work_dir: str) -> list[dict]:
    """One run spec (a plain dict, sent to the workers) per grid point, in grid order."""
    runs = []
    # the config's content (its _base_ files resolved) is part of a run's identity: an edited config is rerun
    content = json.dumps(Config.fromfile(args.config).to_dict(), sort_keys=True, default=repr)
    config_sha = hashlib.sha1(content.encode()).hexdigest()[:12]
    for point in itertools.product(*(range(len(axis.values)) for axis in axes)):
        pairs = fixed + [(axis.key, axis.values[i]) for axis, i in zip(axes, point)]
        identity = dict(config=_config_path(args.config), config_sha=config_sha, options=resolve_options(pairs),
                        det_root=osp.realpath(args.det_root), data_root=osp.realpath(args.data_root),
                        videos=list(videos), preset=args.preset)
        rid = run_id(identity)
        params = {axis.name: axis.labels[i] for axis, i in zip(axes, point)}
        runs.append(dict(identity, id=rid, params=params, values={a.key: a.values[i] for a, i in zip(axes, point)},
                         label=', '.join(params.values()) or 'base', config_file=osp.abspath(args.config),
                         run_dir=osp.join(osp.abspath(work_dir), 'runs', rid)))
    ids = [run['id'] for run in runs]
    if len(set(ids)) != len(ids):
        raise _user_error('two grid points resolve to the same settings (a value given twice?)')
    return runs


def check_runs(runs: list[dict], flags: dict[str, str]) -> None:
    """Every run's config (its keys) and model (its components' arguments) build, before anything runs."""
    from vastmat.apis import init_model
    for run in runs:
        cfg = build_config(run['config_file'], run['options'], flags)
        try:
            init_model(cfg, detector=False)
        except (TypeError, ValueError, KeyError) as exc:
            point = ', '.join(f'{k}={format_value(v)}' for k, v in run['values'].items()) or 'the base settings'
            raise _user_error(f'the model of the run {point} does not build: {exc}') from exc


def is_done(run: dict) -> bool:
    return osp.isfile(osp.join(run['run_dir'], 'metrics.json'))


def _settings(run: dict, **extra: Any) -> dict:
    keys = ('id', 'config', 'options', 'params', 'det_root', 'data_root', 'videos', 'preset')
    return dict({k: run[k] for k in keys}, **extra)


def execute_run(run: dict) -> dict:
    """Track and score one grid point; writes its folder, metrics.json last. Returns its id, COMBINED HOTA and
    seconds."""
    from vastmat.apis import init_model, track_and_score
    from vastmat.utils.io import write_json_atomic
    start = time.perf_counter()
    cfg = build_config(run['config_file'], run['options'])
    launcher = dict(rank=int(os.environ.get('RANK', 0)), pid=os.getpid())
    write_json_atomic(_settings(run, model=cfg.model.to_dict(), **launcher), osp.join(run['run_dir'], 'settings.json'))
    # metrics.json (written by track_and_score) marks a finished run; settings.json gets the timings after it
    metrics, tracking = track_and_score(init_model(cfg, detector=False), run['data_root'], run['det_root'],
                                        run['videos'], run['run_dir'], run['preset'])
    seconds = dict(tracking=tracking, total=time.perf_counter() - start)
    write_json_atomic(_settings(run, model=cfg.model.to_dict(), seconds=seconds, **launcher),
                      osp.join(run['run_dir'], 'settings.json'))
    return dict(id=run['id'], HOTA=metrics['COMBINED']['HOTA'], seconds=seconds['total'])


# ------------------------------------------------------------------------------------------------- launchers

def _worker_init() -> None:
    """One thread per worker process: the workers already fill the cores."""
    import torch
    torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass


def _importable() -> Any:
    """This file's module as ``sys.modules`` has it, so that pickle finds :func:`execute_run` by name. Loaded by
    path without being registered (the tests' in-process tool runner), it is registered as a module holding the
    same objects."""
    if __name__ not in sys.modules:
        module = types.ModuleType(__name__)
        module.__dict__.update(globals())
        sys.modules[__name__] = module
    return sys.modules[__name__]


def _failed(run: dict, exc: BaseException) -> BaseException:
    exc.add_note(f'in sweep run {run["id"]} ({run["label"]}), folder {run["run_dir"]}')
    return exc


def run_local(todo: list[dict], workers: int, done: Callable[[dict, dict], None],
              started: Callable[[], Any] = lambda: None) -> None:
    """``todo`` in this process (one worker) or a process pool; ``started()`` once the workers exist,
    ``done(run, result)`` after each run."""
    if workers <= 1 or len(todo) <= 1:
        started()
        for run in todo:
            try:
                done(run, execute_run(run))
            except Exception as exc:
                raise _failed(run, exc)
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed
    _importable()
    # fork: the workers inherit the imports and this module (which a fresh interpreter may not find by name)
    method = 'fork' if 'fork' in multiprocessing.get_all_start_methods() else None
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=context,
                             initializer=_worker_init) as pool:
        futures = {pool.submit(execute_run, run): run for run in todo}
        started()
        for future in as_completed(futures):
            run = futures[future]
            try:
                result = future.result()
            except Exception as exc:
                pool.shutdown(wait=True, cancel_futures=True)
                raise _failed(run, exc)
            done(run, result)


def run_ray(todo: list[dict], workers: int, done: Callable[[dict, dict], None],
            started: Callable[[], Any] = lambda: None) -> None:
    """``todo`` as ray remote tasks: on the cluster of ``RAY_ADDRESS`` if set, else a local ray with ``workers``
    CPUs."""
    ray = import_ray()
    if not ray.is_initialized():
        if os.environ.get('RAY_ADDRESS'):
            ray.init(address='auto')
        else:
            ray.init(num_cpus=max(workers, 1))
    if __name__ != '__main__':  # loaded by path (tests, other tools): the workers get the functions by value
        try:
            from ray import cloudpickle
            cloudpickle.register_pickle_by_value(_importable())
        except (ImportError, AttributeError, ValueError):
            pass
    remote = ray.remote(num_cpus=1)(execute_run)
    pending = {remote.remote(run): run for run in todo}
    started()
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        run = pending.pop(ready[0])
        try:
            result = ray.get(ready[0])
        except Exception as exc:
            for ref in pending:
                ray.cancel(ref)
            raise _failed(run, exc)
        done(run, result)


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise _user_error('--launcher ray: ray is not installed (pip install ray)') from None
    return ray


def rank_share(num_runs: int, rank: int, world_size: int) -> list[int]:
    """The run indices of one rank: ``rank, rank + world_size, ...`` (disjoint, together all of them)."""
    if not 0 <= rank < world_size:
        raise ValueError(f'rank {rank} is not in [0, {world_size})')
    return list(range(rank, num_runs, world_size))


def torchrun_env() -> tuple[int, int]:
    """``(rank, world_size)`` from torchrun's environment."""
    try:
        rank, world_size = int(os.environ['RANK']), int(os.environ['WORLD_SIZE'])
    except (KeyError, ValueError):
        raise _user_error('--launcher torchrun: RANK and WORLD_SIZE are not set; start the sweep with '
                          'torchrun --nproc_per_node N tools/analysis/sweep.py ...') from None
    if not 0 <= rank < world_size:
        raise _user_error(f'--launcher torchrun: RANK={rank} is not in [0, WORLD_SIZE={world_size})')
    return rank, world_size


def torchrun_barrier(world_size: int, timeout_s: float) -> None:
    """Wait for every rank (gloo, torchrun's MASTER_ADDR / MASTER_PORT)."""
    if world_size <= 1:
        return
    import torch.distributed as dist
    if not all(os.environ.get(k) for k in ('MASTER_ADDR', 'MASTER_PORT')):
        raise _user_error('--launcher torchrun: MASTER_ADDR and MASTER_PORT are not set (torchrun sets them)')
    if not dist.is_initialized():
        dist.init_process_group('gloo', timeout=timedelta(seconds=timeout_s))
    dist.barrier()
    dist.destroy_process_group()


# --------------------------------------------------------------------------------------------------- outputs

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


def title_of(args: argparse.Namespace, cfg: Config, caption: str, fixed: dict, axes: list[Axis],
             num_videos: int) -> str:
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
    return '\n'.join([f'{short_title(args, cfg)} on {num_videos} video(s) of {args.data_root}, preset {args.preset}',
                      caption or ('varied: ' + ', '.join(axis.key for axis in axes) if axes else 'one run'),
                      'shared: ' + ', '.join(shared)])


def short_title(args: argparse.Namespace, cfg: Config) -> str:
    return f'{cfg.model.get("tracker", {}).get("type", cfg.model.get("type"))} ({osp.basename(args.config)})'


def print_tables(rows: list[dict], axes: list[Axis], title: str, matrix_only: bool) -> None:
    """The long table (best two of each column marked) and, for two axes, the HOTA matrix."""
    from rich.console import Console

    from vastmat.evaluation.report import ranked_table
    console = Console()
    if not console.is_terminal:  # a log file or a pipe: wide enough for the labels, whatever $COLUMNS says
        console = Console(width=max(console.width, CONSOLE_WIDTH))
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
    """HOTA (%) with the first axis down and the second across."""
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
    from vastmat.utils.io import atomic_write
    with atomic_write(path) as f:
        writer = csv.writer(f)
        writer.writerow([axis.name for axis in axes] + [header for header, _ in COLUMNS] + ['run_id'])
        for row in rows:
            writer.writerow([row['params'][axis.name] for axis in axes]
                            + [row['metrics'][key] for _, key in COLUMNS] + [row['id']])


def alpha_axis(axes: list[Axis]) -> Axis | None:
    return next((axis for axis in axes if axis.key.endswith('.alpha')
                 and all(isinstance(v, (int, float)) for v in axis.values)), None)


def plot_alpha(rows: list[dict], runs: list[dict], axes: list[Axis], path: str, title: str) -> None:
    """HOTA and AssA (%, left) and IDSW (right) against alpha; one set of lines per setting of the other axes."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from vastmat.utils.io import save_figure_atomic
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


# ------------------------------------------------------------------------------------------------------ main

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from vastmat.evaluation.mot_eval import PRESETS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('config', help='a tracking config (model.type TrackingByDetection)')
    parser.add_argument('--det-root', required=True, help='cached detections: DIR/<video>.txt or '
                        'DIR/<video>/det/det.txt')
    parser.add_argument('--data-root', required=True, help='a VastMAT root or a MOTChallenge split folder')
    videos = parser.add_mutually_exclusive_group()
    videos.add_argument('--split', help='the videos of PROTOCOL/SPLIT of a VastMAT root, e.g. protocol2/test '
                        '(default: all videos of --data-root)')
    videos.add_argument('--videos', nargs='+', help='only these videos')
    parser.add_argument('--work-dir', required=True)
    parser.add_argument('--grid', nargs='+', action='extend', default=[], metavar='KEY=V1,V2', help='an axis of the grid')
    parser.add_argument('--table', choices=TABLES, help="one of the paper's appendix layouts")
    parser.add_argument('--base-options', nargs='+', action='extend', default=[], metavar='KEY=V', help='set for every run')
    parser.add_argument('--post-processors', type=parse_value, default=None, metavar='LIST',
                        help="--table 22's post-processing, e.g. \"[dict(type='InterpolateTracks')]\"")
    parser.add_argument('--workers', type=int, default=1, help='runs at the same time (local and ray)')
    parser.add_argument('--launcher', choices=LAUNCHERS, default='local')
    parser.add_argument('--preset', choices=PRESETS, default='vastmat', help='evaluation preset')
    parser.add_argument('--dist-timeout', type=float, default=DIST_TIMEOUT_S,
                        help='torchrun: seconds to wait for the other ranks')
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error('--workers must be at least 1')
    return args


def base_options(texts: list[str]) -> list[tuple[str, Any]]:
    out = []
    for text in texts:
        key, values = parse_assignment(text, '--base-options')
        out.append((key, values[0] if len(values) == 1 else values))
    return out


def post_processors(value: Any) -> list:
    if value is None:
        return copy.deepcopy(DEFAULT_POST_PROCESSORS)
    value = [value] if isinstance(value, dict) else value
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, dict) and 'type' in v for v in value):
        raise _user_error(f'--post-processors {value!r}: expected a list of dict(type=...)')
    return list(value)


def resolve_videos(args: argparse.Namespace) -> list[str]:
    """The videos, each with its detections (checked here, before anything runs)."""
    from vastmat.apis import video_list
    from vastmat.datasets.detections import detection_file
    if not osp.isdir(args.data_root):
        raise FileNotFoundError(f'{args.data_root}: no such data root')
    try:
        videos = video_list(args.data_root, args.split, args.videos)
    except ValueError as exc:
        raise _user_error(f'--split {args.split}: {exc}') from None
    for video in videos:
        detection_file(args.det_root, video)
    return videos


class Plan(NamedTuple):
    """What a sweep runs: the options every run shares, the axes, and the flag that gave each key."""

    fixed: list[tuple[str, Any]]
    axes: list[Axis]
    caption: str
    flags: dict[str, str]


def make_plan(args: argparse.Namespace) -> Plan:
    """The table preset (if any), then ``--base-options``, then the ``--grid`` axes."""
    fixed: list[tuple[str, Any]] = []
    axes: list[Axis] = []
    caption = ''
    table_flag = f'--table {args.table}'
    if args.table:
        if not isinstance(Config.fromfile(args.config).model.get('tracker', {}).get('matcher'), dict):
            raise _user_error(f'{table_flag}: {args.config} has no model.tracker.matcher to set')
        fixed, axes, caption = table_preset(args.table, post_processors(args.post_processors))
    flags = {key: table_flag for key, _ in fixed} | {axis.key: table_flag for axis in axes}
    given = base_options(args.base_options)
    grid = grid_axes(args.grid)
    flags |= {key: '--base-options' for key, _ in given} | {axis.key: '--grid' for axis in grid}
    axes = axes + grid
    keys = [axis.key for axis in axes]
    names = [axis.name for axis in axes]
    if len(set(keys)) != len(keys) or len(set(names)) != len(names):
        raise _user_error(f'an axis is given twice ({", ".join(keys)}): a --table preset already varies its keys')
    return Plan(fixed + given, axes, caption, flags)


def main(argv: list[str] | None = None) -> dict:
    """Run the sweep; returns its rows, the table (as in W/table.json), how many runs were computed and reused,
    and the seconds it took (rows and table are None on the other ranks of a torchrun)."""
    start = time.perf_counter()
    args = parse_args(argv)
    if args.launcher == 'ray':
        import_ray()
    plan = make_plan(args)
    videos = resolve_videos(args)
    runs = make_runs(args, plan.fixed, plan.axes, videos, args.work_dir)
    check_runs(runs, plan.flags)

    rank, world_size = torchrun_env() if args.launcher == 'torchrun' else (0, 1)
    mine = [runs[i] for i in rank_share(len(runs), rank, world_size)]
    todo = [run for run in mine if not is_done(run)]
    where = f'rank {rank}/{world_size}: ' if world_size > 1 else ''
    print(f'{where}{len(mine) - len(todo)} runs done before, {len(todo)} to run '
          f'({len(runs)} in the grid, {len(videos)} video(s) each)', flush=True)
    execute_todo(todo, args)
    if args.launcher == 'torchrun':
        torchrun_barrier(world_size, args.dist_timeout)
    result = dict(computed=len(todo), reused=len(mine) - len(todo), rank=rank, world_size=world_size)
    if rank != 0:
        return dict(result, rows=None, table=None, seconds=time.perf_counter() - start)
    rows, table = make_table(args, plan, runs, videos)
    print_tables(rows, plan.axes, table['title'], matrix_only=args.table == '23')
    return dict(result, rows=rows, table=table, seconds=time.perf_counter() - start)


def make_table(args: argparse.Namespace, plan: Plan, runs: list[dict], videos: list[str]) -> tuple[list, dict]:
    """The rows of the finished runs and the table (settings, title, rows), written to W/table.{csv,json} and,
    when alpha varies, W/alpha.png."""
    from vastmat.utils.io import write_json_atomic
    rows = read_rows(runs)
    fixed = resolve_options(plan.fixed)
    first = build_config(runs[0]['config_file'], runs[0]['options'])
    settings = dict(config=args.config, caption=plan.caption, fixed=fixed,
                    axes=[dict(key=a.key, name=a.name, labels=a.labels, values=a.values) for a in plan.axes],
                    det_root=args.det_root, data_root=args.data_root, videos=videos, preset=args.preset,
                    table=args.table)
    title = title_of(args, first, plan.caption, fixed, plan.axes, len(videos))
    table = dict(settings=settings, title=title, columns=[key for _, key in COLUMNS], rows=rows)
    write_csv(rows, plan.axes, osp.join(args.work_dir, 'table.csv'))
    write_json_atomic(table, osp.join(args.work_dir, 'table.json'))
    if alpha_axis(plan.axes) is not None:
        plot_alpha(rows, runs, plan.axes, osp.join(args.work_dir, 'alpha.png'),
                   f'{short_title(args, first)}, {len(videos)} video(s)')
    return rows, table


def execute_todo(todo: list[dict], args: argparse.Namespace) -> None:
    """The runs still to do, with a progress bar over runs."""
    if not todo:
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    launch = run_ray if args.launcher == 'ray' else run_local
    progress = Progress(TextColumn('{task.description}'), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    task = progress.add_task('sweep runs', total=len(todo))

    def done(run: dict, result: dict) -> None:
        progress.console.print(f'  {run["label"]}: HOTA {100 * result["HOTA"]:.3f} in {result["seconds"]:.1f} s '
                               f'({run["id"]})')
        progress.advance(task)

    try:  # the display starts once the launcher has its workers (a local pool forks before the display's thread)
        launch(todo, args.workers, done, progress.start)
    finally:
        progress.stop()


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
