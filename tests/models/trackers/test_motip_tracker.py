"""MOTIPTracker (MOTIP's runtime tracker): the official ``RuntimeTracker``'s own output on DETR outputs built from real
data (tests/fixtures/motip_tracker_official, made by running MCG-NJU/MOTIP's models/runtime_tracker.py with the
official TrajectoryModeling / IDDecoder outside the project on the inputs :func:`video_queries` builds; its README
says how), then the rules on hand-made logits: object-max, hungarian, id-max, newborn_thresh, label recycling (LRU)
and eviction, the window cut, the removal of tracks without observation, and the input errors. The hand-made cases'
expected values are the official tracker's (run against it with a scripted ID decoder outside the project, README),
except the frame with more newborns than free labels and tracked detections, where the official code raises."""
from __future__ import annotations

import gzip
import hashlib
import json
import os.path as osp

import numpy as np
import pytest
import torch

from helpers.common import REPO, SHARED_DATA, assert_same_tracks
from helpers.motip_weights import deterministic_weights, weights_digest

GOLDEN = osp.join(REPO, 'tests', 'fixtures', 'motip_tracker_official')
AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')


# --------------------------------------------------------------------------------------------------- the inputs
def video_queries(video: str, blackouts: bool = True, blackout_first: bool = False,
                  num_frames: int | None = None) -> dict:
    """The DETR outputs fed to both trackers for one video of AnimalTrack-10fps-sim: vastmat.experiments.
    simulated_inputs ``detr_queries`` with its defaults (key ``motip``, 8 padding queries with scores below 0.28,
    features times 16, shuffled, blackouts at ``frame % 25 == 13`` when ``blackouts`` and at frames 1-2 with
    ``blackout_first``); its docstring is the recipe."""
    from vastmat.benchmarks.simulated_inputs import detr_queries
    return detr_queries(AT10, video, blackouts=blackouts, blackout_first=blackout_first, num_frames=num_frames)


def inputs_digest(queries: dict) -> str:
    """sha256 of the float32 inputs (videos in name order)."""
    h = hashlib.sha256()
    for video in sorted(queries):
        for f in queries[video]['frames']:
            for key in ('logits', 'boxes', 'features'):
                h.update(np.ascontiguousarray(f[key], np.float32).tobytes())
    return h.hexdigest()


# ------------------------------------------------------------------------------------------ the official output
# variant: the official run's settings (README.md): the weight rule, the decoder's size, the tracker's arguments,
# the videos (and which have blackouts), and the rows of the official output
VARIANTS = {
    'objmax_k8': dict(rule='tracking', decoder=dict(num_layers=2, num_id_vocabulary=8, rel_pe_length=6),
                      tracker=dict(assignment_protocol='object-max', miss_tolerance=6, det_thresh=0.3,
                                   newborn_thresh=0.6, id_thresh=0.2),
                      videos=['chicken_5', 'zebra_5'], blackout_first=['chicken_5'], num_frames=60),
    'published': dict(rule='tracking', decoder=dict(num_layers=6, num_id_vocabulary=50, rel_pe_length=30),
                      tracker=dict(assignment_protocol='object-max', miss_tolerance=30, det_thresh=0.3,
                                   newborn_thresh=0.6, id_thresh=0.2),
                      videos=['deer_5'], num_frames=40),
    'hungarian_k16': dict(rule='tracking', decoder=dict(num_layers=1, num_id_vocabulary=16, rel_pe_length=8),
                          tracker=dict(assignment_protocol='hungarian', miss_tolerance=5, det_thresh=0.4,
                                       newborn_thresh=0.5, id_thresh=0.3, area_thresh=6000),
                          videos=['pig_5']),
    'idmax_random': dict(rule='random', decoder=dict(num_layers=2, num_id_vocabulary=8, rel_pe_length=6),
                         tracker=dict(assignment_protocol='id-max', miss_tolerance=4, det_thresh=0.3,
                                      newborn_thresh=0.6, id_thresh=0.15),
                         videos=['deer_4'], blackouts=False),
    'objmax_random': dict(rule='random', decoder=dict(num_layers=2, num_id_vocabulary=8, rel_pe_length=6),
                          tracker=dict(assignment_protocol='object-max', miss_tolerance=6, det_thresh=0.3,
                                       newborn_thresh=0.6, id_thresh=0.2),
                          videos=['dolphin_4']),
}


