"""The model zoo's tracker listing and the zoo benchmark (tools/zoo_benchmark.py) on cached detections."""
import copy
import dataclasses
import glob
import json
import os
import os.path as osp
import shutil

import pytest

from helpers.common import REPO, tool

from vastmat.models.trackers import zoo_trackers


def test_zoo_lists_registered_trackers_with_a_zoo_name():
    import helpers.toy_tracker  # noqa: F401  (a registered tracker without zoo_name: a test double)
    names = {t.name: t for t in zoo_trackers()}
    assert 'ByteTrack' in names and names['ByteTrack'].type == 'BYTETracker'
    assert 'ToyInputTracker' not in {t.type for t in names.values()}
    assert names['ByteTrack'].config(dict(type='CDA')) == dict(type='BYTETracker', matcher=dict(type='CDA'))
    # the eight trackers of the paper, each with what the zoo trains for it, declared on its class
    assert {'ByteTrack', 'TrackTrack', 'DiffMOT', 'QDTrack', 'FairMOT', 'TransTrack', 'MOTIP', 'TCEI'} <= set(names)
    assert names['ByteTrack'].on_cached_detections and not names['ByteTrack'].demo_parts
    assert set(names['TrackTrack'].demo_parts) == {'features'} and set(names['DiffMOT'].demo_parts) == {'motion'}
    assert names['QDTrack'].type == 'QDTrackTracker' and not names['QDTrack'].takes_matcher
    assert not names['MOTIP'].takes_matcher and names['TransTrack'].takes_matcher and names['FairMOT'].takes_matcher
    assert names['TCEI'].checkpoint_of == 'MOTIP' and not names['TCEI'].on_cached_detections
    for member in names.values():
        for config in [member.demo_config, *member.demo_parts.values()]:
            assert config is None or osp.isfile(config), (member.name, config)
    with pytest.raises(ValueError, match='takes no matcher'):
        names['MOTIP'].config(dict(type='CDA'))


def test_zoo_benchmark_on_cached_detections_matches_tools_test(demo_root, demo_dets, tmp_path):
    out = tool('tools/zoo_benchmark.py', '--data-root', demo_root, '--det-root', demo_dets, '--work-dir',
               tmp_path / 'zoo', '--matchers', 'original', 'cda_fixed,alpha=0.5', '--trackers', 'ByteTrack')
    rows = out['table8']['protocol1']
    assert set(rows) == {'ByteTrack + original', 'ByteTrack + cda_fixed,alpha=0.5'}
    assert out['table5']['ByteTrack']['protocol1/HOTA'] == rows['ByteTrack + original']['HOTA']
    # the zoo's runner-free path gives what tools/test.py gives on the same detections
    for matcher in ('original', 'cda_fixed,alpha=0.5'):  # a matcher with its keys, as --matcher takes it
        metrics = tool('tools/test.py', osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py'),
                       '--det-root', demo_dets, '--data-root', demo_root,
                       '--work-dir', tmp_path / matcher.split(',')[0], '--matcher', matcher)
        assert metrics['vastmat/HOTA'] == rows[f'ByteTrack + {matcher}']['HOTA']
        assert metrics['vastmat/IDSW'] == rows[f'ByteTrack + {matcher}']['IDSW']
    assert rows['ByteTrack + original']['HOTA'] > 0.3  # simulated detections of the ground truth: far from zero
    # Table 5's linked columns: the zoo links the results file; tools/test.py --link links inside the model
    linked = tool('tools/test.py', osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py'),
                  '--det-root', demo_dets, '--data-root', demo_root, '--work-dir', tmp_path / 'linked', '--link')
    assert out['table5']['ByteTrack']['protocol1/linked/HOTA'] == linked['vastmat/HOTA']
    assert out['table5']['ByteTrack']['protocol1/linked/IDSW'] == linked['vastmat/IDSW']
    reports = json.load(open(tmp_path / 'linked' / 'linking.json'))
    assert [r['video'] for r in reports] == sorted(out['linked']['protocol1']['ByteTrack']['reports'])
    for name in ('zoo.json', 'table5.csv', 'table8.csv', 'hota_cdf.png', 'hota_by_tracker.png'):
        assert osp.getsize(tmp_path / 'zoo' / name) > 0, name
    saved = json.load(open(tmp_path / 'zoo' / 'zoo.json'))
    assert saved['detections']['protocol1']['source'] == 'given'


