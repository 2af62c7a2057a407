"""The benchmarks' package code (vastmat.benchmarks.association_speed, testing_path) and the per-track ByteTrack
reference benchmark (tools/benchmark/byte_tracker_reference.py)."""
import json
import os.path as osp
import time
import types

import numpy as np
import pytest

from helpers.common import SHARED_DATA, tool

AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')


def test_timers_count_nested_calls_once_and_restore_what_they_wrapped():
    from vastmat.benchmarks.testing_path import Timers

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
    from vastmat.benchmarks.association_speed import identical_tracks, time_runners
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
    calls.clear()
    time_runners({'x': (run, None)}, videos, 2, after_round=lambda: calls.append('peers'))
    assert calls == [('a', None), ('b', None), 'peers'] * 2  # the peers' rounds alternate with ours
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


def _fake_bytetrack_checkout(root):
    """A checkout with the official layout whose tracker counts its calls (the official code is not in the project):
    yolox/__init__.py fails, as the real one would without torch, so it must not be imported."""
    tracker = root / 'yolox' / 'tracker'
    tracker.mkdir(parents=True)
    (root / 'yolox' / '__init__.py').write_text('raise ImportError("the detector package must not be imported")\n')
    (tracker / 'basetrack.py').write_text('class BaseTrack:\n    _count = 0\n')
    (tracker / 'byte_tracker.py').write_text(
        'import numpy as np\nfrom .basetrack import BaseTrack\n\n\nclass BYTETracker:\n'
        '    def __init__(self, args, frame_rate=30):\n'
        '        assert (args.track_thresh, args.track_buffer, args.match_thresh, args.mot20) == (0.6, 30, 0.9, False)\n'
        '        assert frame_rate == 30 and np.float is float\n\n'
        '    def update(self, dets, img_info, img_size):\n'
        '        assert dets.shape[1] == 5 and img_info == img_size\n'
        '        BaseTrack._count += len(dets)\n        return []\n')


def _fake_fairmot_checkout(root):
    """A FairMOT checkout whose update fails unless the network lines are removed and checks what it is given."""
    tracker = root / 'src' / 'lib' / 'tracker'
    tracker.mkdir(parents=True)
    (root / 'src' / 'lib' / 'tracking_utils').mkdir()
    (tracker / 'basetrack.py').write_text('class BaseTrack:\n    _count = 0\n')
    (tracker / 'multitracker.py').write_text(
        'import numpy as np\nimport torch\nfrom models import *\nfrom models.model import create_model, load_model\n'
        'from tracking_utils.utils import *\n\nfrom .basetrack import BaseTrack\n\n\nclass JDETracker(object):\n'
        '    def __init__(self, opt, frame_rate=30):\n'
        '        self.model = load_model(create_model(opt.arch, opt.heads, opt.head_conv), opt.load_model)\n'
        '        self.model = self.model.to(torch.device("cpu"))\n'
        '        assert opt.conf_thres == 0.4 and opt.track_buffer == 30 and frame_rate == 10\n\n'
        '    def update(self, im_blob, img0):\n'
        '        width = img0.shape[1]\n'
        '        raise RuntimeError("the network lines must be removed")\n'
        '        dets = self.merge_outputs([dets])[1]\n'
        '        assert dets.shape[1] == 5 and id_feature.shape == (len(dets), 8)\n'
        '        assert np.allclose(np.linalg.norm(id_feature, axis=1), 1)\n'
        '        BaseTrack._count += 1\n'
        '        return []\n')


def _fake_tracktrack_checkout(root):
    """A TrackTrack checkout whose Tracker reads identity warps from ./trackers/cmc and checks its rows."""
    tracker = root / '3. Tracker' / 'trackers'
    tracker.mkdir(parents=True)
    (tracker / 'cmc.py').write_text('IDENTITY = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]\n')
    (tracker / 'tracker.py').write_text(
        'from trackers.cmc import *\n\n\nclass Tracker(object):\n'
        '    def __init__(self, args, vid_name):\n'
        '        assert (args.det_thr, args.init_thr, args.match_thr, args.max_time_lost) == (0.6, 0.6, 0.6, 20)\n'
        '        self.gmc = open("./trackers/cmc/GMC-" + vid_name + ".txt", "r")\n\n'
        '    def _warp(self):\n'
        '        assert [float(x) for x in self.gmc.readline().split("\\t")[1:]] == IDENTITY\n\n'
        '    def update(self, dets, dets_95):\n'
        '        self._warp()\n'
        '        assert dets is dets_95 and dets.shape[1] == 6 + 8 and (dets[:, 5] == 0).all()\n'
        '        return []\n\n'
        '    def update_without_detections(self):\n'
        '        self._warp()\n'
        '        return []\n')


