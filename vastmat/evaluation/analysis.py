"""The paper's analyses of tracking results (appendix D.3, Table 16): per-video HOTA statistics and their CDF,
Easy / Medium / Hard thirds of the videos over a set of trackers, results per animal group; and how much a
difference of COMBINED HOTA between methods on the same videos owes to the choice of videos (a paired bootstrap)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from vastmat.datasets.categories import Categories
from vastmat.datasets.formats import read_gt

from .mot_eval import combine, combined_hota

DIFFICULTY_LEVELS = ('Easy', 'Medium', 'Hard')


def video_names(results: dict) -> list[str]:
    """The per-video keys of an evaluation result (all but COMBINED)."""
    return [k for k in results if k != 'COMBINED']


def per_video_hota_stats(results: dict) -> dict:
    """Mean, median, IQR, P10, P90 of per-video HOTA and the share of videos below 20 and 40 HOTA (fractions)."""
    hota = np.array([results[v]['HOTA'] for v in video_names(results)])
    if not len(hota):
        raise ValueError('no per-video results')
    p10, p25, p50, p75, p90 = np.percentile(hota, [10, 25, 50, 75, 90])
    return dict(videos=int(len(hota)), mean=float(hota.mean()), median=float(p50), iqr=float(p75 - p25),
                p10=float(p10), p90=float(p90), share_below_20=float((hota < 0.2).mean()),
                share_below_40=float((hota < 0.4).mean()))


def bootstrap_hota(per_video_by_method: dict[str, dict], names: list[str], samples: int = 1000,
                   seed: int = 0) -> dict[str, np.ndarray]:
    """COMBINED HOTA of every method on ``samples`` resamples of the videos ``names`` (drawn with replacement, as
    many as there are), the same resamples for every method, so that differences between methods are paired.

    Args:
        per_video_by_method: per method, its flattened per-video results (each must hold every name).
        names: the videos of the comparison.
        samples: number of resamples.
        seed: seed of numpy's generator (the same seed draws the same resamples).

    Returns:
        ``{method: (samples,) array}`` of COMBINED HOTA (fractions).
    """
    if not names:
        raise ValueError('bootstrap_hota: no videos')
    if samples < 1:
        raise ValueError(f'bootstrap_hota: samples must be >= 1, got {samples}')
    for method, per_video in per_video_by_method.items():
        missing = [n for n in names if n not in per_video]
        if missing:
            raise KeyError(f'bootstrap_hota: {method!r} has no result for {missing[:5]}')
    draws = np.random.default_rng(seed).integers(0, len(names), size=(samples, len(names)))
    return {method: np.array([combined_hota(per_video, [names[i] for i in draw]) for draw in draws])
            for method, per_video in per_video_by_method.items()}


def interval(values: np.ndarray, level: float = 0.9) -> tuple[float, float]:
    """The central ``level`` percentile interval of bootstrap values (``level`` 0.9: the 5th and 95th percentiles)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f'interval: level must lie in (0, 1), got {level}')
    low, high = np.percentile(values, [50 * (1 - level), 50 * (1 + level)])
    return float(low), float(high)


def paired_difference(ours: dict, theirs: dict, names: list[str], samples: int = 1000, level: float = 0.9,
                      seed: int = 0) -> dict:
    """Two methods' COMBINED HOTA on the videos ``names``, the difference and its ``level`` interval over
    ``samples`` paired resamples of the videos (:func:`bootstrap_hota`), and the share of resamples where ``ours`` is
    higher."""
    draws = bootstrap_hota(dict(ours=ours, theirs=theirs), names, samples, seed)
    low, high = interval(draws['ours'] - draws['theirs'], level)
    a, b = combined_hota(ours, names), combined_hota(theirs, names)
    return dict(HOTA=a, HOTA_reference=b, difference=a - b, low=low, high=high,
                share_better=float(np.mean(draws['ours'] > draws['theirs'])))


def difficulty_thirds(results_by_tracker: dict[str, dict]) -> dict[str, list[str]]:
    """Rank the videos by their mean HOTA over the trackers and cut them into thirds (Easy = highest).

    Every tracker must have results for the same videos. Ties are broken by video name, so the thirds are
    deterministic; with n videos the sizes are ceil/floor splits of n / 3 (Easy gets the remainder first).
    """
    trackers = list(results_by_tracker)
    if not trackers:
        raise ValueError('no trackers')
    videos = sorted(video_names(results_by_tracker[trackers[0]]))
    for name in trackers[1:]:
        if sorted(video_names(results_by_tracker[name])) != videos:
            raise ValueError(f'tracker {name!r} was evaluated on other videos than {trackers[0]!r}')
    mean_hota = {v: float(np.mean([results_by_tracker[t][v]['HOTA'] for t in trackers])) for v in videos}
    ranked = sorted(videos, key=lambda v: (-mean_hota[v], v))
    sizes = [len(ranked) // 3 + (1 if i < len(ranked) % 3 else 0) for i in range(3)]
    groups, start = {}, 0
    for level, size in zip(DIFFICULTY_LEVELS, sizes):
        groups[level] = ranked[start:start + size]
        start += size
    return groups


def video_groups(gt_paths: dict[str, str], categories: Categories) -> dict[str, set[str]]:
    """The animal groups of each video, from the categories of its evaluated ground truth."""
    groups = {}
    for video, path in gt_paths.items():
        gt = read_gt(path)
        cats = np.unique(gt.categories[(gt.valid == 1) & (gt.categories > 0)])
        groups[video] = {categories.group_of(int(c)) for c in cats if int(c) in categories}
    return groups


def results_by_group(per_seq_raw: dict, groups_of_video: dict[str, set[str]]) -> dict[str, dict]:
    """Combined metrics over the videos of each animal group (a video with several groups counts in each)."""
    members = defaultdict(list)
    for video in per_seq_raw:
        for group in sorted(groups_of_video.get(video, ())):
            members[group].append(video)
    return {group: dict(combine(per_seq_raw, videos), videos=len(videos)) for group, videos in members.items()}


def plot_hota_cdf(results_by_tracker: dict[str, dict], path: str) -> None:
    """Empirical CDF of per-video HOTA, one line per tracker (PNG)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from vastmat.utils.io import save_figure_atomic

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for name, results in results_by_tracker.items():
        hota = np.sort([100 * results[v]['HOTA'] for v in video_names(results)])
        # the curve starts at (0, 0): no video is below 0 HOTA
        ax.step(np.r_[0.0, hota], np.arange(len(hota) + 1) / len(hota), where='post', label=name)
    ax.set_xlabel('per-video HOTA')
    ax.set_ylabel('share of videos')
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc='lower right')
    fig.tight_layout()
    save_figure_atomic(fig, path)