def test_a_tracker_that_tests_anothers_checkpoint_waits_for_it():
    """The launcher's order of the zoo's trackers: MOTIP is trained as a task of its own, then its tests and TCEI's
    (MOTIP's checkpoint) start; alone, TCEI starts at once (its task trains MOTIP); the trackers that need the
    detector's task wait for it."""
    from vastmat.experiments.zoo_benchmark import ready_member, task_queue
    names = {t.name: t for t in zoo_trackers()}
    members = [names['MOTIP'], names['TCEI'], names['ByteTrack']]
    waiting, finished = task_queue(members), {'detector'}  # the detections and shared trainings are done
    assert [(m.name, phase) for m, phase in waiting] == [('MOTIP', 'train'), ('MOTIP', 'test'), ('TCEI', 'all'),
                                                        ('ByteTrack', 'all')]
    assert ready_member(waiting, finished, members) == (names['MOTIP'], 'train')
    assert ready_member(waiting, finished, members) == (names['ByteTrack'], 'all')
    assert ready_member(waiting, finished, members) is None and len(waiting) == 2
    finished |= {'MOTIP training'}
    assert ready_member(waiting, finished, members) == (names['MOTIP'], 'test')
    assert ready_member(waiting, finished, members) == (names['TCEI'], 'all') and not waiting
    alone = [names['TCEI']]
    assert ready_member(task_queue(alone), set(), alone) == (names['TCEI'], 'all')
    # in the plan's order (longest first), each phase in the place of its task: MOTIP's training early, its tests'
    # short task late, as the plan's makespan lays them out
    order = ['detector', 'MOTIP training', 'ByteTrack', 'TCEI', 'MOTIP']
    assert [(m.name, phase) for m, phase in task_queue(members, order)] == [
        ('MOTIP', 'train'), ('ByteTrack', 'all'), ('TCEI', 'all'), ('MOTIP', 'test')]
    # until the detector's task is done, only a tracker that needs neither its boxes nor its backbone starts
    beside = [names['MOTIP'], names['QDTrack'], names['FairMOT']]
    waiting = task_queue(beside)
    assert ready_member(waiting, set(), beside)[0].name == 'FairMOT' and ready_member(waiting, set(), beside) is None
    assert ready_member(waiting, {'detector'}, beside)[0].name == 'MOTIP'


def test_zoo_benchmark_user_errors(demo_root, tmp_path, capsys):
    from vastmat.engine.cli import run_cli
    module_main = lambda argv: tool('tools/zoo_benchmark.py', *argv)  # noqa: E731
    with pytest.raises(SystemExit) as exit_info:
        run_cli(module_main, ['--data-root', str(tmp_path / 'absent'), '--det-root', str(tmp_path)])
    assert exit_info.value.code == 2
    assert 'not a VastMAT root' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run_cli(module_main, ['--data-root', demo_root, '--matchers', 'cda_fast'])
    assert "matcher 'cda_fast'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run_cli(module_main, ['--data-root', demo_root, '--protocols', 'protocol1', 'protocol2', '--det-root',
                              str(tmp_path)])
    assert 'PROTOCOL=PATH' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run_cli(module_main, ['--data-root', demo_root, '--trackers', 'ByteTrack', 'SORTish'])
    assert 'SORTish: not a zoo tracker' in capsys.readouterr().err


def test_zoo_tracker_without_its_inputs_is_skipped_and_reported(demo_root, demo_dets, tmp_path):
    from vastmat.models.trackers import BYTETracker
    from vastmat.registry import MODELS

    class NeedsFeatures(BYTETracker):  # a zoo tracker that reads appearance features the det.txt files lack
        zoo_name = 'NeedsFeatures'
        required_inputs = ('features', )

    MODELS.register_module(module=NeedsFeatures, force=True)
    try:
        out = tool('tools/zoo_benchmark.py', '--data-root', demo_root, '--det-root', demo_dets, '--work-dir',
                   tmp_path, '--matchers', 'original', '--trackers', 'ByteTrack', 'NeedsFeatures', 'TrackTrack',
                   '--train-iters', '2')
    finally:
        MODELS.module_dict.pop('NeedsFeatures')
    assert set(out['table8']['protocol1']) == {'ByteTrack + original'}
    assert 'features' in out['skipped']['protocol1/NeedsFeatures/original']
    # given det.txt files without the NMS-0.95 set, TrackTrack (its ReID model trained) is skipped naming it
    assert 'nms95' in out['skipped']['protocol1/TrackTrack/original']


