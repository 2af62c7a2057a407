"""What a report shows, read from work dirs: the zoo's (``zoo.json``), a ``tools/test.py`` run's (``metrics.json``
and ``metrics_per_video.json``), a sweep's (``table.csv``) or a tune run's (``tune.json``); the last two keep each
run under ``runs/<id>/`` (``metrics.json``, ``settings.json``, ``results/``)."""
from __future__ import annotations

import csv
import glob
import json
import os.path as osp
from dataclasses import dataclass, field
from datetime import datetime, timezone

from vastmat.utils.errors import UserInputError
from vastmat.utils.provenance import file_sha256

PROTOCOL_LABEL = dict(protocol1='P1', protocol2='P2')
NOT_VIDEOS = ('COMBINED', 'seconds')


@dataclass
class Run:
    """One tracker's (or setting's) tracking of a set of videos."""

    label: str
    group: str  # runs of one group tracked the same videos (a protocol, a sweep): one heat map
    per_video: dict[str, dict]  # video -> flat TrackEval metrics
    results_dir: str | None = None  # <video>.txt files
    data_root: str | None = None
    seconds: float | None = None
    in_clips: bool = True  # drawn in the clips (the zoo: a tracker's own association, not each matcher's)


@dataclass
class Table:
    """A table of the page: ``rows`` of ``(label, {column: value})``; values are numbers or text."""

    title: str
    columns: list[str]
    rows: list[tuple[str, dict]]
    csv_path: str | None = None  # the CSV file it shows, when there is one


@dataclass
class Source:
    """Everything read from one work dir."""

    path: str
    kind: str  # 'zoo', 'test', 'sweep', 'tune'
    runs: list[Run] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    training: dict[str, dict] = field(default_factory=dict)  # run label -> dict(minutes, HOTA)
    provenance: list[tuple[str, str]] = field(default_factory=list)  # (what, value) rows


def _read_json(path: str) -> dict:
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except json.JSONDecodeError as exc:
        raise UserInputError(f'{path}: not valid JSON ({exc})') from None


def _per_video(metrics: dict) -> dict[str, dict]:
    return {video: values for video, values in metrics.items() if video not in NOT_VIDEOS}


def _mtime(path: str) -> str:
    return datetime.fromtimestamp(osp.getmtime(path), timezone.utc).replace(microsecond=0).isoformat()


def _config_row(what: str, config: str | None) -> tuple[str, str]:
    return what, f'{config} (sha256 {file_sha256(config) or "file absent"})' if config else '-'


def _csv_table(path: str, title: str) -> Table:
    with open(path, encoding='utf-8', newline='') as f:
        rows = list(csv.reader(f))
    if not rows:
        raise UserInputError(f'{path}: empty CSV')
    header, body = rows[0], rows[1:]
    return Table(title, header[1:], [(row[0], dict(zip(header[1:], row[1:]))) for row in body], csv_path=path)


def _zoo_table(title: str, rows: dict, csv_path: str) -> Table:
    """A zoo table from zoo.json's ``rows``, in its CSV's column order (the paper's) with the CSV's ranks beside the
    values (``<column>_rank``: bold for the best, underlined for the second); as zoo.json keeps them without a CSV."""
    columns, ranks = list(next(iter(rows.values()))), {}
    if osp.isfile(csv_path):
        with open(csv_path, encoding='utf-8', newline='') as f:
            reader = csv.DictReader(f)
            in_order = [c for c in reader.fieldnames[1:] if not c.endswith('_rank')]
            ranks = {row[reader.fieldnames[0]]: {k: v for k, v in row.items() if k.endswith('_rank')}
                     for row in reader}
        if set(in_order) == set(columns):
            columns = in_order
    return Table(title, columns, [(label, dict(values, **ranks.get(label, {}))) for label, values in rows.items()],
                 csv_path)


def _load_zoo(path: str) -> Source:
    zoo = _read_json(osp.join(path, 'zoo.json'))
    settings = zoo.get('settings', {})
    protocols = settings.get('protocols') or list(zoo.get('runs', {}))
    source = Source(path, 'zoo')
    if zoo.get('table5'):
        source.tables.append(_zoo_table('Table 5 layout: trackers with their original association', zoo['table5'],
                                        osp.join(path, 'table5.csv')))
    for protocol in protocols:
        label = PROTOCOL_LABEL.get(protocol, protocol)
        suffix = '' if len(protocols) == 1 else f'_{protocol}'
        rows8 = zoo.get('table8', {}).get(protocol)
        if rows8:
            source.tables.append(_zoo_table(f'Table 8 layout: trackers x matchers, {label}', rows8,
                                            osp.join(path, f'table8{suffix}.csv')))
        results_dirs = zoo.get('results_dirs', {}).get(protocol, {})
        for key, metrics in zoo.get('runs', {}).get(protocol, {}).items():
            tracker, matcher = key.split('/', 1)
            run_label = tracker if matcher == 'original' else f'{tracker} + {matcher}'
            source.runs.append(Run(run_label, label, _per_video(metrics), results_dirs.get(key),
                                   settings.get('data_root'), metrics.get('seconds'), in_clips=matcher == 'original'))
        for tracker, row in zoo.get('training', {}).get(protocol, {}).items():
            if row.get('minutes') == row.get('minutes') and row.get('minutes') is not None:
                source.training[f'{label} {tracker}'] = dict(minutes=row['minutes'], HOTA=row['HOTA'],
                                                             learned=row.get('learned'))
            source.provenance.append(_config_row(f'{label} {tracker}: config ({row.get("learned")})',
                                                 row.get('config')))
            source.provenance.append((f'{label} {tracker}: checkpoint', row.get('checkpoint') or '-'))
    provenance = zoo.get('provenance', {})
    source.provenance[:0] = [('kind', 'zoo benchmark (tools/zoo_benchmark.py)'),
                             ('commit', provenance.get('commit') or 'unknown'),
                             ('date', provenance.get('date') or _mtime(osp.join(path, 'zoo.json'))),
                             ('settings', json.dumps(settings, sort_keys=True))]
    return source


