"""vastmat.benchmarks.motion_matcher_study (tools/analysis/motion_matcher_study.py): per-video statistics and the
sparsest third on a hand-built ground truth, the sparse settings' simulation made once, each run's config and options
from the trackers' declarations, and ByteTrack with IoU and CDA fixed on two videos of AnimalTrack-10fps-sim (rows,
gains, the sparsest third scored from the same tracks, the plot, a second invocation reusing every run)."""
import json
import os
import os.path as osp

import pytest

from helpers.common import SHARED_DATA, tool
from vastmat.benchmarks.motion_matcher_study import runs, table
from vastmat.benchmarks.motion_matcher_study.settings import StudySettings
from vastmat.experiments import matcher_study

AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
needs_at10 = pytest.mark.skipif(not osp.isdir(osp.join(AT10, 'dets')),
                                reason=f'{AT10} not found (../shared/data beside the clone)')
STUDY = 'tools/analysis/motion_matcher_study.py'
VIDEOS = ['chicken_5', 'deer_5']  # two of the smallest detection files


def write_video(root, name, length, rows, frame_rate=10):
    os.makedirs(root / name / 'gt')
    (root / name / 'seqinfo.ini').write_text(
        f'[Sequence]\nname={name}\nimDir={name}\nframeRate={frame_rate}\nseqLength={length}\nimWidth=200\n'
        'imHeight=200\nimExt=.jpg\n')
    (root / name / 'gt' / 'gt.txt').write_text(''.join(f'{",".join(map(str, r))},-1,-1,-1\n' for r in rows))


@pytest.fixture
def hand_root(tmp_path):
    """``a``: 4 frames; identity 1 moves 10 then 20 px with a 30 x 40 box (diagonal 50): 0.2, 0.4; identity 2
    (6 x 8, diagonal 10) at frames 1 and 3 (gap 2: no pair; its frame-2 box is not valid) and 4 (1 px: 0.1).
    Valid boxes 6 over 4 frames; median displacement of (0.2, 0.4, 0.1) is 0.2. ``b``: one still animal, 2 frames."""
    root = tmp_path / 'gt'
    write_video(root, 'a', 4, [(1, 1, 0, 0, 30, 40, 1), (2, 1, 10, 0, 30, 40, 1), (3, 1, 10, 20, 30, 40, 1),
                               (1, 2, 100, 100, 6, 8, 1), (2, 2, 101, 100, 6, 8, 0), (3, 2, 103, 104, 6, 8, 1),
                               (4, 2, 103, 105, 6, 8, 1)])
    write_video(root, 'b', 2, [(1, 1, 50, 50, 20, 20, 1), (2, 1, 50, 50, 20, 20, 1)])
    return root


def test_per_video_statistics_and_the_sparsest_third(hand_root):
    stats = runs.video_statistics(str(hand_root), ['a', 'b'])
    a, b = stats['a'], stats['b']
    assert (a['boxes'], a['frames'], a['pairs']) == (6, 4, 3)
    assert a['animals_per_frame'] == 1.5 and a['displacement'] == pytest.approx(0.2, abs=1e-12)
    assert (b['animals_per_frame'], b['displacement'], b['frame_rate']) == (1.0, 0.0, 10)
    assert runs.sparsest_third(stats) == ['b']  # round(2 / 3) = 1 video, the one with fewer animals
    many = {f'v{i}': dict(animals_per_frame=float(n)) for i, n in enumerate([5, 1, 3, 1, 9, 2, 7])}
    assert runs.sparsest_third(many) == ['v1', 'v3']  # round(7 / 3) = 2, ties by name


def test_a_sparse_setting_is_simulated_once(hand_root, tmp_path):
    from vastmat.datasets.sequences import load_sequence
    from vastmat.utils.errors import UserInputError
    out = str(tmp_path / 'sim')
    assert runs.simulated_setting(str(hand_root), out, 2, seed=1) == out
    sequence = load_sequence(out, 'a')
    assert (sequence.length, sequence.frame_rate) == (2, 5)  # frames 1 and 3 of the 10 FPS source
    assert sorted(set(sequence.gt.frames)) == [1, 2]
    assert osp.isfile(osp.join(out, 'a', 'det', 'det.txt'))
    record = osp.join(out, 'simulation.json')
    stamp = os.stat(record).st_mtime_ns
    runs.simulated_setting(str(hand_root), out, 2, seed=1)  # reused, not made again
    assert os.stat(record).st_mtime_ns == stamp
    with pytest.raises(UserInputError, match='seed'):
        runs.simulated_setting(str(hand_root), out, 2, seed=2)
    assert not [name for name in os.listdir(tmp_path) if '.tmp' in name]