@pytest.mark.xdist_group('zoo_all')
def test_zoo_trains_every_learned_tracker_and_reuses_the_trainings(demo_root, tmp_path):
    """The main job's chain with 2-iteration trainings: all eight trackers in Table 5, each learned one scored at
    its kept checkpoints; a second run trains nothing."""
    work = tmp_path / 'zoo'
    out = tool('tools/zoo_benchmark.py', '--data-root', demo_root, '--work-dir', work, '--train-iters', '2',
               '--matchers', 'original', 'cda_fixed', '--threshold-scales', '0.5', '1.0')
    eight = {'ByteTrack', 'TrackTrack', 'DiffMOT', 'QDTrack', 'FairMOT', 'TransTrack', 'MOTIP', 'TCEI'}
    assert eight <= set(out['table5']), out['skipped']
    rows8 = set(out['table8']['protocol1'])
    for name in ('ByteTrack', 'TrackTrack', 'DiffMOT', 'FairMOT', 'TransTrack'):  # the trackers taking a matcher
        assert {f'{name} + original', f'{name} + cda_fixed'} <= rows8
    for name in ('QDTrack', 'MOTIP', 'TCEI'):
        assert f'{name} + original' in rows8 and f'{name} + cda_fixed' not in rows8
    training = out['training']['protocol1']
    for name in eight - {'ByteTrack'}:
        curve = out['curves']['protocol1'][name]
        assert [p['iteration'] for p in curve] == [1, 2], name  # every kept checkpoint scored
        assert training[name]['HOTA_first'] == curve[0]['HOTA'] and training[name]['HOTA'] == curve[-1]['HOTA']
        assert training[name]['iterations'] == 2 and not training[name]['reused']
    assert out['table5']['TCEI']['protocol1/HOTA'] == training['TCEI']['HOTA']
    assert training['TCEI']['learned'] == 'checkpoint of MOTIP'
    assert training['ByteTrack']['learned'] == 'detector'
    assert training['DiffMOT']['learned'] == 'D2MP (motion)'
    assert osp.getsize(work / 'hota_vs_training.png') > 0
    # TrackTrack's ReID features at each scored checkpoint: one set of boxes through the ReID model, the other
    # (here both empty: a 2-iteration detector) given the features of the same boxes
    dumps = glob.glob(str(work / 'protocol1' / 'features' / '*' / 'iter_*'))
    assert len(dumps) == 2, dumps  # the first kept checkpoint and the last
    for folder in dumps:
        records = {name: json.load(open(osp.join(folder, name, 'dump_done.json'))) for name in os.listdir(folder)}
        assert len(records) == 2 and sorted(r['features_of'] is None for r in records.values()) == [False, True]
        assert {osp.basename(r['features_of']) for r in records.values() if r['features_of']} < set(records)
    # the one threshold rule: every joint and end-to-end model at the scale of the official thresholds that tracks
    # the dev videos best (ties: the larger), recorded with the dev HOTA of every scale
    from mmengine.config import Config

    from vastmat.models.trackers.zoo import config_path
    thresholds = out['thresholds']['protocol1']
    assert set(thresholds) == {'FairMOT', 'QDTrack', 'TransTrack', 'MOTIP', 'TCEI'}
    for name, chosen in thresholds.items():
        hota = chosen['hota']
        # --threshold-scales given: that grid for every threshold (MOTIP's own detection-threshold grid unused)
        assert set(hota) == {'0.5', '1'} and chosen['split'] == 'dev'
        assert chosen['label'] == ('1' if hota['1'] >= hota['0.5'] else '0.5'), name
        assert training[name]['thresholds'] == chosen['label']
    motip = Config.fromfile(config_path('motip/motip_tiny_zoo_vastmat-demo.py'))
    scale = float(thresholds['MOTIP']['label'])
    assert thresholds['MOTIP']['scales'] == {key: scale for key in motip.zoo_official_thresholds}
    assert thresholds['MOTIP']['thresholds'] == {key: round(value * scale, 4)
                                                 for key, value in motip.zoo_official_thresholds.items()}
    # what the spread benchmark reads of a run: the test HOTA of each tracker, the dev HOTA of the calibrated ones
    from vastmat.benchmarks.demo_spread import read_run
    read = read_run(str(work))
    assert set(read) == set(out['table5'])
    for name, row in read.items():
        assert row['test'] == out['table5'][name]['protocol1/HOTA'], name
        label = thresholds.get(name, {}).get('label')
        assert row['dev'] == (None if label is None else thresholds[name]['hota'][label]), name
        assert set(row['videos']) == set(out['runs']['protocol1'][f'{name}/original']) - {'COMBINED', 'seconds'}, name
    # a work dir that moves: its copy, run with --work-dir, trains nothing and gives the same tables (MOTIP's and
    # TCEI's tests of the last checkpoint run again there, on the copied checkpoints: the chain of the DETR
    # pre-training, MOTIP and TCEI on MOTIP's checkpoint)
    moved = tmp_path / 'moved' / 'zoo'
    shutil.copytree(work, moved)
    for name in ('MOTIP', 'TCEI'):
        tests = glob.glob(str(moved / 'protocol1' / 'training' / '*' / '*' / 'tests' / name / '**' / 'original' /
                              'metrics.json'), recursive=True)
        assert tests, name
        for metrics in tests:
            os.remove(metrics)
    dumps = {name: os.stat(moved / 'protocol1' / name / 'detections_done.json').st_mtime_ns
             for name in ('dets', 'dets_nms95')}
    again = tool('tools/zoo_benchmark.py', '--data-root', demo_root, '--work-dir', moved, '--train-iters', '2',
                 '--matchers', 'original', 'cda_fixed', '--threshold-scales', '0.5', '1.0')
    assert all(row['reused'] for row in again['training']['protocol1'].values())
    assert dumps == {name: os.stat(moved / 'protocol1' / name / 'detections_done.json').st_mtime_ns
                     for name in dumps}  # the detector's boxes of the same test found, not dumped again
    assert again['table5'] == out['table5'] and again['table8'] == out['table8']
    # a subset in the same work dir: its outputs are its own, no plot of the full run's learned trackers left behind
    subset = tool('tools/zoo_benchmark.py', '--data-root', demo_root, '--work-dir', work, '--train-iters', '2',
                  '--trackers', 'ByteTrack', '--matchers', 'original')
    assert set(subset['table5']) == {'ByteTrack'} and not osp.exists(work / 'hota_vs_training.png')


