"""Protocol splits on a synthetic category co-occurrence graph, and on the demo dataset through the tool."""
import json

import numpy as np
import pytest

from helpers.common import tool
from vastmat.datasets.splits import Split, category_components, check_split, make_protocol_splits


def _synthetic_videos(seed=1):
    """300 videos over a dense block of 40 categories (one big component) plus 15 small components."""
    rng = np.random.default_rng(seed)
    videos = {}
    for i in range(300):
        videos[f'big{i}'] = {int(c) for c in rng.choice(np.arange(1, 41), size=rng.integers(1, 3), replace=False)}
    for comp in range(15):
        base = 41 + 2 * comp
        for j in range(int(rng.integers(1, 6))):
            videos[f'small{comp}_{j}'] = {base} if j % 2 == 0 else {base, base + 1}
    return videos


def _relative_distance(num_videos, num_categories, target=(30, 10)):
    return abs(num_videos - target[0]) / target[0] + abs(num_categories - target[1]) / target[1]


def _best_reachable(videos, train_only):
    comps = category_components(videos)
    sizes = {}
    for cats in videos.values():
        k = comps[next(iter(cats))]
        sizes.setdefault(k, [0, set()])
        sizes[k][0] += 1
        sizes[k][1] |= cats
    eligible = [k for k in sizes if k != 0 and not sizes[k][1] & train_only]
    best = float('inf')
    for mask in range(1 << len(eligible)):
        chosen = [k for i, k in enumerate(eligible) if mask >> i & 1]
        best = min(best, _relative_distance(sum(sizes[k][0] for k in chosen),
                                            sum(len(sizes[k][1]) for k in chosen)))
    return best


def test_components():
    comps = category_components({'a': {1, 2}, 'b': {2, 3}, 'c': {4}, 'd': {5, 6}, 'e': {6}})
    assert comps[1] == comps[2] == comps[3] == 0  # largest first
    assert comps[5] == comps[6] == 1 and comps[4] == 2


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_protocol_rules_hold(seed):
    videos = _synthetic_videos()
    frog = {45, 46}  # a small component that must stay in training
    splits = make_protocol_splits(videos, num_test=30, num_test_categories=10, dev_fraction=0.05, seed=seed,
                                  train_only_categories=frog)
    p1 = check_split('protocol1', splits['protocol1'], videos)
    p2 = check_split('protocol2', splits['protocol2'], videos)
    assert p1['test_videos'] == 30 and p1['test_categories_unseen'] == 0
    assert p2['test_categories'] == p2['test_categories_unseen'] > 0
    test_categories = set().union(*(videos[v] for v in splits['protocol2'].test))
    assert not test_categories & frog and not test_categories & set(range(1, 41))
    # as close to the targets as any choice of whole components can be (brute force over all subsets)
    assert _relative_distance(p2['test_videos'], p2['test_categories']) == pytest.approx(
        _best_reachable(videos, frog), abs=1e-12)
    assert p1['dev_videos'] == round(0.05 * p1['train_videos'])
    again = make_protocol_splits(videos, 30, 10, 0.05, seed, frog)
    assert again['protocol2'].test == splits['protocol2'].test and again['protocol1'].dev == splits['protocol1'].dev


def test_violations_are_detected():
    videos = {'a': {1, 2}, 'b': {2}, 'c': {3}, 'd': {3, 4}, 'e': {1}}
    with pytest.raises(AssertionError, match='protocol1: test categories'):
        check_split('protocol1', Split(['a', 'b', 'e'], ['c', 'd']), videos)
    with pytest.raises(AssertionError, match='both sides'):
        check_split('protocol2', Split(['a', 'b', 'c'], ['d', 'e']), videos)
    with pytest.raises(AssertionError, match='largest is in test'):
        check_split('protocol2', Split(['c', 'd'], ['a', 'b', 'e']), videos)
    with pytest.raises(AssertionError, match='in both train and test'):
        check_split('protocol2', Split(['a', 'b', 'e', 'c'], ['c', 'd']), videos)
    with pytest.raises(ValueError, match='no category'):
        make_protocol_splits({'a': {1}, 'b': set()})


def test_make_splits_tool_on_demo_data(demo_root, tmp_path, capfd):
    out = tmp_path / 'splits'
    tool('tools/data/make_splits.py', '--data-root', demo_root, '--test-videos', 3, '--test-categories',
         2, '--dev-fraction', 0.2, '--out-dir', out)
    printed = ''.join(capfd.readouterr())  # stdout and stderr (warnings)
    stats = json.load(open(out / 'split_stats.json'))
    assert stats['protocol1']['test_videos'] == 3 and stats['protocol2']['test_categories_unseen'] >= 1
    for protocol in ('protocol1', 'protocol2'):
        train = (out / protocol / 'train.txt').read_text().split()
        test = (out / protocol / 'test.txt').read_text().split()
        dev = (out / protocol / 'dev.txt').read_text().split()
        assert len(train) + len(test) == 11 and set(dev) <= set(train)
    assert 'protocol 2 component-disjoint' in printed


def test_a_split_less_another_leaves_its_videos_out(demo_root):
    """``train-dev``: the train videos less the dev ones, in the train list's order, with their animal counts; what
    the zoo's trainings read (the dev videos choose its test thresholds)."""
    from vastmat.datasets import VastMATDataset
    from vastmat.datasets.sequences import held_out, read_split, split_animal_counts
    train, dev = read_split(demo_root, 'protocol1', 'train'), read_split(demo_root, 'protocol1', 'dev')
    assert dev and set(dev) <= set(train)
    kept = read_split(demo_root, 'protocol1', held_out('train', 'dev'))
    assert held_out('train', 'dev') == 'train-dev' and kept == [v for v in train if v not in dev]
    counts = split_animal_counts(demo_root, 'protocol1', 'train')
    assert split_animal_counts(demo_root, 'protocol1', 'train-dev') == {v: c for v, c in counts.items() if v in kept}
    dataset = VastMATDataset(data_root=demo_root, protocol='protocol1', split='train-dev', pipeline=[],
                             test_mode=True)
    assert [info['video_name'] for info in dataset.load_data_list()] == kept
    with pytest.raises(FileNotFoundError, match='no such split file'):
        read_split(demo_root, 'protocol1', 'train-nosuch')
