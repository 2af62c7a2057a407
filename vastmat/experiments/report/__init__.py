"""A self-contained HTML report of tracking runs (tools/analysis/report.py; ``make demo`` writes the zoo's): the
tables (sortable), a trackers x videos HOTA heat map whose videos open their per-run rows, the paper's analyses
(animal groups, difficulty thirds, per-video HOTA distributions, HOTA against training time), clips of chosen videos
with every run's tracks and a shared frame slider, and where the results came from.

Figures are Plotly's offline HTML (its JavaScript inline once: the page opens without a server or network);
thumbnails are embedded; MP4s of longer clips lie in ``<page>_files/`` beside it."""
from __future__ import annotations

import os
import os.path as osp
import time
from typing import Callable

from vastmat.utils.io import atomic_write

from .clips import choose_videos, make_clip
from .figures import common_videos, distribution_figure, group_figure, heat_map, thirds_figure, training_figure
from .page import clip_html, esc, figure_html, page, table_html, video_details
from .sources import Run, Source, load_source

__all__ = ['write_report', 'load_source', 'Run', 'Source']


def _groups(sources: list[Source]) -> dict[str, list[Run]]:
    """The runs by the videos they tracked (one heat map each, named by its first run's group): a tools/test.py run
    on the zoo's test videos joins the zoo's trackers."""
    by_videos: dict[frozenset, list[Run]] = {}
    for source in sources:
        for run in source.runs:
            by_videos.setdefault(frozenset(run.per_video), []).append(run)
    groups: dict[str, list[Run]] = {}
    for runs in by_videos.values():
        name = runs[0].group
        groups[name if name not in groups else f'{name} ({len(groups) + 1})'] = runs
    return groups


def write_report(work_dirs: list[str], out: str, title: str = 'VastMAT tracking report', clips: bool = True,
                 log: Callable[[str], None] = print) -> dict:
    """Read ``work_dirs`` (:func:`load_source`) and write the report to ``out`` (atomically; MP4s of long clips in
    ``<out stem>_files/``). Returns ``dict(path, bytes, seconds, runs, videos, clips)``.

    Raises:
        UserInputError: a work dir is not one the report reads.
    """
    start = time.perf_counter()
    sources = [load_source(path) for path in work_dirs]
    page_dir = osp.dirname(osp.abspath(out))
    files_dir = osp.join(page_dir, osp.splitext(osp.basename(out))[0] + '_files')
    sections, all_clips, video_count, made = [], [], 0, []

    def as_html(figure) -> str:
        made.append(figure)  # the first figure made (the first on the page) carries Plotly's JavaScript
        return figure_html(figure, len(made) == 1)

    tables = [table for source in sources for table in source.tables]
    if tables:
        sections.append(('tables', 'Tables', ''.join(table_html(t, f'table-{i}') for i, t in enumerate(tables))))
    per_video, analyses, clip_parts = [], [], []
    for group, runs in _groups(sources).items():
        videos = common_videos(runs)
        if not videos:
            log(f'  {group}: the runs share no video; no heat map')
            continue
        video_count += len(videos)
        figure = heat_map(runs, videos, f'{group}: HOTA per video (hardest first; click a video for its rows)')
        per_video.append(f'<div class="heatmap" data-group="{esc(group)}">{as_html(figure)}</div>'
                         + video_details(group, runs, videos))
        for figure in (group_figure(runs, videos, f'{group}: HOTA per animal group'),
                       thirds_figure(runs, videos, f'{group}: HOTA per difficulty third') if len(videos) >= 3 else None,
                       distribution_figure(runs, videos, f'{group}: per-video HOTA')):
            if figure is not None:
                analyses.append(as_html(figure))
        drawable = [run for run in runs if run.results_dir and run.in_clips]
        if clips and drawable and drawable[0].data_root:
            for video, reason in choose_videos(drawable, videos):
                clip = make_clip(drawable, video, f'{group}, {reason}', files_dir, page_dir)
                clip_parts.append(clip_html(len(all_clips), clip))
                all_clips.append(clip)
    training = {label: row for source in sources for label, row in source.training.items()}
    figure = training_figure(training, 'HOTA against training time')
    if figure is not None:
        analyses.append(as_html(figure))
    if per_video:
        sections.append(('videos', 'Per video', ''.join(per_video)))
    if analyses:
        sections.append(('analyses', 'Analyses', ''.join(analyses)))
    if clip_parts:
        sections.append(('clips', 'Clips', ''.join(clip_parts)))
    provenance = ''.join(
        f'<h3>{esc(source.path)}</h3><table class="provenance">'
        + ''.join(f'<tr><td>{esc(what)}</td><td>{esc(value)}</td></tr>' for what, value in source.provenance)
        + '</table>' for source in sources)
    sections.append(('provenance', 'Provenance', provenance))
    text = page(title, sections, all_clips)
    os.makedirs(page_dir, exist_ok=True)
    with atomic_write(out) as f:
        f.write(text)
    seconds = time.perf_counter() - start
    return dict(path=out, bytes=osp.getsize(out), seconds=seconds, runs=sum(len(s.runs) for s in sources),
                videos=video_count, clips=len(all_clips))