def variant_queries(variant: str) -> dict:
    spec = VARIANTS[variant]
    return {v: video_queries(v, blackouts=spec.get('blackouts', True), blackout_first=v in spec.get('blackout_first', ()),
                             num_frames=spec.get('num_frames')) for v in spec['videos']}


def build_port(variant: str):
    """The port with the variant's settings and the rule's weights."""
    from vastmat.models.trackers.motip_tracker import MOTIPTracker
    spec = VARIANTS[variant]
    tracker = MOTIPTracker(
        trajectory_modeling=dict(type='MOTIPTrajectoryModeling', detr_dim=256, ffn_dim_ratio=2, feature_dim=256),
        id_decoder=dict(type='MOTIPIDDecoder', feature_dim=256, id_dim=256, ffn_dim_ratio=2, head_dim=32,
                        **spec['decoder']), **spec['tracker'])
    deterministic_weights(tracker.trajectory_modeling, spec['rule'])
    deterministic_weights(tracker.id_decoder, spec['rule'])
    return tracker.eval()


def port_rows(tracker, video: str, queries: dict) -> np.ndarray:
    """``frame, id, left, top, width, height, score`` rows of the port on one video."""
    from vastmat.structures.tracking import FrameDetections, TrackingFrame
    tracker.reset()
    rows = []
    for t, rec in enumerate(queries['frames'], start=1):
        frame = TrackingFrame(FrameDetections(rec['xyxy'], rec['scores'], features=rec['features'].astype(np.float64)),
                              t, video_name=video)
        out = tracker.update(frame)
        for i, b, s in zip(out.ids, out.bboxes, out.scores):
            rows.append([t, i, b[0], b[1], b[2] - b[0], b[3] - b[1], s])
    return np.array(rows, np.float64).reshape(-1, 7)


def read_golden(variant: str, video: str) -> np.ndarray:
    with gzip.open(osp.join(GOLDEN, variant, f'{video}.txt.gz'), 'rt') as f:
        return np.loadtxt(f, delimiter=',', ndmin=2)[:, :7]


def official_runs() -> dict:
    """What each official run read and wrote (runs.json, README.md): its settings, the digests of its inputs and
    weights, its rows per video."""
    with open(osp.join(GOLDEN, 'runs.json')) as f:
        return json.load(f)['runs']


def counting_tracker(base):
    """A subclass of the port's class (through the method boundaries TCEI overrides) that counts the rules used."""

    class Counting(type(base)):
        def __init__(self, wrapped):  # share the built modules and settings, no second build
            self.__dict__.update(wrapped.__dict__)
            self.counts = dict(decoder_runs=0, empty_window=0, accepted=0, newborn=0, evicted=0, overflow=0,
                               removed=0, window_cut=0, empty_frames=0, recycled=0)

        def update(self, frame):
            out = super().update(frame)
            self.counts['empty_frames'] += len(out) == 0
            return out

        def id_logits(self, features):
            self.counts['decoder_runs'] += 1
            self.counts['empty_window'] += self.trajectory_id_labels.shape[1] == 0
            logits, embeds = super().id_logits(features)
            assert embeds.shape == (len(features), self.id_decoder.id_dim)
            return logits, embeds

        def active_detections(self, frame):
            scores, boxes, features = super().active_detections(frame)
            self._scores = scores
            return scores, boxes, features

        def predict_id_labels(self, features):
            labels = super().predict_id_labels(features)
            self.counts['accepted'] += int((labels != self.num_id_vocabulary).sum())
            self.counts['newborn'] += int((labels == self.num_id_vocabulary).sum())
            self._labels = labels
            return labels

        def assign_newborn_labels(self, labels, features):
            n = int((labels == self.num_id_vocabulary).sum())
            passed = (self._labels != self.num_id_vocabulary) | (self._scores > self.newborn_thresh)
            self.counts['overflow'] += int(passed.sum()) > len(self.kept)  # newborns dropped for lack of labels
            recycled = self.id_queue.first(n)
            self.counts['recycled'] += sum(label in self.id_label_to_id for label in recycled)
            self.counts['evicted'] += len(set(recycled) & self.window_labels)
            return super().assign_newborn_labels(labels, features)

        def update_trajectories(self, boxes, features, labels):
            self.counts['window_cut'] += self.trajectory_features.shape[0] > self.miss_tolerance - 2
            super().update_trajectories(boxes, features, labels)

        def remove_inactive(self):
            before = self.trajectory_id_labels.shape[1]
            super().remove_inactive()
            self.counts['removed'] += before - self.trajectory_id_labels.shape[1]

    return Counting(base)


