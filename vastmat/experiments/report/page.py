"""The report's HTML: one self-contained page (Plotly's JavaScript, the styles, the data and the thumbnails inline;
no network request). Hand-written JavaScript is kept to three small handlers: sorting a table by a clicked column,
the clips' frame slider, and opening a video's rows from a click on the heat map."""
from __future__ import annotations

import html
import json
from typing import Any

from vastmat.evaluation.mot_eval import COUNT_KEYS
from vastmat.evaluation.report import format_value

from .clips import Clip
from .sources import Run, Table

VIDEO_COLUMNS = (('HOTA', 'HOTA'), ('DetA', 'DetA'), ('AssA', 'AssA'), ('IDF1', 'IDF1'), ('IDSW', 'IDSW'),
                 ('FP', 'CLR_FP'), ('FN', 'CLR_FN'))
# TrackEval's ratios, shown in percent as the terminal tables show them
PERCENT_KEYS = {'HOTA', 'DetA', 'AssA', 'LocA', 'DetRe', 'DetPr', 'AssRe', 'AssPr', 'OWTA', 'MOTA', 'MOTP', 'MODA',
                'MOTAL', 'sMOTA', 'CLR_Re', 'CLR_Pr', 'CLR_F1', 'MTR', 'PTR', 'MLR', 'IDF1', 'IDP', 'IDR'}

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1400px; padding: 0 16px 40px; color: #222; }
h1 { margin: 18px 0 4px; } h2 { margin-top: 32px; border-bottom: 1px solid #ddd; } nav a { margin-right: 12px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 8px; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
table.sortable th { cursor: pointer; background: #f4f4f4; user-select: none; }
th[data-order="asc"]::after { content: " \\25B2"; } th[data-order="desc"]::after { content: " \\25BC"; }
td.best { font-weight: bold; } td.second { text-decoration: underline; }
details { margin: 2px 0; } summary { cursor: pointer; } .videos { columns: 3 360px; }
.clip { margin: 12px 0 28px; } .clip .row { display: flex; flex-wrap: wrap; gap: 8px; }
.clip figure { margin: 0; } .clip figcaption { font-size: 12px; text-align: center; }
.clip input[type=range] { width: 480px; } .wide { overflow-x: auto; }
.provenance td { text-align: left; white-space: normal; }
"""

SCRIPT = """
function sortTable(th) {
  const table = th.closest('table'), body = table.tBodies[0], index = th.cellIndex;
  const ascending = th.dataset.order !== 'asc';
  table.querySelectorAll('th').forEach(h => delete h.dataset.order);
  th.dataset.order = ascending ? 'asc' : 'desc';
  const key = row => { const cell = row.cells[index], value = cell.dataset.value ?? cell.textContent;
                       const number = parseFloat(value); return isNaN(number) ? value : number; };
  const rows = Array.from(body.rows);
  rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1); });
  rows.forEach(row => body.appendChild(row));
}
document.querySelectorAll('table.sortable th').forEach(th => th.addEventListener('click', () => sortTable(th)));
const CLIPS = JSON.parse(document.getElementById('clip-data').textContent);
document.querySelectorAll('.clip input[type=range]').forEach(slider => slider.addEventListener('input', () => {
  const clip = CLIPS[slider.dataset.clip], k = Number(slider.value), box = slider.closest('.clip');
  box.querySelectorAll('img').forEach(img => { img.src = clip.images[img.dataset.run][k]; });
  box.querySelector('.frame').textContent = clip.frames[k];
}));
window.addEventListener('load', () => document.querySelectorAll('.heatmap .plotly-graph-div').forEach(div =>
  div.on('plotly_click', event => {
    const details = document.getElementById('video:' + div.closest('.heatmap').dataset.group + ':' + event.points[0].x);
    if (details) { details.open = true; details.scrollIntoView(); }
  })));
