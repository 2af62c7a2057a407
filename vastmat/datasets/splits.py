"""Protocol splits (paper section 3.5).

* Protocol 1 (Seen): every category of a test video also appears in a training video.
* Protocol 2 (Unseen): category-disjoint. Nodes of the category co-occurrence graph are categories, an edge joins
  two categories that appear in one video; whole connected components go to one side, the largest to training, so a
  video (whose categories all lie in one component) never straddles the split.
* dev: carved from the training videos with the Protocol 1 rule (its categories stay seen in the rest of train);
  ``dev.txt`` is a subset of ``train.txt``.
Deterministic for a seed. Targets (paper: 315 test videos, P2 54 test categories) may be unreachable on other data:
Protocol 2 takes the closest reachable totals (exactly), Protocol 1 as many test videos as the rule allows up to the
target; the protocol rules themselves are never broken.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components


@dataclass
class Split:
    train: list[str]
    test: list[str]
    dev: list[str] = field(default_factory=list)


def category_components(video_categories: dict[str, set[int]]) -> dict[int, int]:
    """Connected component (0 = largest, then by decreasing size, ties by smallest category id) of each category."""
    categories = sorted(set().union(*video_categories.values()))
    index = {c: i for i, c in enumerate(categories)}
    rows, cols = [], []
    for cats in video_categories.values():
        members = [index[c] for c in sorted(cats)]
        rows += members[:-1]
        cols += members[1:]  # a chain links every category of the video
    n = len(categories)
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    members = defaultdict(list)
    for c, label in zip(categories, labels):
        members[label].append(c)
    ordered = sorted(members.values(), key=lambda m: (-len(m), m[0]))
    return {c: rank for rank, m in enumerate(ordered) for c in m}


def _check_videos(video_categories: dict[str, set[int]]) -> None:
    empty = [v for v, cats in video_categories.items() if not cats]
    if empty:
        raise ValueError(f'{len(empty)} video(s) have no category, so no protocol can place them: {empty[:5]}')


def seen_split(video_categories: dict[str, set[int]], num_test: int, rng: np.random.Generator,
               candidates: list[str] | None = None) -> tuple[list[str], list[str]]:
    """Protocol 1 rule: pick up to ``num_test`` videos (from ``candidates``) whose categories all stay in training."""
    names = sorted(candidates if candidates is not None else video_categories)
    train_count: dict[int, int] = defaultdict(int)
    for v in names:
        for c in video_categories[v]:
            train_count[c] += 1
    test = []
    for i in rng.permutation(len(names)):
        if len(test) == num_test:
            break
        video = names[i]
        if all(train_count[c] >= 2 for c in video_categories[video]):
            test.append(video)
            for c in video_categories[video]:
                train_count[c] -= 1
    test_set = set(test)
    return [v for v in names if v not in test_set], sorted(test)


def unseen_split(video_categories: dict[str, set[int]], num_test: int, num_test_categories: int,
                 rng: np.random.Generator,
                 train_only_categories: set[int] = frozenset()) -> tuple[list[str], list[str]]:
    """Protocol 2 rule: choose whole components (never the largest, nor one holding a ``train_only`` category)
    whose videos and categories come closest to the targets (sum of the two relative distances).

    Exact: a two-dimensional subset-sum over (videos, categories) finds every reachable pair of totals; the seed
    only decides between equally good choices (the components are visited in a seeded order).
    """
    component = category_components(video_categories)
    comp_videos: dict[int, list[str]] = defaultdict(list)
    for video, cats in video_categories.items():
        comp_videos[component[next(iter(cats))]].append(video)
    comp_categories: dict[int, int] = defaultdict(int)
    for c, k in component.items():
        comp_categories[k] += 1
    blocked = {0} | {component[c] for c in train_only_categories if c in component}
    choices = [k for k in sorted(comp_videos) if k not in blocked]
    choices = [choices[i] for i in rng.permutation(len(choices))]
    sizes = [(len(comp_videos[k]), comp_categories[k]) for k in choices]
    max_v, max_c = sum(v for v, _ in sizes), sum(c for _, c in sizes)
    layers = [np.zeros((max_v + 1, max_c + 1), bool)]
    layers[0][0, 0] = True
    for v, c in sizes:  # layers[k][a, b]: a videos and b categories reachable with the first k components
        reach = layers[-1].copy()
        reach[v:, c:] |= layers[-1][:max_v + 1 - v, :max_c + 1 - c]
        layers.append(reach)
    a, b = np.nonzero(layers[-1])
    cost = np.abs(a - num_test) / max(num_test, 1) + np.abs(b - num_test_categories) / max(num_test_categories, 1)
    best = int(np.argmin(cost))
    v_left, c_left, chosen = int(a[best]), int(b[best]), []
    for k in range(len(sizes), 0, -1):  # walk back through the layers
        if not layers[k - 1][v_left, c_left]:
            chosen.append(choices[k - 1])
            v_left, c_left = v_left - sizes[k - 1][0], c_left - sizes[k - 1][1]
    test = sorted(v for k in chosen for v in comp_videos[k])
    test_set = set(test)
    return sorted(v for v in video_categories if v not in test_set), test


def make_protocol_splits(video_categories: dict[str, set[int]], num_test: int = 315,
                         num_test_categories: int = 54, dev_fraction: float = 0.05, seed: int = 0,
                         train_only_categories: set[int] = frozenset()) -> dict[str, Split]:
    """Both protocols' splits and their dev splits."""
    _check_videos(video_categories)
    rng = np.random.default_rng(seed)
    splits = {}
    train, test = seen_split(video_categories, num_test, rng)
    splits['protocol1'] = Split(train, test)
    train, test = unseen_split(video_categories, num_test, num_test_categories, rng, set(train_only_categories))
    splits['protocol2'] = Split(train, test)
    for split in splits.values():
        num_dev = int(round(dev_fraction * len(split.train)))
        _, split.dev = seen_split(video_categories, num_dev, rng, candidates=split.train)
    return splits