@pytest.fixture(scope='module')
def golden_runs():
    """The port's rows and rule counts for every variant (computed once)."""
    if not osp.isdir(AT10):
        pytest.skip(f'shared data not found at {AT10}')
    torch.set_num_threads(1)
    runs = {}
    for variant, spec in VARIANTS.items():
        queries = variant_queries(variant)
        tracker = counting_tracker(build_port(variant))
        weights = [weights_digest(tracker.trajectory_modeling.state_dict()),
                   weights_digest(tracker.id_decoder.state_dict())]
        rows = {video: port_rows(tracker, video, queries[video]) for video in spec['videos']}
        runs[variant] = (inputs_digest(queries), rows, tracker.counts, weights)
    return runs


@pytest.mark.xdist_group('motip_golden_runs')  # one worker computes golden_runs
@pytest.mark.parametrize('variant', sorted(VARIANTS))
def test_equals_the_official_tracker(golden_runs, variant):
    """The same rows in the same order with the same ids (official id + 1, exactly), scores to two float32 ulps,
    boxes to 5e-4 px: the official output box is cx cy w h -> x y w h times the image size in float32 (up to ~2 ulp
    at 2560 px, 2.4e-4 each); the port returns its input boxes (float64). Scores: both sides take ``sigmoid`` of the
    same float32 logits (the digest checks them), but torch's float32 sigmoid rounds by the CPU's vector path, so on
    another CPU than the golden runs' 1-2 % of the scores differ by one or two ulps (CI and this machine,
    2026-12-01: at most 1.2e-7)."""
    digest, rows, _, weights = golden_runs[variant]
    official = official_runs()[variant]
    assert official['settings'] == VARIANTS[variant], f'{variant}: the official run had other settings'
    assert digest == official['inputs_sha256'], (f'video_queries no longer builds the inputs the official {variant!r} '
                                                 'run read (tests/fixtures/motip_tracker_official/README.md)')
    assert weights == official['weights_sha256'], (f'deterministic_weights no longer gives the weights the official '
                                                   f'{variant!r} run had (README.md)')
    from vastmat.datasets.formats import TrackResults
    total = 0
    for video, ours in rows.items():
        theirs = read_golden(variant, video)
        where = f'{variant}/{video}'
        as_results = [TrackResults(r[:, 0].astype(np.int64), r[:, 1].astype(np.int64), r[:, 2:6], r[:, 6],
                                   np.arange(1, len(r) + 1)) for r in (ours, theirs)]
        total += assert_same_tracks(*as_results, where, atol=5e-4)
        np.testing.assert_array_equal(ours[:, :2], theirs[:, :2], err_msg=f'{where}: frames, ids or their order')
        np.testing.assert_allclose(ours[:, 2:6], theirs[:, 2:6], rtol=0, atol=5e-4, err_msg=where)
        np.testing.assert_array_max_ulp(ours[:, 6].astype(np.float32), theirs[:, 6].astype(np.float32), maxulp=2)
    assert total == sum(official['rows'].values())