def test_the_detectors_boxes_are_dumped_once_per_test(demo_root, tmp_path, monkeypatch):
    """The zoo's detector test (its metrics and boxes) runs again only where what it tests changed (the checkpoint's
    content, the NMS) or a test video's boxes are missing; a moved work dir finds it (test_zoo_trains_every...)."""
    from vastmat.experiments import zoo_scoring
    from vastmat.experiments.zoo_context import ZooContext
    runs = []

    def run_detector_test(cfg, out_dir):
        runs.append((osp.basename(cfg.load_from), cfg.model.test_cfg.nms))
        os.makedirs(out_dir, exist_ok=True)
        for video in ctx.videos:  # the boxes of the test split's videos
            open(osp.join(out_dir, f'{video}.txt'), 'w').close()
        return {'det/AP50': 0.5 + len(runs)}
    monkeypatch.setattr(zoo_scoring, 'run_detector_test', run_detector_test)
    ctx = ZooContext(demo_root, 'protocol1', ['Bee-1', 'Deer-2'], str(tmp_path / 'protocol1'))
    config = zoo_scoring.config_path('yolox/yolox_tiny_1xb8-1200it_vastmat-demo.py')
    first, second = tmp_path / 'iter_1.pth', tmp_path / 'iter_2.pth'
    first.write_bytes(b'weights 1')
    second.write_bytes(b'weights 22')

    def dump(checkpoint, nms_iou=None, videos=None):
        run = dataclasses.replace(ctx, videos=videos or ctx.videos)
        return zoo_scoring.detect_once(run, config, str(checkpoint), str(tmp_path / 'work'), str(tmp_path / 'dets'),
                                       nms_iou)
    assert dump(first) == {'det/AP50': 1.5} and dump(first) == {'det/AP50': 1.5} and len(runs) == 1
    assert dump(second) == {'det/AP50': 2.5} and len(runs) == 2  # another checkpoint
    assert dump(second, nms_iou=0.95) == {'det/AP50': 3.5} and len(runs) == 3
    first.write_bytes(b'weights 22')  # the same content under another name: the same test
    assert dump(first, nms_iou=0.95) == {'det/AP50': 3.5} and len(runs) == 3
    assert dump(first, nms_iou=0.95, videos=['Bee-1', 'Cow-9']) == {'det/AP50': 4.5} and len(runs) == 4  # no boxes