def test_peer_trackers_run_the_official_layout_in_another_python(tmp_path):
    """The videos reach the peer script intact; a ByteTrack checkout is loaded from yolox/tracker without
    yolox/__init__.py, with the official defaults, and timed; its times join the results as a reference column."""
    import sys

    from vastmat.benchmarks import peer_trackers
    from vastmat.benchmarks.association_speed import (peer_rounds, peer_times, speed_results, speed_table,
                                                       write_peer_videos)
    from vastmat.utils.errors import UserInputError
    rng = np.random.default_rng(0)
    videos = [dict(name=name, frame_rate=10.0,
                   frames=[(rng.uniform(0, 50, (k, 4)), rng.uniform(0, 1, k)) for k in counts])
              for name, counts in (('a', [3, 0, 2]), ('b', [1]))]
    write_peer_videos(videos, tmp_path / 'videos.npz')
    read = peer_trackers.read_videos(str(tmp_path / 'videos.npz'))
    assert [v['name'] for v in read] == ['a', 'b']
    for ours, theirs in zip(videos, read):
        assert len(ours['frames']) == len(theirs['frames'])
        for (boxes, scores), (boxes2, scores2) in zip(ours['frames'], theirs['frames']):
            np.testing.assert_array_equal(boxes2, boxes)
            np.testing.assert_array_equal(scores2, scores)
    _fake_bytetrack_checkout(tmp_path / 'ByteTrack')
    logged = []
    seconds = peer_times(sys.executable, videos, 2, str(tmp_path / 'ByteTrack'), log=logged.append)
    assert 'official ByteTrack' in seconds and seconds['official ByteTrack'] > 0
    with peer_rounds(sys.executable, videos, str(tmp_path / 'ByteTrack')) as run_rounds:
        per_video = run_rounds(1)  # one round: the best time of each video (the benchmark takes the minima)
    assert list(per_video) == ['official ByteTrack'] and len(per_video['official ByteTrack']) == len(videos)
    results = speed_results(videos, {'BYTETracker (iou)': seconds['official ByteTrack'] / 4, **seconds})
    assert results['trackers']['BYTETracker (iou)']['ratios']['official ByteTrack'] == pytest.approx(4)
    assert 'x official ByteTrack' in [c.header for c in speed_table(results).columns]
    with pytest.raises(UserInputError, match='no yolox/tracker/byte_tracker.py'):
        peer_times(sys.executable, videos, 1, str(tmp_path / 'nowhere'), log=logged.append)
    # FairMOT: the documented edit (update takes the decoded detections and the benchmark's unit features)
    _fake_fairmot_checkout(tmp_path / 'FairMOT')
    seconds = peer_times(sys.executable, videos, 1, None, str(tmp_path / 'FairMOT'), feature_dim=8,
                         log=logged.append)
    assert list(seconds) == ['official JDETracker'] and seconds['official JDETracker'] > 0
    results = speed_results(videos, {'JDETracker (iou)': seconds['official JDETracker'] / 2, **seconds})
    assert results['trackers']['JDETracker (iou)']['ratio_to_official'] == pytest.approx(2)
    assert 'x its official code' in [c.header for c in speed_table(results).columns]
    # TrackTrack: unedited, identity camera motion from its GMC files, the rows as their own NMS-0.95 set
    _fake_tracktrack_checkout(tmp_path / 'TrackTrack')
    seconds = peer_times(sys.executable, videos, 1, official_tracktrack=str(tmp_path / 'TrackTrack'),
                         feature_dim=8, log=logged.append)
    assert list(seconds) == ['official TrackTrack'] and seconds['official TrackTrack'] > 0


