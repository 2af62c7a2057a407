"""Printing evaluation results as tables (percentages for ratios, integers for counts)."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .mot_eval import COUNT_KEYS

TABLE_COLUMNS = (('HOTA', 'HOTA'), ('DetA', 'DetA'), ('AssA', 'AssA'), ('LocA', 'LocA'), ('MOTA', 'MOTA'),
                 ('MOTP', 'MOTP'), ('IDF1', 'IDF1'), ('IDP', 'IDP'), ('IDR', 'IDR'), ('MT', 'MT'), ('PT', 'PT'),
                 ('ML', 'ML'), ('FP', 'CLR_FP'), ('FN', 'CLR_FN'), ('IDSW', 'IDSW'), ('Frag', 'Frag'))


def format_value(key: str, value: float) -> str:
    return f'{int(value):,}' if key in COUNT_KEYS else f'{100 * value:.3f}'


def print_tracking_table(results: dict, title: str, rows: list[str] | None = None) -> None:
    """One row per video (or the given rows) and COMBINED last."""
    table = Table(title=title)
    table.add_column('video')
    for label, _ in TABLE_COLUMNS:
        table.add_column(label, justify='right')
    names = rows if rows is not None else [k for k in results if k != 'COMBINED'] + ['COMBINED']
    for name in names:
        table.add_row(name, *(format_value(key, results[name][key]) for _, key in TABLE_COLUMNS))
    Console().print(table)


# lower is better for these metrics (the rest: higher is better)
LOWER_IS_BETTER = {'CLR_FP', 'CLR_FN', 'IDSW', 'Frag', 'ML', 'IDFP', 'IDFN'}


def rank_values(values: dict[str, float], metric: str) -> dict[str, int]:
    """1-based rank of each row for one metric (ties share the better rank)."""
    ordered = sorted(set(values.values()), reverse=metric not in LOWER_IS_BETTER)
    return {row: ordered.index(v) + 1 for row, v in values.items()}


def ranked_table(rows: dict[str, dict[str, float]], columns: list[tuple[str, str, str]], title: str,
                 row_label: str = 'run') -> tuple[Table, dict[str, dict[str, int]]]:
    """A table in the paper's layout (Table 5: best value of each column bold, second underlined).

    Args:
        rows: ``{row name: {column key: value}}``.
        columns: ``(column key, header, metric)``; ``metric`` (TrackEval's name) gives the format and whether lower
            is better.
    Returns:
        The rich table and ``{column key: {row: rank}}``.
    """
    names = list(rows)
    ranks = {key: rank_values({n: rows[n][key] for n in names}, metric) for key, _, metric in columns}
    table = Table(title=f'{title}\nbold = best, underlined = second')
    table.add_column(row_label)
    for _, header, metric in columns:
        table.add_column(header + (' ↓' if metric in LOWER_IS_BETTER else ''), justify='right')
    for name in names:
        cells = []
        for key, _, metric in columns:
            text = format_value(metric, rows[name][key])
            rank = ranks[key][name]
            cells.append(f'[bold]{text}[/bold]' if rank == 1 else f'[underline]{text}[/underline]' if rank == 2
                         else text)
        table.add_row(name, *cells)
    return table, ranks


def write_ranked_csv(rows: dict[str, dict[str, float]], ranks: dict[str, dict[str, int]], keys: list[str],
                     path: str, row_label: str = 'run') -> None:
    """The values of a :func:`ranked_table` and their ranks as CSV (written atomically)."""
    import csv

    from vastmat.utils.io import atomic_write
    with atomic_write(path) as f:
        writer = csv.writer(f)
        writer.writerow([row_label, *keys, *(f'{k}_rank' for k in keys)])
        for name in rows:
            writer.writerow([name, *(rows[name][k] for k in keys), *(ranks[k][name] for k in keys)])