def test_runs_are_the_study_configs_with_the_matcher_swapped_in(tmp_path):
    """Every tracker's declarations, its run options in the matcher table's order, ``TRACKER:`` options, and each
    run's config: the tracker's study config with ``model.tracker.matcher`` replaced (none for its own)."""
    from vastmat.experiments.sweep.runs import build_config
    trackers = matcher_study.study_trackers()
    assert list(trackers) == ['bytetrack', 'tracktrack', 'diffmot']  # the cheapest to run first
    bytetrack, tracktrack, diffmot = trackers.values()
    assert (bytetrack.own_matcher, bytetrack.threshold('paper'), bytetrack.threshold('official')) == ('iou', 0.6, 0.9)
    assert tracktrack.match_thresh == ('match_thr', dict(paper=0.6, official=0.6)) and diffmot.match_thresh is None
    cfg = matcher_study.matcher_config(bytetrack, 'cda-fixed-diou-gate')
    assert matcher_study.pixel_options(cfg, False) == [
        'model.tracker.matcher.plus_one=False', 'model.tracker.matcher.gate.plus_one=False']
    assert matcher_study.run_options(matcher_study.matcher_config(bytetrack, 'iou'), bytetrack, 'official', True,
                                     ['x=1']) == ['model.tracker.matcher.plus_one=True', 'x=1',
                                                  'model.tracker.match_thresh=0.9']
    settings = StudySettings(str(tmp_path), str(tmp_path), str(tmp_path), d2mp_checkpoint=__file__,
                                   cfg_options=['a.b=1', 'diffmot:model.tracker.high_thres=0.5'])
    assert runs.tracker_options(settings, bytetrack) == ['a.b=1']
    assert runs.tracker_options(settings, diffmot) == [f'model.tracker.motion.checkpoint={__file__}', 'a.b=1',
                                                        'model.tracker.high_thres=0.5']
    assert runs.tracker_options(settings, tracktrack)[:3] == list(tracktrack.options)
    # the runs: bytetrack on one setting, its own matcher and CenterSim (no per-matcher config file needed)
    settings = StudySettings(str(tmp_path), str(tmp_path), str(tmp_path), trackers=['bytetrack'],
                                   settings=['10fps'], matchers=['iou', 'centersim'])
    roots = {'10fps': dict(data_root=str(tmp_path), det_root=str(tmp_path))}
    own, centersim = runs.make_runs(settings, roots, {'10fps': ['v']})
    assert own['config'] == centersim['config'] == 'configs/bytetrack/bytetrack_cached-dets.py'
    assert own['cfg_options'] == centersim['cfg_options'] == ['model.tracker.matcher.plus_one=True',
                                                              'model.tracker.match_thresh=0.9']
    assert centersim['options']['model.tracker.matcher'] == dict(type='CenterSim', denominator='mean',
                                                                 plus_one=True)
    assert build_config(centersim['config_file'], centersim['options']).model.tracker.matcher.to_dict() == dict(
        type='CenterSim', denominator='mean', plus_one=True)
    assert 'model.tracker.matcher' not in own['options']
    with pytest.raises(matcher_study.UserInputError, match="matcher 'no-such-matcher'"):
        runs.make_runs(StudySettings(str(tmp_path), str(tmp_path), str(tmp_path), trackers=['bytetrack'],
                                            settings=['10fps'], matchers=['iou', 'no-such-matcher']),
                        roots, {'10fps': ['v']})


def test_diffmot_needs_a_d2mp_checkpoint(tmp_path, capsys):
    from vastmat.engine.cli import run_cli
    with pytest.raises(SystemExit) as exc:
        run_cli(lambda argv: tool(STUDY, *argv), ['--work-dir', str(tmp_path), '--trackers', 'diffmot'])
    assert exc.value.code == 2
    assert 'diffmot needs a trained motion model: --d2mp-checkpoint' in capsys.readouterr().err


def test_targets_of_the_candidate_matcher():
    """Issue 16's targets: the dense row against IoU, the others against the better CDA of each resample; verdicts
    met / within noise / missed from the margin and its interval."""
    import numpy as np
    hota = {('10fps', 'all'): dict(iou=0.60, cda_fixed=0.55, cda_adaptive=0.62, cand=0.59),
            ('5fps', 'all'): dict(iou=0.50, cda_fixed=0.56, cda_adaptive=0.54, cand=0.57),
            ('5fps', 'sparsest third'): dict(iou=0.40, cda_fixed=0.45, cda_adaptive=0.47, cand=0.30)}
    rows = [dict(tracker='t', setting=s, videos=v, matcher=m.replace('_', '-'), HOTA=h)
            for (s, v), values in hota.items() for m, h in values.items()]
    noise = np.array([0.0, 0.01, -0.01, 0.02])
    draws = {('t', s, v): {m.replace('_', '-'): h + noise * (m == 'cand') for m, h in values.items()}
             for (s, v), values in hota.items()}
    targets = table.target_rows(rows, draws, 'cand', 0.9)
    assert [(t['setting'], t['videos'], t['target'], t['verdict']) for t in targets] == [
        ('10fps', 'all', '>= IoU', 'within noise'),
        ('5fps', 'all', '>= better of cda-fixed / cda-adaptive', 'met'),
        ('5fps', 'sparsest third', '>= better of cda-fixed / cda-adaptive', 'missed')]
    dense, sparse, missed = targets
    assert dense['margin'] == pytest.approx(-0.01) and sparse['margin'] == pytest.approx(0.01)
    assert missed['margin'] == pytest.approx(-0.17)
    # the dense margins over the resamples: -0.01 + noise -> -0.02, -0.01, 0, 0.01; met in half of them
    assert dense['share_met'] == 0.5 and dense['margin_high'] == pytest.approx(np.percentile(noise - 0.01, 95))
    assert missed['share_met'] == 0.0 and missed['margin_high'] < 0
    without = table.target_rows(rows, None, 'cand', 0.9)  # no resampling: the margin alone decides
    assert [t['verdict'] for t in without] == ['missed', 'met', 'missed'] and without[0]['margin_low'] is None