def check_split(name: str, split: Split, video_categories: dict[str, set[int]]) -> dict:
    """Verify the protocol rules; return the split's statistics. Raises ``AssertionError`` naming the violation."""
    train, test, dev = set(split.train), set(split.test), set(split.dev)
    if train & test:
        raise AssertionError(f'{name}: {len(train & test)} videos are in both train and test')
    if train | test != set(video_categories):
        raise AssertionError(f'{name}: {len(set(video_categories) - train - test)} videos are in no split')
    if not dev <= train:
        raise AssertionError(f'{name}: dev holds videos that are not in train')
    cats = {part: set().union(*(video_categories[v] for v in videos)) if videos else set()
            for part, videos in (('train', train), ('test', test), ('dev', dev), ('train_minus_dev', train - dev))}
    if not cats['test'] <= cats['train']:
        if name == 'protocol1':
            raise AssertionError(f'protocol1: test categories {sorted(cats["test"] - cats["train"])[:10]} are '
                                 'not in train')
    if name == 'protocol2':
        if cats['test'] & cats['train']:
            raise AssertionError(f'protocol2: categories {sorted(cats["test"] & cats["train"])[:10]} are on both '
                                 'sides')
        component = category_components(video_categories)
        sides = defaultdict(set)
        for c in cats['train']:
            sides[component[c]].add('train')
        for c in cats['test']:
            sides[component[c]].add('test')
        if any(len(s) > 1 for s in sides.values()) or 'test' in sides.get(0, set()):
            raise AssertionError('protocol2: a co-occurrence component is split, or the largest is in test')
    if not cats['dev'] <= cats['train_minus_dev']:
        raise AssertionError(f'{name}: dev categories are not all seen in the rest of train')
    return dict(train_videos=len(train), test_videos=len(test), dev_videos=len(dev),
                train_categories=len(cats['train']), test_categories=len(cats['test']),
                test_categories_unseen=len(cats['test'] - cats['train']))