@pytest.mark.xdist_group('motip_golden_runs')  # one worker computes golden_runs
def test_the_official_inputs_exercise_every_rule(golden_runs):
    """The golden runs hold accepted and newborn labels, recycled labels whose old trajectory was still in the window
    (evicted), frames with more newborns than free labels, window cuts, removals of unobserved tracks, empty frames,
    a decoder run against a window without any trajectory (a first frame without detections), all three protocols."""
    counts = {variant: run[2] for variant, run in golden_runs.items()}
    total = {key: sum(c[key] for c in counts.values()) for key in counts['objmax_k8']}
    for key in ('accepted', 'newborn', 'evicted', 'overflow', 'removed', 'window_cut', 'empty_frames', 'recycled',
                'empty_window'):
        assert total[key] > 0, (key, counts)
    for variant in ('objmax_k8', 'published', 'hungarian_k16'):  # the hand-made tracking decoder tracks
        assert counts[variant]['accepted'] > 3 * counts[variant]['newborn'], counts[variant]
    assert counts['published']['window_cut'] >= 10


# ------------------------------------------------------------------------------------------ hand-made logits
SMALL_DIM = 8


def small_tracker(num_id_vocabulary: int = 4, miss_tolerance: int = 6, rel_pe_length: int | None = None, **kwargs):
    """A port with a tiny decoder (8 + 8 channels, one layer)."""
    from vastmat.models.trackers.motip_tracker import MOTIPTracker
    return MOTIPTracker(
        trajectory_modeling=dict(type='MOTIPTrajectoryModeling', detr_dim=SMALL_DIM, feature_dim=SMALL_DIM),
        id_decoder=dict(type='MOTIPIDDecoder', feature_dim=SMALL_DIM, id_dim=SMALL_DIM, head_dim=4, num_layers=1,
                        num_id_vocabulary=num_id_vocabulary, rel_pe_length=rel_pe_length or miss_tolerance),
        miss_tolerance=miss_tolerance, **kwargs).eval()


def scripted(tracker):
    """The tracker with its ID decoder replaced by a script: ``tracker.script = [claims of frame 2, of frame 3, ...]``,
    one ``(word, probability)`` per active detection (the rest of the probability spread over the other words);
    ``tracker.seen`` records the window (labels, times, masks) and the detections' time each decoder call saw."""

    class Scripted(type(tracker)):
        def __init__(self, wrapped):
            self.__dict__.update(wrapped.__dict__)
            self.script, self.seen = [], []

        def id_logits(self, features):
            claims = self.script.pop(0)
            assert len(claims) == len(features), 'the script does not match the active detections'
            k = self.num_id_vocabulary
            probs = torch.zeros(len(claims), k + 1)
            for i, (word, p) in enumerate(claims):
                probs[i] = (1 - p) / k
                probs[i, word] = p
            self.seen.append((self.trajectory_id_labels.clone(), self.trajectory_times.clone(),
                              self.trajectory_masks.clone(), self.trajectory_features.shape[0]))
            return probs.log(), torch.zeros(len(claims), self.id_decoder.id_dim)

    return Scripted(tracker)


def box(x, y=0.0, w=50.0, h=50.0):
    return [x, y, x + w, y + h]


def frame(t, scores, boxes=None, features=None, video='v'):
    """A frame of detections with the given scores (boxes side by side unless given)."""
    from vastmat.structures.tracking import FrameDetections, TrackingFrame
    n = len(scores)
    boxes = np.array(boxes if boxes is not None else [box(100.0 * i) for i in range(n)], np.float64).reshape(-1, 4)
    features = features if features is not None else np.random.default_rng(t).standard_normal((n, SMALL_DIM))
    return TrackingFrame(FrameDetections(boxes, np.array(scores, np.float64), features=features), t,
                         video_name=video)