@pytest.fixture(scope='module')
def bytetrack_study(tmp_path_factory):
    work_dir = tmp_path_factory.mktemp('study')
    args = ['--work-dir', work_dir, '--trackers', 'bytetrack', '--settings', '10fps', '--matchers', 'iou',
            'cda-fixed', '--videos', *VIDEOS]
    return work_dir, args, tool(STUDY, *args)


@needs_at10
def test_bytetrack_rows_gains_and_the_sparsest_third(bytetrack_study):
    work_dir, _, result = bytetrack_study
    assert (result['computed'], result['reused']) == (2, 0)
    rows = result['rows']
    assert [(r['videos'], r['matcher']) for r in rows] == [
        ('all', 'iou'), ('all', 'cda-fixed'), ('sparsest third', 'iou'), ('sparsest third', 'cda-fixed')]
    assert all((r['tracker'], r['setting']) == ('bytetrack', '10fps') for r in rows)
    stats = result['statistics']['10fps']
    sparsest = min(VIDEOS, key=lambda v: stats[v]['animals_per_frame'])
    assert result['sparsest_third'] == {'10fps': [sparsest]}
    for subset in ('all', 'sparsest third'):
        iou, cda = (r for r in rows if r['videos'] == subset)
        assert iou['HOTA_gain'] == 0.0 and cda['HOTA_gain'] == cda['HOTA'] - iou['HOTA']
    saved = json.load(open(work_dir / 'table.json'))
    for row in rows:
        metrics = json.load(open(work_dir / 'runs' / row['run_id'] / 'metrics.json'))
        assert set(metrics) == {*VIDEOS, 'COMBINED'}
        # all videos: the run's COMBINED; the sparsest third (one video): that video's own metrics, scored again
        expected = metrics['COMBINED'] if row['videos'] == 'all' else metrics[sparsest]
        for key in ('HOTA', 'AssA', 'IDF1'):
            assert row[key] == pytest.approx(expected[key], abs=1e-12), (row, key)
        per_video = [p for p in saved['per_video'] if p['matcher'] == row['matcher']]
        assert {p['video']: p['HOTA'] for p in per_video} == {v: metrics[v]['HOTA'] for v in VIDEOS}
    iou_hota = {p['video']: p['HOTA'] for p in saved['per_video'] if p['matcher'] == 'iou'}
    for p in saved['per_video']:
        assert p['HOTA_gain'] == p['HOTA'] - iou_hota[p['video']]
        assert p['animals_per_frame'] == stats[p['video']]['animals_per_frame']
    assert saved['rows'] == rows and saved['settings']['match_thresh'] == 0.9
    csv_lines = open(work_dir / 'table.csv').read().splitlines()
    assert csv_lines[0] == ('tracker,setting,videos,num_videos,matcher,HOTA,AssA,IDF1,run_id,HOTA_gain,'
                            'HOTA_gain_low,HOTA_gain_high')
    # the intervals over resamples of the two videos contain the gain; one video (the sparsest third): no spread
    for row in rows:
        if row['matcher'] == 'iou':
            assert row['HOTA_gain_low'] is None and row['HOTA_gain_high'] is None
        else:
            assert row['HOTA_gain_low'] <= row['HOTA_gain'] + 1e-12 and row['HOTA_gain'] - 1e-12 <= row[
                'HOTA_gain_high']
            if row['videos'] == 'sparsest third':
                assert row['HOTA_gain_low'] == pytest.approx(row['HOTA_gain'], abs=1e-12) == row['HOTA_gain_high']
    assert result['targets'] == [] and not osp.exists(work_dir / 'targets.csv')  # no candidate among the matchers
    assert len(csv_lines) == 5 and csv_lines[3].startswith('bytetrack,10fps,sparsest third,1,iou,')
    with open(work_dir / 'gain.png', 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'


@needs_at10
def test_a_second_invocation_reuses_every_run(bytetrack_study):
    work_dir, args, first = bytetrack_study
    again = tool(STUDY, *args)
    assert (again['computed'], again['reused']) == (0, 2)
    assert again['rows'] == first['rows']
