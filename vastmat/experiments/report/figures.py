"""The report's figures, as Plotly figures (offline HTML, zoom and hover for free): the trackers x videos HOTA heat
map and the paper's analyses (animal groups, difficulty thirds, per-video HOTA distributions, HOTA against training
time)."""
from __future__ import annotations

import os.path as osp
from typing import Any

import numpy as np

from vastmat.evaluation.analysis import difficulty_thirds, video_groups
from vastmat.evaluation.mot_eval import combined_hota

from .sources import Run

HEIGHT_PER_ROW = 26  # px per tracker row of the heat map
MIN_HEIGHT = 260


def common_videos(runs: list[Run]) -> list[str]:
    """The videos every run tracked, by mean HOTA (hardest first), ties by name."""
    videos = set(runs[0].per_video)
    for run in runs[1:]:
        videos &= set(run.per_video)
    mean = {v: float(np.mean([run.per_video[v]['HOTA'] for run in runs])) for v in videos}
    return sorted(videos, key=lambda v: (mean[v], v))


def heat_map(runs: list[Run], videos: list[str], title: str) -> Any:
    """Trackers (rows) x videos (columns), HOTA in percent."""
    import plotly.graph_objects as go
    z = [[100 * run.per_video[v]['HOTA'] for v in videos] for run in runs]
    figure = go.Figure(go.Heatmap(z=z, x=videos, y=[run.label for run in runs], colorscale='Viridis', zmin=0,
                                  zmax=100, colorbar=dict(title='HOTA'),
                                  hovertemplate='%{y}<br>%{x}<br>HOTA %{z:.1f}<extra></extra>'))
    figure.update_layout(title=title, height=max(MIN_HEIGHT, 120 + HEIGHT_PER_ROW * len(runs)),
                         margin=dict(l=10, r=10, t=50, b=10), xaxis=dict(showticklabels=len(videos) <= 60))
    return figure


def _grouped_bars(values: dict[str, dict[str, float]], title: str, axis: str) -> Any:
    """``values[run][category]`` (fractions) as grouped bars in percent."""
    import plotly.graph_objects as go
    figure = go.Figure()
    for label, by_category in values.items():
        figure.add_bar(name=label, x=list(by_category), y=[100 * v for v in by_category.values()],
                       hovertemplate=f'{label}<br>%{{x}}<br>HOTA %{{y:.1f}}<extra></extra>')
    figure.update_layout(title=title, barmode='group', xaxis_title=axis, yaxis_title='HOTA',
                         margin=dict(l=10, r=10, t=50, b=10), height=380)
    return figure


def group_figure(runs: list[Run], videos: list[str], title: str) -> Any | None:
    """COMBINED HOTA over the videos of each animal group (a video of several groups counts in each); None without
    ground truth to read the groups from."""
    from vastmat.datasets.categories import Categories
    from vastmat.datasets.sequences import sequence_root
    root = runs[0].data_root
    if root is None or not osp.isdir(root):
        return None
    gt_paths = {v: osp.join(sequence_root(root), v, 'gt', 'gt.txt') for v in videos}
    if not all(osp.isfile(p) for p in gt_paths.values()):
        return None
    groups_of = video_groups(gt_paths, Categories.for_root(root))
    groups = sorted({g for gs in groups_of.values() for g in gs})
    members = {g: [v for v in videos if g in groups_of[v]] for g in groups}
    values = {run.label: {f'{g} ({len(members[g])})': combined_hota(run.per_video, members[g]) for g in groups}
              for run in runs}
    return _grouped_bars(values, title, 'animal group (videos)')


def thirds_figure(runs: list[Run], videos: list[str], title: str) -> Any:
    """COMBINED HOTA over each difficulty third (videos ranked by their mean HOTA over the runs)."""
    thirds = difficulty_thirds({run.label: {v: run.per_video[v] for v in videos} for run in runs})
    values = {run.label: {f'{level} ({len(names)})': combined_hota(run.per_video, names)
                          for level, names in thirds.items() if names} for run in runs}
    return _grouped_bars(values, title, 'difficulty third (videos)')


def distribution_figure(runs: list[Run], videos: list[str], title: str) -> Any:
    """The per-video HOTA of each run as a box plot with every video a point."""
    import plotly.graph_objects as go
    figure = go.Figure()
    for run in runs:
        figure.add_box(y=[100 * run.per_video[v]['HOTA'] for v in videos], name=run.label, boxpoints='all',
                       jitter=0.4, pointpos=0, text=videos, hovertemplate='%{text}<br>HOTA %{y:.1f}<extra></extra>')
    figure.update_layout(title=title, yaxis_title='HOTA per video', showlegend=False, height=400,
                         margin=dict(l=10, r=10, t=50, b=10))
    return figure


def training_figure(training: dict[str, dict], title: str) -> Any | None:
    """HOTA against training minutes, one point per learned tracker; None when nothing was trained."""
    import plotly.graph_objects as go
    points = {label: row for label, row in training.items() if row.get('minutes') is not None}
    if not points:
        return None
    figure = go.Figure(go.Scatter(
        x=[row['minutes'] for row in points.values()], y=[100 * row['HOTA'] for row in points.values()],
        mode='markers+text', text=list(points), textposition='top center',
        hovertemplate='%{text}<br>%{x:.1f} min<br>HOTA %{y:.1f}<extra></extra>'))
    figure.update_layout(title=title, xaxis_title='training minutes (2 CPU cores)', yaxis_title='HOTA', height=400,
                         margin=dict(l=10, r=10, t=50, b=10))
    return figure