def test_frame_times_count_the_tracks_carried_into_each_frame():
    """Per frame: the tracks alive before it (tracked + lost, or TrackTrack's live rows) and its best time; grouped
    by track count."""
    from vastmat.benchmarks.frame_time import by_track_count, frame_time_results, frame_times
    from vastmat.models.trackers import BYTETracker, TrackTrackTracker
    from vastmat.structures.tracking import TrackingFrame
    from vastmat.utils.errors import UserInputError
    boxes = np.array([[0., 0., 50., 50.], [100., 0., 150., 50.]])
    frames = [TrackingFrame.from_arrays(boxes if t < 3 else boxes[:0], np.full(2 if t < 3 else 0, 0.9), t + 1)
              for t in range(5)]
    records = frame_times(BYTETracker(min_box_area=None), [frames, frames[:2]], repeats=2)
    # 2 tracks from frame 1 on, lost after frame 3 (kept: 30-frame buffer); the second video starts over
    assert [c for c, _ in records] == [0, 2, 2, 2, 2, 0, 2] and all(s > 0 for _, s in records)
    groups = by_track_count(records, bin_width=2)
    assert [(g['tracks'], g['frames']) for g in groups] == [('0-1', 2), ('2-3', 5)]
    results = frame_time_results(records, 2)
    assert results['frames'] == 7 and results['max_tracks'] == 2 and results['fps'] > 0
    with pytest.raises(UserInputError, match='--bin-width 0'):
        by_track_count(records, 0)
    # TrackTrack's one list of live rows (New tracks included: it predicts them too)
    tracktrack = TrackTrackTracker(deleted_dets=None, min_box_area=None)
    frames = [TrackingFrame.from_arrays(f.bboxes, f.scores, f.frame_id, frame_rate=10) for f in frames]
    assert [c for c, _ in frame_times(tracktrack, [frames], repeats=1)] == [0, 2, 2, 2, 2]


# the official RuntimeTracker API over the ports (a fake checkout: the official code is not in the project)
_FAKE_RUNTIME_TRACKER = '''
import numpy as np
import torch
from utils.misc import distributed_device
{tcei_import}
from vastmat.structures.tracking import TrackingFrame


class RuntimeTracker:
    def __init__(self, model, sequence_hw, **settings):
        assert distributed_device() == torch.device('cpu')
        from vastmat.models.trackers.{module} import {cls}
        {port_settings}
        self.model, self.hw, self.t = model, sequence_hw, 0
        self.port = {cls}(trajectory_modeling=model.trajectory_modeling, id_decoder=model.id_decoder,
                          **runtime, **port_settings)
        self.port.eval()

    def update(self, image, **caches):
        assert image is None and sorted(caches) == {caches}
        {experience}
        out = self.model(frames=image, part='detr')
        h, w = self.hw
        b = out['pred_boxes'][0].double()
        xyxy = torch.stack([(b[:, 0] - b[:, 2] / 2) * w, (b[:, 1] - b[:, 3] / 2) * h,
                            (b[:, 0] + b[:, 2] / 2) * w, (b[:, 1] + b[:, 3] / 2) * h], 1).numpy()
        self.t += 1
        frame = TrackingFrame.from_arrays(xyxy, out['pred_logits'][0, :, 0].sigmoid().double().numpy(), self.t,
                                          features=out['outputs'][0].double().numpy())
        self.result = self.port.update(frame)

    def get_track_results(self):
        return dict(id=torch.as_tensor(self.result.ids - 1))
'''
_RUNTIME_KEYS = ('det_thresh', 'newborn_thresh', 'id_thresh', 'area_thresh', 'miss_tolerance', 'assignment_protocol')


def _fake_runtime_checkout(root, tcei):
    """The official layout: package __init__ files that must not run, utils/misc.py importing accelerate, the ID
    modules with the official constructor arguments, and a RuntimeTracker running the port behind the official
    API (TCEI: experience shared through the official cross-video cache dicts, tcei.py with the min-max line)."""
    for package in ('models', 'models/motip', 'utils', 'structures'):
        (root / package).mkdir(parents=True)
        (root / package / '__init__.py').write_text('raise ImportError("the official __init__ must not run")\n')
    (root / 'utils' / 'misc.py').write_text(
        'from accelerate import PartialState, DistributedType\nstate = PartialState()\n\n\n'
        'def distributed_device():\n    assert state.distributed_type == DistributedType.NO\n    return state.device\n')
    for name, port in (('id_decoder', 'MOTIPIDDecoder'), ('trajectory_modeling', 'MOTIPTrajectoryModeling')):
        official = 'IDDecoder' if name == 'id_decoder' else 'TrajectoryModeling'
        extra = 'use_aux_loss, use_shared_aux_head, ' if name == 'id_decoder' else ''
        (root / 'models' / 'motip' / f'{name}.py').write_text(
            f'from vastmat.models.trackers.motip_modules import {port}\n\n\nclass {official}({port}):\n'
            f'    def __init__(self, {extra}**kwargs):\n        super().__init__(**kwargs)\n')
    if tcei:
        from vastmat.benchmarks.peer_runtime_trackers import MINMAX_LINE
        (root / 'TCEI').mkdir()
        (root / 'TCEI' / 'tcei.py').write_text('import torch\n\n\ndef compute_cache_logits():\n    if True:\n'
                                               '        if True:\n            affinity = torch.ones(2)\n'
                                               + MINMAX_LINE + '            return affinity\n')
    settings = (f'runtime = {{k: settings.pop(k) for k in {_RUNTIME_KEYS}}}\n'
                '        port_settings = dict(params=settings)' if tcei else 'runtime, port_settings = settings, {}')
    experience = ("self.port.caches.w_pos = caches['w_pos_cache'].setdefault('cache', self.port.caches.w_pos)\n"
                  "        self.port.caches.w_neg = caches['w_neg_cache'].setdefault('cache', self.port.caches.w_neg)"
                  if tcei else 'pass')
    (root / 'models' / 'runtime_tracker.py').write_text(_FAKE_RUNTIME_TRACKER.format(
        tcei_import='from TCEI.tcei import *' if tcei else '', module='tcei_tracker' if tcei else 'motip_tracker',
        cls='TCEITracker' if tcei else 'MOTIPTracker', port_settings=settings,
        caches=['neg_cache', 'pos_cache', 'w_neg_cache', 'w_pos_cache'] if tcei else [], experience=experience))


