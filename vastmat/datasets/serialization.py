"""Dataset serialisation without mmengine's full garbage collection.

mmengine's ``BaseDataset._serialize_data`` (run by ``full_init`` when ``serialize_data=True``, the default) pickles
each item into one uint8 buffer, so that dataloader workers share it without copy-on-read, and ends with
``gc.collect()``. That full collection walks every object of the process: 0.3 to 1 s in a process that holds torch
and mmdet, paid at every dataset build (measured: 149 s of the test suite's CPU time over 293 builds, a quarter of it;
each tool run builds one to three datasets). The items of the cleared list are freed by reference counting without
it (they hold no cycles), so the mixin below does the same serialisation and leaves collection to Python. mmengine
offers no switch for the collection alone (``serialize_data=False`` drops the shared buffer too), hence the override.
"""
from __future__ import annotations

import pickle

import numpy as np


class SerializeWithoutCollectMixin:
    """For subclasses of mmengine's ``BaseDataset``: ``_serialize_data`` as mmengine's (the same buffer and end
    offsets, the list cleared) without its closing ``gc.collect()``."""

    data_list: list

    def _serialize_data(self) -> tuple[np.ndarray, np.ndarray]:
        items = [np.frombuffer(pickle.dumps(item, protocol=4), dtype=np.uint8) for item in self.data_list]
        ends = np.cumsum(np.asarray([len(item) for item in items], dtype=np.int64))
        self.data_list.clear()
        return np.concatenate(items), ends