def test_tracktracks_features_are_computed_for_the_nms95_rows_it_reads(tmp_path):
    """TrackTrack's NMS-0.95 set, cut to the rows the tracker reads before the ReID model computes their features:
    those without a near twin (IoU >= 0.97) among the main boxes of their frame and above its lowest det_thr, as
    written; once per content; another tracker's sets as they are."""
    from vastmat.experiments.zoo_context import ZooContext
    from vastmat.experiments.zoo_scoring import rows_read_roots
    main, extra = tmp_path / 'dets', tmp_path / 'dets_nms95'
    main.mkdir()
    extra.mkdir()
    (main / 'A.txt').write_text('1,-1,0,0,10,10,0.9,-1,-1,-1\n2,-1,50,50,10,10,0.9,-1,-1,-1\n')
    lines = ['1,-1,0,0,10,10,0.9,-1,-1,-1',  # the main box itself
             '1,-1,3,0,10,10,0.7,-1,-1,-1',  # suppressed by it, above 0.6: read
             '1,-1,30,0,10,10,0.5,-1,-1,-1',  # suppressed, 0.5: read at det_thr 0.4 only
             '2,-1,50.1,50,10,10,0.8,-1,-1,-1',  # a near twin (IoU 0.98)
             '3,-1,0,0,10,10,0.9,-1,-1,-1']  # a frame without main boxes: the tracker only ages its tracks
    (extra / 'A.txt').write_text('\n'.join(lines) + '\n')
    ctx = ZooContext(str(tmp_path), 'protocol1', ['A'], str(tmp_path / 'protocol1'))
    roots = dict(nms95=str(extra))
    assert rows_read_roots(ctx, dict(type='BYTETracker'), str(main), roots) == roots
    cut = rows_read_roots(ctx, dict(type='TrackTrackTracker'), str(main), roots)['nms95']
    assert open(osp.join(cut, 'A.txt')).read() == lines[1] + '\n'
    written = os.stat(osp.join(cut, 'A.txt')).st_mtime_ns
    assert rows_read_roots(ctx, dict(type='TrackTrackTracker'), str(main), roots)['nms95'] == cut
    assert os.stat(osp.join(cut, 'A.txt')).st_mtime_ns == written  # the same sets: not written again
    tracker = dict(type='TrackTrackTracker', video_overrides=[dict(contains='A', det_thr=0.4)])
    lower = rows_read_roots(ctx, tracker, str(main), roots)['nms95']
    assert open(osp.join(lower, 'A.txt')).read().splitlines() == lines[1:3]


def test_zoo_configs_start_from_the_demo_detectors_backbone():
    """The shared backbone fragment is the demo YOLOX's backbone, and the zoo configs that declare it load it."""
    from mmengine.config import Config

    from vastmat.models.trackers.zoo import config_path
    fragment = Config.fromfile(config_path('_base_/models/yolox_demo_backbone.py'))
    detector = Config.fromfile(config_path(fragment.zoo_pretrained_backbone))
    backbone = {k: v for k, v in fragment.demo_backbone.items() if k != '_delete_'}
    assert backbone == detector.model.backbone.to_dict()
    assert detector.model.data_preprocessor.get('mean') is None  # YOLOX reads raw BGR frames, as the fragment says
    for name in ('qdtrack/qdtrack_tiny_zoo_vastmat-demo.py', 'transtrack/transtrack_tiny_zoo_vastmat-demo.py',
                 'motip/motip_tiny_zoo_vastmat-demo.py'):
        cfg = Config.fromfile(config_path(name))
        assert cfg.zoo_pretrained_backbone == fragment.zoo_pretrained_backbone, name
        assert cfg.model.detector.backbone.type == 'CSPDarknet' and 'depth' not in cfg.model.detector.backbone
        assert cfg.model.data_preprocessor.mean == [0.0, 0.0, 0.0] and not cfg.model.data_preprocessor.bgr_to_rgb