def probabilities(rows, k=4):
    """(n, k + 1) probabilities: each row a dict word -> p, the rest spread evenly over the other words."""
    out = torch.zeros(len(rows), k + 1)
    for i, row in enumerate(rows):
        rest = (1 - sum(row.values())) / (k + 1 - len(row))
        out[i] = rest
        for word, p in row.items():
            out[i, word] = p
    return out


def with_window(tracker, labels):
    """Give ``tracker`` a one-frame window holding the given labels (observed)."""
    n = len(labels)
    tracker.trajectory_id_labels = torch.tensor([labels], dtype=torch.int64)
    tracker.trajectory_masks = torch.zeros((1, n), dtype=torch.bool)
    tracker.trajectory_times = torch.zeros((1, n), dtype=torch.int64)
    tracker.trajectory_features = torch.zeros((1, n, SMALL_DIM))
    tracker.trajectory_boxes = torch.zeros((1, n, 4), dtype=torch.float64)
    return tracker


@pytest.fixture(scope='module')
def tracker4():
    return small_tracker()


def test_object_max(tracker4):
    """Each detection takes its argmax word if it is a window label, has probability >= id_thresh and no detection
    claims it more strongly; a repeated claim of equal probability goes to the first; the rest are newborn (4)."""
    from vastmat.models.trackers.motip_assignment import object_max_assignment
    window, k = {0, 1, 2}, 4
    scores = probabilities([{1: 0.7}, {1: 0.8},  # two claim word 1: the stronger (row 1) wins
                            {3: 0.9},  # word 3 is not in the window
                            {2: 0.375},  # accepted
                            {4: 0.9},  # the newborn word
                            ])
    assert object_max_assignment(scores, window, k, 0.2) == [4, 1, 4, 2, 4]
    # probability >= id_thresh (0.375 is exact in float32)
    assert object_max_assignment(probabilities([{2: 0.375}]), window, k, 0.375) == [2]
    assert object_max_assignment(probabilities([{2: 0.37}]), window, k, 0.375) == [4]
    # equal claims: the first takes the word, the second finds it taken
    assert object_max_assignment(probabilities([{0: 0.5}, {0: 0.5}, {1: 0.3}]), window, k, 0.2) == [0, 4, 1]
    # the stronger claim wins whatever the detection order
    assert object_max_assignment(probabilities([{0: 0.3}, {0: 0.6}]), window, k, 0.2) == [4, 0]
    tracker = with_window(tracker4, [0, 1, 2])  # the tracker passes its window, K and id_thresh
    assert tracker.assign(scores) == [4, 1, 4, 2, 4]  # the default protocol


def test_hungarian_and_id_max():
    """The official hungarian (1 - p, newborn column repeated, then the window / newborn / id_thresh checks) and
    id-max (each word takes its strongest detection unless a stronger word claims it; on a tie every tied word passes
    and the last one is kept: the official 1e-4 tie rule only lowers the stored maximum, never below the tie)."""
    from vastmat.models.trackers.motip_assignment import assign_id_labels
    tracker = with_window(small_tracker(assignment_protocol='hungarian'), [0, 1, 2])
    # greedy would give row 0 word 0 (0.6) and leave row 1 on 0.35; the optimum is row 0 -> 1, row 1 -> 0
    scores = probabilities([{0: 0.6, 1: 0.35}, {0: 0.55, 1: 0.05}])
    assert tracker.assign(scores) == [1, 0]
    # a row whose best total is a newborn column, a row assigned to a word below id_thresh, a word not in the window
    scores = probabilities([{4: 0.9}, {1: 0.25, 0: 0.2}, {3: 0.95}])
    assert tracker.assign(scores) == [4, 1, 4]
    tracker.id_thresh = 0.3
    assert tracker.assign(scores) == [4, 4, 4]
    assert assign_id_labels(scores, {0, 1, 2}, 4, 0.3, 'hungarian') == [4, 4, 4]

    tracker = with_window(small_tracker(assignment_protocol='id-max'), [0, 1, 2])
    scores = probabilities([{0: 0.5, 1: 0.45}, {0: 0.3, 1: 0.2, 2: 0.4}])
    # word 0 and word 1 both prefer row 0; word 0 (0.5) beats word 1 (0.45); word 2 takes row 1
    assert tracker.assign(scores) == [0, 2]
    tie = probabilities([{0: 0.4, 1: 0.4}, {2: 0.1}])
    assert tracker.assign(tie) == [1, 4]  # the tie goes to the later word; row 1's 0.1 < id_thresh
    assert tracker.assign(probabilities([{3: 0.9}])) == [4]  # word 3 not in the window
    assert assign_id_labels(tie, {0, 1, 2}, 4, 0.2, 'id-max') == [1, 4]