"""


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def format_cell(column: str, value: Any) -> str:
    """Percent with 3 decimals for TrackEval's ratios, integers for its counts (``format_value``, as the terminal
    tables), other numbers as they are, text as it is; ``column`` is a TrackEval name, perhaps after a ``protocol/``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    base = column.split('/')[-1]
    return format_value(base, number) if base in COUNT_KEYS or base in PERCENT_KEYS else f'{number:g}'


def table_html(table: Table, table_id: str) -> str:
    """A sortable table: each cell shows its formatted value and keeps the exact one in ``data-value``."""
    columns = [c for c in table.columns if not c.endswith('_rank')]
    head = ''.join(f'<th>{esc(c)}</th>' for c in ['', *columns])
    body = []
    for label, values in table.rows:
        cells = [f'<td>{esc(label)}</td>']
        for column in columns:
            value = values.get(column, '')
            rank = values.get(f'{column}_rank')
            css = ' class="best"' if str(rank) == '1' else ' class="second"' if str(rank) == '2' else ''
            cells.append(f'<td{css} data-value="{esc(value)}">{esc(format_cell(column, value))}</td>')
        body.append(f'<tr>{"".join(cells)}</tr>')
    source = f' <small>({esc(table.csv_path)})</small>' if table.csv_path else ''
    return (f'<h3>{esc(table.title)}{source}</h3><div class="wide"><table class="sortable" id="{esc(table_id)}">'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


def video_details(group: str, runs: list[Run], videos: list[str]) -> str:
    """One closed ``<details>`` per video: its per-run DetA, AssA, IDSW, FP, FN (opened by a heat-map click)."""
    out = []
    for video in videos:
        head = ''.join(f'<th>{name}</th>' for name, _ in (('run', ''), *VIDEO_COLUMNS))
        rows = []
        for run in runs:
            values = run.per_video[video]
            cells = ''.join(f'<td data-value="{values.get(key, "")}">{esc(format_cell(key, values.get(key, "")))}</td>'
                            for _, key in VIDEO_COLUMNS)
            rows.append(f'<tr><td>{esc(run.label)}</td>{cells}</tr>')
        out.append(f'<details id="video:{esc(group)}:{esc(video)}"><summary>{esc(video)}</summary>'
                   f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
                   '</details>')
    return f'<div class="videos">{"".join(out)}</div>'


def clip_html(index: int, clip: Clip) -> str:
    figures = ''.join(f'<figure><img data-run="{esc(label)}" src="{images[0]}" alt="{esc(label)}">'
                      f'<figcaption>{esc(label)}</figcaption></figure>' for label, images in clip.images.items())
    link = f' <a href="{esc(clip.mp4)}">every frame (MP4)</a>' if clip.mp4 else ''
    return (f'<div class="clip" id="clip-{index}"><h3>{esc(clip.video)}: {esc(clip.reason)}{link}</h3>'
            f'<label>frame <span class="frame">{clip.frames[0]}</span> '
            f'<input type="range" min="0" max="{len(clip.frames) - 1}" value="0" data-clip="{index}"></label>'
            f'<div class="row">{figures}</div></div>')


def figure_html(figure: Any, first: bool) -> str:
    """A Plotly figure as a div; the first one carries Plotly's JavaScript inline (offline), the others reuse it."""
    return figure.to_html(full_html=False, include_plotlyjs=True if first else False,
                          config=dict(displaylogo=False, responsive=True))


def page(title: str, sections: list[tuple[str, str, str]], clips: list[Clip]) -> str:
    """The whole page: ``sections`` of ``(anchor, heading, inner HTML)``, the clips' data for the slider."""
    nav = ''.join(f'<a href="#{anchor}">{esc(heading)}</a>' for anchor, heading, _ in sections)
    body = ''.join(f'<section id="{anchor}"><h2>{esc(heading)}</h2>{inner}</section>'
                   for anchor, heading, inner in sections)
    data = json.dumps([dict(frames=c.frames, images=c.images) for c in clips]).replace('</', '<\\/')
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f'<style>{STYLE}</style></head><body><h1>{esc(title)}</h1><nav>{nav}</nav>{body}'
            f'<script type="application/json" id="clip-data">{data}</script><script>{SCRIPT}</script></body></html>')
