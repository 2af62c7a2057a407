"""The benchmarks' package code (vastmat.experiments.association_speed, test_path) and the per-track ByteTrack
reference benchmark (tools/benchmark/byte_tracker_reference.py)."""
import json
import os.path as osp
import time
import types

import numpy as np
import pytest

from conftest import SHARED_DATA, tool

AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')


def test_timers_count_nested_calls_once_and_restore_what_they_wrapped():
    from vastmat.experiments.test_path import Timers

    class Base:
        def update(self):
            time.sleep(0.01)

    class Tracker(Base):
        pass

    def write(tracker):
        tracker.update()  # timed as writing only: inside another timed call

    module = types.SimpleNamespace(write=write, read=lambda: None)
    timers = Timers()
    timers.wrap(Tracker, 'update', 'tracking')
    timers.wrap(module, 'write', 'writing')
    timers.wrap(module, 'read', 'data')
    assert timers.first_item is None
    module.read()
    assert timers.first_item is not None and timers.rss_at_first_item > 0
    module.write(Tracker())
    assert timers.seconds['tracking'] == 0 and timers.seconds['writing'] >= 0.01
    Tracker().update()
    assert timers.seconds['tracking'] >= 0.01
    timers.restore()
    assert 'update' not in Tracker.__dict__ and module.write is write  # inherited again, the original back


def test_time_runners_best_of_repeats_and_identical_tracks():
    from vastmat.experiments.association_speed import identical_tracks, time_runners
    from vastmat.structures.tracking import TrackOutput
    from vastmat.utils.errors import UserInputError
    calls = []

    def run(video, prepared):
        calls.append((video['name'], prepared))
        return [TrackOutput(np.array([1]), np.array([[0., 0., 1., 1.]]), np.array([0.9]))]
    videos = [dict(name='a'), dict(name='b')]
    best, outputs = time_runners({'x': (run, lambda v: v['name'] * 2), 'y': (run, None)}, videos, 2)
    assert set(best) == {'x', 'y'} and all(t >= 0 for t in best.values())
    assert calls[:4] == [('a', 'aa'), ('a', None), ('b', 'bb'), ('b', None)]  # interleaved video by video
    assert len(calls) == 8 and identical_tracks(outputs['x'], outputs['y'])
    moved = [[TrackOutput(np.array([1]), np.array([[0., 0., 1., 2.]]), np.array([0.9]))]] * 2
    assert not identical_tracks(outputs['x'], moved) and not identical_tracks(outputs['x'], outputs['x'][:1])
    with pytest.raises(UserInputError, match='--repeats 0'):
        time_runners({'x': (run, None)}, videos, 0)


@pytest.mark.skipif(not osp.isdir(AT10), reason=f'AnimalTrack-10fps-sim not found at {AT10}')
def test_byte_tracker_reference_benchmark_finds_identical_tracks(tmp_path):
    """The optimised BYTETracker and the per-track port of the official code on 2 videos: identical tracks."""
    out = tmp_path / 'reference.json'
    result = tool('tools/benchmark/byte_tracker_reference.py', '--data-root', osp.join(AT10, 'gt'), '--det-root',
                  osp.join(AT10, 'dets'), '--videos', 2, '--repeats', 1, '--out', out)
    assert json.load(open(out)) == json.loads(json.dumps(result))
    assert result['identical'] is True and result['videos'] == 2 and result['frames'] > 0
    assert set(result['trackers']) == {'BYTETracker (iou)', 'BYTETracker reference (per-track, official structure)'}
    assert all(row['fps'] > 0 for row in result['trackers'].values())