def test_newborn_and_detection_thresholds():
    """Active: score > det_thresh (float32, as the official) and area > area_thresh (pixels); a newborn needs score >
    newborn_thresh, a tracked detection only det_thresh. Boxes and scores come back as given."""
    tracker = scripted(small_tracker(area_thresh=2500.0))
    boxes = [box(0, w=60), box(100, w=60), box(200, w=60), box(300, w=60), box(400, w=60),
             box(500, w=50.0, h=50.0001), box(600, w=49.0)]
    out = tracker.update(frame(1, [0.6, 0.61, 0.35, 0.3, 0.95, 0.9, 0.9], boxes))
    # 0.6 not > newborn_thresh, 0.35 newborn too weak, 0.3 not > det_thresh, box 6 area 2450 <= area_thresh 2500,
    # box 5 area 2500.005 > 2500 kept
    np.testing.assert_array_equal(out.ids, [1, 2, 3])
    np.testing.assert_array_equal(out.bboxes, np.array(boxes)[[1, 4, 5]])
    np.testing.assert_array_equal(out.scores, np.float32([0.61, 0.95, 0.9]).astype(np.float64))
    # frame 2: a tracked detection needs only det_thresh
    tracker.script = [[(0, 0.9), (1, 0.9)]]
    out = tracker.update(frame(2, [0.35, 0.31], [box(100, w=60), box(400, w=60)]))
    np.testing.assert_array_equal(out.ids, [1, 2])


def test_label_recycling_is_least_recently_used_and_evicts():
    """Newborns take the least recently used labels (the official OrderedSet id_queue); a recycled label's old
    trajectory leaves the window and its old id is forgotten; ids count on."""
    tracker = scripted(small_tracker(num_id_vocabulary=4))
    out = tracker.update(frame(1, [0.9, 0.9, 0.9]))  # a, b, c: labels 0, 1, 2 in detection order
    np.testing.assert_array_equal(out.ids, [1, 2, 3])
    assert list(tracker.id_queue) == [3, 0, 1, 2]
    tracker.script = [[(1, 0.9), (4, 0.9)]]  # b keeps label 1, d is newborn: the unused label 3
    out = tracker.update(frame(2, [0.9, 0.9]))
    np.testing.assert_array_equal(out.ids, [2, 4])
    assert list(tracker.id_queue) == [0, 2, 1, 3]
    assert tracker.window_labels == {0, 1, 2, 3}
    tracker.script = [[(3, 0.9), (4, 0.9), (4, 0.9)]]  # d keeps 3; e, f newborn: labels 0 and 2 (a, c evicted)
    out = tracker.update(frame(3, [0.9, 0.9, 0.9]))
    np.testing.assert_array_equal(out.ids, [4, 5, 6])
    assert tracker.id_label_to_id == {1: 1, 3: 3, 0: 4, 2: 5}  # the official ids (from 0)
    assert list(tracker.id_queue) == [1, 3, 0, 2]
    labels = tracker.trajectory_id_labels[0].tolist()
    masks = tracker.trajectory_masks
    for label in (0, 2):  # the new owners' columns: absent before frame 3 (a's and c's observations are gone)
        np.testing.assert_array_equal(masks[:, labels.index(label)].tolist(), [True, True, False])
    np.testing.assert_array_equal(masks[:, labels.index(1)].tolist(), [False, False, True])
    # frame 4: label 0 now means e
    tracker.script = [[(0, 0.9)]]
    out = tracker.update(frame(4, [0.9]))
    np.testing.assert_array_equal(out.ids, [5])
    # a new video: every label free, ids from 1 (frame 1 again resets, as reset() does)
    np.testing.assert_array_equal(tracker.update(frame(1, [0.9, 0.9], video='w')).ids, [1, 2])
    assert list(tracker.id_queue) == [2, 3, 0, 1]
    assert tracker.window_labels == {0, 1} and tracker.trajectory_id_labels.shape == (1, 2)
    tracker.reset()
    np.testing.assert_array_equal(tracker.update(frame(1, [0.9])).ids, [1])