@pytest.mark.skipif(not osp.isdir(AT10), reason=f'AnimalTrack-10fps-sim not found at {AT10}')
def test_runtime_tracker_speed_beside_the_official_layout(tmp_path, monkeypatch, request):
    """The queries, weights and settings reach the peer script intact (its main run here; the subprocess boundary,
    run_peer_script, is association_speed's, tested above): behind the official API and loading path (no package
    __init__, the accelerate stub, strict state dicts, the cross-video caches carried from video to video) the
    ports give the same ids as in process, and the ratios and table follow."""
    import sys

    import torch

    from vastmat.benchmarks import peer_runtime_trackers
    from vastmat.benchmarks import runtime_tracker_speed as speed
    from vastmat.utils.errors import UserInputError
    monkeypatch.setattr(speed, 'list_sequences', lambda root: ['chicken_5', 'deer_4'])
    monkeypatch.setitem(speed.ID_DECODER, 'num_layers', 1)  # the size travels with the weights; one layer is quicker

    def peer_in_process(peer_python, arguments, out):  # the script's main here (the subprocess: association_speed)
        assert peer_python == sys.executable and arguments[0] == str(speed.PEER_SCRIPT)
        monkeypatch.setattr(sys, 'argv', arguments)
        monkeypatch.setattr(torch.Tensor, 'cuda', torch.Tensor.cuda)  # main() makes it a no-op
        peer_runtime_trackers.main()
        return json.loads(out.read_text())
    monkeypatch.setattr(speed, 'run_peer_script', peer_in_process)
    threads = torch.get_num_threads()
    request.addfinalizer(lambda: torch.set_num_threads(threads))
    _fake_runtime_checkout(tmp_path / 'MOTIP', tcei=False)
    _fake_runtime_checkout(tmp_path / 'TCEI', tcei=True)
    results = speed.runtime_tracker_speed(AT10, videos=2, frames=4, repeats=1, peer_python=sys.executable,
                                          official_motip=str(tmp_path / 'MOTIP'),
                                          official_tcei=str(tmp_path / 'TCEI'), log=lambda text: None)
    assert (results["videos"], results["frames"]) == (2, 8)
    rows = results['trackers']
    assert list(rows) == ['MOTIPTracker', 'TCEITracker', 'official MOTIP', 'official TCEI']
    for name in ('MOTIPTracker', 'TCEITracker'):
        assert rows[name]['same_ids_as_official'] is True
        assert rows[name]['ratio_to_official'] == pytest.approx(
            rows[speed.OFFICIAL[name]]['seconds'] / rows[name]['seconds'])
        assert rows[name]['rows'] == rows[speed.OFFICIAL[name]]['rows'] > 0
    assert 'x its official code' in [c.header for c in speed.speed_table(results).columns]
    with pytest.raises(UserInputError, match='need --peer-python'):
        speed.runtime_tracker_speed(AT10, official_motip=str(tmp_path / 'MOTIP'))
    with pytest.raises(UserInputError, match='not a simulated-detection root'):
        speed.load_queries(str(tmp_path))
    with pytest.raises(UserInputError, match='--repeats 0'):
        speed.runtime_tracker_speed(AT10, repeats=0)
    with pytest.raises(SystemExit, match='no models/runtime_tracker.py'):
        peer_runtime_trackers._load_official(str(tmp_path), tcei=False)