def test_zoo_motip_trains_in_two_stages_as_the_official(demo_root, tmp_path, monkeypatch):
    """The zoo's MOTIP starts from its own DETR pre-training (zoo_load_from), which starts from the demo YOLOX's
    backbone: planned, launched and trained in that order, each stage from the checkpoint of the one before."""
    from mmengine.config import Config

    from vastmat.experiments import zoo, zoo_training_order
    from vastmat.experiments.zoo_context import ZooContext
    from vastmat.experiments.zoo_training import Training
    from vastmat.models.trackers.zoo import config_path
    detector = config_path('yolox/yolox_tiny_1xb8-1200it_vastmat-demo.py')
    pretrain = config_path('motip/motip_tiny_zoo_vastmat-demo_detr-pretrain.py')
    motip = config_path('motip/motip_tiny_zoo_vastmat-demo.py')
    first, second = Config.fromfile(pretrain), Config.fromfile(motip)
    assert config_path(second.zoo_load_from) == pretrain and first.zoo_load_from is None
    assert first.model.only_detr and first.model.num_train_frames == 1 and not second.model.get('only_detr')
    assert first.train_pipeline[0].clip_length == 1
    # the same network in both stages, so that the MOTIP training loads every pre-trained weight
    assert first.model.detector == second.model.detector and first.model.tracker == second.model.tracker

    members = {m.name: m for m in zoo_trackers()}
    # MOTIP's task trains the detector, its pre-training and itself; TCEI waits for it and trains nothing; with
    # QDTrack beside them the detector (the backbone of both) is trained first, once
    assert zoo_training_order.task_trainings(members['MOTIP'], members, {'MOTIP', 'TCEI'}) == [detector, pretrain, motip]
    assert zoo_training_order.task_trainings(members['TCEI'], members, {'MOTIP', 'TCEI'}) == []
    assert zoo_training_order.task_trainings(members['TCEI'], members, {'TCEI'}) == [detector, pretrain, motip]
    assert zoo_training_order.shared_sources([members['MOTIP'], members['TCEI']], members) == []
    assert zoo_training_order.shared_sources([members['MOTIP'], members['TCEI'], members['QDTrack']], members) == [detector]
    ctx = ZooContext(demo_root, 'protocol1', [], str(tmp_path / 'protocol1'), log=lambda text: None)
    plan = zoo_training_order.training_plan(ctx, [members['MOTIP']])
    assert [config for _, config, _ in plan] == [detector, pretrain, motip]
    assert plan[1][0] == 'start of MOTIP: motip_tiny_zoo_vastmat-demo_detr-pretrain.py'
    assert all(seconds > 0 for _, _, seconds in plan)  # nothing trained yet

    started = []

    def fake_train_once(cfg, iters, num_checkpoints):  # records where each stage starts, trains nothing
        started.append((osp.basename(cfg.filename), cfg.get('load_from'),
                        cfg.model.get('detector', cfg.model).get('backbone', {}).get('init_cfg')))
        return Training(cfg.work_dir, [(2, osp.join(cfg.work_dir, f'{len(started)}.pth'))], 1.0, 2, reused=False)

    monkeypatch.setattr(zoo, 'train_once', fake_train_once)
    training = zoo.train(ctx, motip, 'MOTIP')
    (name0, load0, _), (name1, load1, init1), (name2, load2, init2) = started
    assert (name0, name1, name2) == tuple(osp.basename(c) for c in (detector, pretrain, motip))
    assert load0 is None and load1 is None and load2.endswith('/2.pth')  # MOTIP from the pre-training
    assert init1['checkpoint'].endswith('/1.pth') and init1['prefix'] == 'backbone.'  # from the YOLOX's backbone
    # MOTIP's minutes include its pre-training's (an earlier stage), not the detector's (another model)
    assert training.earlier_seconds == 1.0 and training.minutes(2) == 2.0 / 60 and training.total_seconds == 2.0


def test_zoo_refuses_configs_that_start_from_each_other(tmp_path):
    from vastmat.experiments.zoo import source_order
    from vastmat.utils.errors import UserInputError
    first, second = tmp_path / 'first.py', tmp_path / 'second.py'
    first.write_text(f"zoo_load_from = '{second}'\n")
    second.write_text(f"zoo_pretrained_backbone = '{first}'\n")
    with pytest.raises(UserInputError, match=r'in a loop \(first.py -> second.py -> first.py'):
        source_order(str(first))
    second.write_text('')
    assert source_order(str(first)) == [str(second)]