def test_more_newborns_than_free_labels():
    """Newborns beyond the free labels are dropped, the last ones in detection order (the official code does this on
    a frame of newborns only; with tracked detections in the frame its mask has the wrong length and raises)."""
    tracker = scripted(small_tracker(num_id_vocabulary=4))
    out = tracker.update(frame(1, [0.9, 0.8, 0.95, 0.7, 0.99, 0.65]))
    np.testing.assert_array_equal(out.ids, [1, 2, 3, 4])
    np.testing.assert_allclose(out.scores, [0.9, 0.8, 0.95, 0.7], atol=1e-7)
    tracker.script = [[(4, 0.9), (2, 0.9), (4, 0.9), (4, 0.9), (4, 0.9), (0, 0.9)]]
    out = tracker.update(frame(2, [0.9, 0.9, 0.8, 0.7, 0.95, 0.9]))
    # labels 2 and 0 tracked; 2 free labels (1, 3 by LRU order) for 4 newborns: rows 0 and 2 get them
    np.testing.assert_array_equal(out.ids, [5, 3, 6, 1])
    np.testing.assert_allclose(out.scores, [0.9, 0.9, 0.8, 0.9], atol=1e-7)
    assert len(tracker.window_labels) == 4


def test_window_and_removal():
    """The window keeps miss_tolerance - 1 frames (times 0 .. T-1, the detections at time T <= miss_tolerance - 1 <
    rel_pe_length); a track missed miss_tolerance - 2 times can still be matched, one missed once more is gone."""
    tracker = scripted(small_tracker(miss_tolerance=4))
    tracker.update(frame(1, [0.9, 0.9]))  # labels 0 (x) and 1 (y)
    tracker.script = [[(1, 0.9)], [(1, 0.9)], [(0, 0.9), (1, 0.9)]]
    tracker.update(frame(2, [0.9]))  # y only
    tracker.update(frame(3, [0.9]))  # y only: x missed twice
    assert tracker.window_labels == {0, 1}
    out = tracker.update(frame(4, [0.9, 0.9]))  # x is matched again
    np.testing.assert_array_equal(out.ids, [1, 2])
    for labels, times, masks, num_frames in tracker.seen:
        assert num_frames == times.shape[0] <= 3
        np.testing.assert_array_equal(times, np.arange(num_frames)[:, None].repeat(times.shape[1], 1))
    assert [s[3] for s in tracker.seen] == [1, 2, 3]

    tracker.reset()
    tracker.seen.clear()
    tracker.update(frame(1, [0.9, 0.9]))
    tracker.script = [[(1, 0.9)], [(1, 0.9)], [(1, 0.9)], [(0, 0.9), (1, 0.9)]]
    tracker.update(frame(2, [0.9]))
    tracker.update(frame(3, [0.9]))
    tracker.update(frame(4, [0.9]))  # x missed three times: its column has no observation left
    assert tracker.window_labels == {1}
    assert tracker.trajectory_id_labels.shape == (3, 1)
    out = tracker.update(frame(5, [0.9, 0.9]))  # word 0 is no window label: newborn, takes the LRU label
    np.testing.assert_array_equal(out.ids, [3, 2])
    assert [s[3] for s in tracker.seen] == [1, 2, 3, 3]


