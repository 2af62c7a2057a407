"""The datasets' serialisation without mmengine's gc.collect(): the same buffer, offsets and items as mmengine's."""
import gc

import numpy as np
from mmengine.dataset import BaseDataset

from vastmat.registry import DATASETS


def build(demo_root, serialize_data):
    return DATASETS.build(dict(type='VastMATDataset', data_root=demo_root, protocol='protocol1', split='train',
                               pipeline=[], serialize_data=serialize_data))


def test_same_buffer_and_items_as_mmengine_without_a_full_collection(demo_root, monkeypatch):
    plain = build(demo_root, serialize_data=False)
    ours = build(demo_root, serialize_data=False)
    ours_bytes, ours_ends = ours._serialize_data()
    theirs_bytes, theirs_ends = BaseDataset._serialize_data(plain)  # mmengine's own, collection included
    assert np.array_equal(ours_bytes, theirs_bytes) and np.array_equal(ours_ends, theirs_ends)
    assert ours.data_list == [] and len(ours_ends) == 8  # the 8 Protocol 1 train videos of the demo data

    collections = []
    monkeypatch.setattr(gc, 'collect', lambda *args: collections.append(args))
    serialized, listed = build(demo_root, serialize_data=True), build(demo_root, serialize_data=False)
    assert not collections
    assert len(serialized) == len(listed) == 8
    for index in range(len(listed)):
        assert serialized.get_data_info(index) == listed.get_data_info(index)
