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