def test_zoo_training_schedule_and_identity(demo_root, tmp_path, monkeypatch):
    """Evenly spaced checkpoints, the last at the end; the work dir's hash ignores the progress label but not the
    settings; an epoch-based config is refused."""
    from mmengine.config import Config

    from vastmat.experiments.zoo_training import _identity, set_schedule, zoo_config
    from vastmat.models.trackers.zoo import config_path
    config = config_path('d2mp/d2mp_tiny_zoo_vastmat-demo.py')
    cfg = zoo_config(config, demo_root, 'protocol1', str(tmp_path), 'one label')
    assert cfg.train_dataloader.dataset.data_root == demo_root
    assert set_schedule(cfg, 200, 3) == 200
    assert cfg.default_hooks.checkpoint.interval == 67 and cfg.default_hooks.checkpoint.save_last  # 67, 134, 200
    assert set_schedule(zoo_config(config, demo_root, 'protocol1', str(tmp_path), 'x'), 2, 3) == 2
    other = zoo_config(config, demo_root, 'protocol1', str(tmp_path), 'another label')
    set_schedule(other, 200, 3)
    assert _identity(other) == _identity(cfg)
    other.zoo_seconds_per_iter = 9.9  # the expected time is shown, not trained
    assert _identity(other) == _identity(cfg)
    # one thread count unless asked (reproducible trainings); a training with the hook is another training
    assert 'AdaptiveThreadsHook' not in {h['type'] for h in cfg.custom_hooks}
    shared = zoo_config(config, demo_root, 'protocol1', str(tmp_path), 'one label', adaptive_threads=True)
    assert 'AdaptiveThreadsHook' in {h['type'] for h in shared.custom_hooks}
    set_schedule(shared, 200, 3)
    assert _identity(shared) != _identity(cfg)  # its thread switches change the trained model: never reused
    # what is trained, never where: another work dir, a copy of the data root or of the checkpoint it starts from
    # is the same training; another checkpoint's content, or other data, is another
    for name, content in (('a.pth', b'weights a'), ('copy_of_a.pth', b'weights a'), ('b.pth', b'weights b')):
        (tmp_path / name).write_bytes(content)
    started = {}
    for name in ('a.pth', 'copy_of_a.pth', 'b.pth'):
        started[name] = copy.deepcopy(other)
        started[name].load_from = str(tmp_path / name)
    assert _identity(started['a.pth']) == _identity(started['copy_of_a.pth']) != _identity(started['b.pth'])
    assert _identity(started['a.pth']) != _identity(other)
    elsewhere = zoo_config(config, demo_root, 'protocol1', str(tmp_path / 'moved'), 'one label')
    set_schedule(elsewhere, 200, 3)
    assert _identity(elsewhere) == _identity(cfg)
    data_copy = tmp_path / 'data_copy'
    shutil.copytree(demo_root, data_copy, ignore=shutil.ignore_patterns('img1'))
    copied = zoo_config(config, str(data_copy), 'protocol1', str(tmp_path), 'one label')
    set_schedule(copied, 200, 3)
    assert _identity(copied) == _identity(cfg)
    with open(data_copy / 'splits' / 'protocol1' / 'train.txt', 'a', encoding='utf-8') as f:
        f.write('Bee-1\n')
    assert _identity(copied) != _identity(cfg)
    set_schedule(other, 201, 3)
    assert _identity(other) != _identity(cfg)
    # trainings are kept by seed and by CPU kernel setting (float32 sums differ under each)
    seeded = zoo_config(config, demo_root, 'protocol1', str(tmp_path), 'one label', seed=1)
    set_schedule(seeded, 200, 3)
    assert seeded.randomness.seed == 1 and _identity(seeded) != _identity(cfg)
    assert _identity(zoo_config(config, demo_root, 'protocol1', str(tmp_path), 'x', seed=0)) == _identity(
        zoo_config(config, demo_root, 'protocol1', str(tmp_path), 'x'))  # the configs' own seed is 0
    from vastmat.experiments.zoo_training import KERNEL_VARIABLES
    for name in KERNEL_VARIABLES:  # (the suite may run under an emulated machine's settings)
        monkeypatch.delenv(name, raising=False)
    plain = _identity(cfg)
    monkeypatch.setenv('ATEN_CPU_CAPABILITY', 'avx2')
    assert _identity(cfg) != plain
    epochs = Config.fromfile(config_path('d2mp/d2mp_1xb2048-800e_vastmat-p1.py'))
    with pytest.raises(ValueError, match='trains by iterations'):
        set_schedule(epochs, None, 3)