def _load_test(path: str) -> Source:
    from mmengine.config import Config
    per_video_files = sorted(glob.glob(osp.join(path, '**', 'metrics_per_video.json'), recursive=True))
    if not per_video_files:
        raise UserInputError(f'{path}: a tools/test.py work dir without metrics_per_video.json (set '
                             'test_evaluator.outfile_dir inside the work dir to keep the per-video results)')
    configs = sorted(glob.glob(osp.join(path, '*.py')))
    cfg = Config.fromfile(configs[0]) if configs else None
    name = osp.splitext(osp.basename(configs[0]))[0] if configs else osp.basename(osp.normpath(path))
    data_root = cfg.test_dataloader.dataset.get('data_root') if cfg is not None else None
    source = Source(path, 'test')
    for per_video_file in per_video_files:
        label = name if len(per_video_files) == 1 else f'{name} ({osp.relpath(osp.dirname(per_video_file), path)})'
        results = osp.join(osp.dirname(per_video_file), 'results')
        source.runs.append(Run(label, name, _per_video(_read_json(per_video_file)),
                               results if osp.isdir(results) else None, data_root))
    source.provenance = [('kind', 'tools/test.py run'), _config_row('config', configs[0] if configs else None),
                         ('checkpoint', (cfg.get('load_from') if cfg is not None else None) or '-'),
                         ('date', _mtime(per_video_files[0]))]
    return source


def _load_runs_folder(path: str, kind: str) -> Source:
    """A sweep's or tune run's ``runs/<id>/`` folders: one run each."""
    source = Source(path, kind)
    for metrics_path in sorted(glob.glob(osp.join(path, 'runs', '*', 'metrics.json'))):
        folder = osp.dirname(metrics_path)
        settings_path = osp.join(folder, 'settings.json')
        settings = _read_json(settings_path) if osp.isfile(settings_path) else {}
        params = settings.get('params') or {}
        label = ', '.join(f'{k}={v}' for k, v in params.items()) or osp.basename(folder)
        seconds = (settings.get('seconds') or {}).get('total')
        source.runs.append(Run(label, osp.basename(osp.normpath(path)), _per_video(_read_json(metrics_path)),
                               osp.join(folder, 'results'), settings.get('data_root'), seconds))
    return source


def _load_sweep(path: str) -> Source:
    source = _load_runs_folder(path, 'sweep')
    source.tables.append(_csv_table(osp.join(path, 'table.csv'), f'Sweep {osp.basename(osp.normpath(path))}'))
    source.provenance = [('kind', 'sweep (tools/analysis/sweep.py)'), ('date', _mtime(osp.join(path, 'table.csv')))]
    return source


def _load_tune(path: str) -> Source:
    source = _load_runs_folder(path, 'tune')
    tune = _read_json(osp.join(path, 'tune.json'))
    if osp.isfile(osp.join(path, 'trials.csv')):
        source.tables.append(_csv_table(osp.join(path, 'trials.csv'), f'Tuning trials {osp.basename(path)}'))
    source.provenance = [('kind', 'tuning (tools/tune.py)'), ('date', _mtime(osp.join(path, 'tune.json')))]
    source.provenance += [(key, str(value)) for key, value in sorted(tune.items())
                          if isinstance(value, (str, int, float)) and not isinstance(value, bool)]
    return source


LOADERS = (('zoo.json', _load_zoo), ('tune.json', _load_tune), ('table.csv', _load_sweep),
           ('metrics.json', _load_test))


def load_source(path: str) -> Source:
    """The runs, tables and provenance of one work dir.

    Raises:
        UserInputError: ``path`` is not a folder, or not a work dir of the zoo, a sweep, a tune run or
            tools/test.py.
    """
    if not osp.isdir(path):
        raise UserInputError(f'{path}: no such work dir')
    for marker, loader in LOADERS:
        if osp.isfile(osp.join(path, marker)):
            return loader(path)
    raise UserInputError(f'{path}: not a work dir of the zoo, a sweep, a tune run or tools/test.py (none of '
                         f'{", ".join(marker for marker, _ in LOADERS)} in it)')