def test_the_real_decoder_at_the_window_limit():
    """miss_tolerance == rel_pe_length (the official bound): the longest window's relative times are all embedded;
    id_logits returns the logits and the id embeddings (what TCEI reads)."""
    torch.manual_seed(0)
    tracker = small_tracker(num_id_vocabulary=6, miss_tolerance=4)
    rng = np.random.default_rng(0)
    identities = rng.standard_normal((3, SMALL_DIM))
    for t in range(1, 9):
        n = 3 if t % 3 else 0  # every third frame is empty
        out = tracker.update(frame(t, [0.9] * n, features=identities[:n] + 0.1 * rng.standard_normal((n, SMALL_DIM))))
        assert len(out) == n and len(set(out.ids.tolist())) == n
        assert tracker.trajectory_times.shape[0] <= 3
    logits, embeds = tracker.id_logits(torch.zeros(2, SMALL_DIM))
    assert logits.shape == (2, 7) and embeds.shape == (2, SMALL_DIM)
    assert torch.isfinite(logits).all()


def test_errors():
    from vastmat.structures.tracking import FrameDetections, MissingTrackerInput, TrackingFrame
    with pytest.raises(ValueError, match='miss_tolerance.*rel_pe_length = 5'):
        small_tracker(miss_tolerance=6, rel_pe_length=5)
    with pytest.raises(ValueError, match='miss_tolerance'):
        small_tracker(miss_tolerance=2)
    with pytest.raises(ValueError, match="assignment_protocol 'greedy'"):
        small_tracker(assignment_protocol='greedy')
    assert small_tracker(assignment_protocol='Object-Max').assignment_protocol == 'object-max'
    from vastmat.models.trackers.motip_tracker import MOTIPTracker
    with pytest.raises(ValueError, match='id_decoder.feature_dim'):
        MOTIPTracker(trajectory_modeling=dict(type='MOTIPTrajectoryModeling', detr_dim=16, feature_dim=16),
                     id_decoder=dict(type='MOTIPIDDecoder', feature_dim=8, id_dim=8, head_dim=4, num_layers=1,
                                     num_id_vocabulary=4, rel_pe_length=6), miss_tolerance=6)
    tracker = small_tracker()
    no_features = TrackingFrame(FrameDetections(np.array([box(0)]), np.array([0.9])), 1, video_name='v')
    with pytest.raises(MissingTrackerInput, match='features'):
        tracker.update(no_features)
    with pytest.raises(ValueError, match=r"video 'v' frame 1: .*\(1, 16\).*\(n, 8\) \(id_decoder.feature_dim"):
        tracker.update(frame(1, [0.9], features=np.zeros((1, 16))))


def test_default_build_is_the_official_size():
    """The defaults: K = 50, six layers, 16 heads, rel_pe_length 30, miss_tolerance 30, object-max, 0.3/0.6/0.2."""
    from vastmat.models.trackers.motip_tracker import MOTIPTracker
    from vastmat.registry import MODELS
    tracker = MODELS.build(dict(type='MOTIPTracker'))
    assert isinstance(tracker, MOTIPTracker)
    decoder = tracker.id_decoder
    assert (decoder.num_id_vocabulary, decoder.num_layers, decoder.num_heads, decoder.rel_pe_length) == (50, 6, 16, 30)
    assert (tracker.miss_tolerance, tracker.assignment_protocol) == (30, 'object-max')
    assert (tracker.det_thresh, tracker.newborn_thresh, tracker.id_thresh, tracker.area_thresh) == (0.3, 0.6, 0.2, 0.0)
    assert tracker.required_inputs == ('features', )