def test_expected_time_lays_the_tasks_out_as_the_workers_take_them(demo_root, tmp_path):
    """The plan: the longest task first; a worker takes the first ready task; TCEI starts when MOTIP ends; the
    detector and the backbone the tasks share run first, here, at 2 threads."""
    from vastmat.experiments import zoo
    from vastmat.experiments.zoo_context import ZooContext
    from vastmat.experiments.zoo_plan import TWO_THREADS_SPEEDUP, TaskPlan, longest_first, makespan, task_plans
    tasks = [TaskPlan('A', [('a', 10.0)], 0.0), TaskPlan('B', [], 3.0), TaskPlan('C', [], 4.0, after='A'),
             TaskPlan('D', [('d', 6.0)], 1.0)]
    assert [t.name for t in longest_first(tasks)] == ['A', 'D', 'C', 'B']  # A with C waiting for it: 14 s
    assert makespan(longest_first(tasks), 2) == 14.0  # A 0-10, C 10-14 | D 0-7, B 7-10
    assert makespan(longest_first(tasks), 1) == 24.0
    assert makespan([TaskPlan('C', [], 4.0, after='A'), TaskPlan('A', [], 10.0)], 2) == 14.0  # C waits
    members = {m.name: m for m in zoo_trackers()}
    ctx = ZooContext(demo_root, 'protocol1', [], str(tmp_path / 'protocol1'), log=lambda text: None)
    selected = [members[n] for n in ('ByteTrack', 'MOTIP', 'TCEI', 'QDTrack')]
    detector = zoo.DEMO_DETECTOR
    first, plans = task_plans(ctx, selected, members, ['original'], 2, detector)
    by_name = {p.name: p for p in plans}
    # two workers: the detector and its detections are the first task; whoever tracks its boxes or starts from its
    # backbone waits for it (all four here), TCEI for MOTIP
    assert first == [] and plans[0].name == 'detector'
    assert [label for label, _ in by_name['detector'].trainings] == ['detector: ' + osp.basename(detector)]
    assert by_name['detector'].test_seconds > 0
    # MOTIP trains as a task of its own; its tests and TCEI's wait for it
    assert {p.name: p.after for p in plans[1:]} == {
        'ByteTrack': 'detector', 'MOTIP training': 'detector', 'MOTIP': 'MOTIP training', 'TCEI': 'MOTIP training',
        'QDTrack': 'detector'}
    assert [label.split(': ')[1] for label, _ in by_name['MOTIP training'].trainings] == [
        'motip_tiny_zoo_vastmat-demo_detr-pretrain.py', 'motip_tiny_zoo_vastmat-demo.py']
    assert by_name['MOTIP training'].test_seconds == 0 and by_name['MOTIP'].trainings == []
    assert by_name['TCEI'].trainings == [] and by_name['TCEI'].test_seconds > 0
    assert by_name['ByteTrack'].trainings == [] and len(by_name['QDTrack'].trainings) == 1
    # FairMOT starts from nothing shared and tracks its own boxes: it trains beside the detector
    fairmot = task_plans(ctx, [members['FairMOT'], members['ByteTrack']], members, ['original'], 2, detector)[1]
    assert {p.name: p.after for p in fairmot} == dict(detector=None, FairMOT=None, ByteTrack='detector')
    assert makespan(longest_first(fairmot), 2) < sum(p.seconds for p in fairmot)
    # one worker: all here, at 2 threads, the detector first
    serial_first, serial = task_plans(ctx, selected, members, ['original'], 1, detector)
    assert [label for label, _ in serial_first] == ['detector: ' + osp.basename(detector), 'its detections']
    assert serial_first[0][1] == pytest.approx(by_name['detector'].trainings[0][1] / TWO_THREADS_SPEEDUP)
    assert all(p.after in (None, 'MOTIP') for p in serial) and 'MOTIP training' not in {p.name for p in serial}
    assert sum(p.seconds for p in serial) == pytest.approx(
        sum(p.seconds for p in plans[1:]) / TWO_THREADS_SPEEDUP)  # the same work, at 2 threads


def test_the_plan_is_paced_by_this_machines_probe(demo_root, tmp_path):
    """zoo_pace: a probe times real training iterations of a zoo config; a config's factor (its probe here against
    the build machine's) scales its training in the plan, the median factor what no probe covers; a training shorter
    than MIN_PROBED_ITERS is not probed (a probe would cost more than it)."""
    from vastmat.experiments import zoo
    from vastmat.experiments.zoo_context import ZooContext
    from vastmat.experiments.zoo_pace import MIN_PROBED_ITERS, MachinePace, measure_pace, probe_seconds_per_iter
    from vastmat.experiments.zoo_plan import configs_to_train, task_plans
    from vastmat.experiments.zoo_training_order import training_config
    from vastmat.models.trackers.zoo import config_path
    ctx = ZooContext(demo_root, 'protocol1', [], str(tmp_path / 'protocol1'), log=lambda text: None)
    d2mp = config_path('d2mp/d2mp_tiny_zoo_vastmat-demo.py')
    cfg = training_config(ctx, d2mp, 'probe')
    assert 0 < probe_seconds_per_iter(cfg, iters=2, warmup=1) < 60
    assert osp.isdir(osp.join(cfg.work_dir, 'pace'))  # its runner's log
    short = training_config(ctx, d2mp, 'probe')
    short.train_cfg.max_iters = MIN_PROBED_ITERS - 1
    assert measure_pace({d2mp: short}).factors == {}
    pace = MachinePace({d2mp: 2.0, 'other.py': 1.0, 'third.py': 4.0})
    assert pace.of(d2mp) == 2.0 and pace.of('unprobed.py') == pace.typical == 2.0
    assert MachinePace().typical == 1.0 and 'x1.00 to x4.00' in pace.describe()
    members = {m.name: m for m in zoo_trackers()}
    diffmot = [members['DiffMOT']]
    assert d2mp in configs_to_train(ctx, diffmot)
    _, plain = task_plans(ctx, diffmot, members, ['original'], 2)
    _, doubled = task_plans(ctx, diffmot, members, ['original'], 2, pace=MachinePace({d2mp: 2.0}))
    assert doubled[0].trainings[0][1] == pytest.approx(2 * plain[0].trainings[0][1])
    assert doubled[0].test_seconds == pytest.approx(2 * plain[0].test_seconds)  # the median factor: 2
    assert zoo.DEMO_DETECTOR not in configs_to_train(ctx, diffmot)  # no detector asked for
