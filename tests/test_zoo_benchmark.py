"""The model zoo's tracker listing and the zoo benchmark (tools/zoo_benchmark.py) on cached detections."""
import json
import os.path as osp

import pytest

from conftest import REPO, tool

from vastmat.models.trackers import zoo_trackers


def test_zoo_lists_registered_trackers_with_a_zoo_name():
    import helpers.toy_tracker  # noqa: F401  (a registered tracker without zoo_name: a test double)
    names = {t.name: t for t in zoo_trackers()}
    assert 'ByteTrack' in names and names['ByteTrack'].type == 'BYTETracker'
    assert 'ToyInputTracker' not in {t.type for t in names.values()}
    assert names['ByteTrack'].config(dict(type='CDA')) == dict(type='BYTETracker', matcher=dict(type='CDA'))


@pytest.fixture(scope='module')
def demo_dets(demo_root, tmp_path_factory):
    out = tmp_path_factory.mktemp('demo_dets')
    tool('tools/data/simulate_detections.py', '--data-root', demo_root, '--out', out, '--split', 'protocol1/test')
    return str(out)


def test_zoo_benchmark_on_cached_detections_matches_tools_test(demo_root, demo_dets, tmp_path):
    out = tool('tools/zoo_benchmark.py', '--data-root', demo_root, '--det-root', demo_dets, '--work-dir',
               tmp_path / 'zoo', '--matchers', 'original', 'cda_fixed')
    rows = out['table8']['protocol1']
    assert set(rows) == {'ByteTrack + original', 'ByteTrack + cda_fixed'}
    assert out['table5']['ByteTrack']['protocol1/HOTA'] == rows['ByteTrack + original']['HOTA']
    # the zoo's runner-free path gives what tools/test.py gives on the same detections
    for matcher, config in (('original', 'bytetrack_cached-dets.py'), ('cda_fixed', 'bytetrack_cached-dets_cda-fixed.py')):
        metrics = tool('tools/test.py', osp.join(REPO, 'configs', 'bytetrack', config), '--det-root', demo_dets,
                       '--data-root', demo_root, '--work-dir', tmp_path / matcher)
        assert metrics['vastmat/HOTA'] == rows[f'ByteTrack + {matcher}']['HOTA']
        assert metrics['vastmat/IDSW'] == rows[f'ByteTrack + {matcher}']['IDSW']
    assert rows['ByteTrack + original']['HOTA'] > 0.3  # simulated detections of the ground truth: far from zero
    for name in ('zoo.json', 'table5.csv', 'table8.csv', 'hota_cdf.png', 'hota_by_tracker.png'):
        assert osp.getsize(tmp_path / 'zoo' / name) > 0, name
    saved = json.load(open(tmp_path / 'zoo' / 'zoo.json'))
    assert saved['detections']['protocol1']['source'] == 'given'


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


def test_zoo_tracker_without_its_inputs_is_skipped_and_reported(demo_root, demo_dets, tmp_path):
    from vastmat.models.trackers import BYTETracker
    from vastmat.registry import MODELS

    class NeedsFeatures(BYTETracker):  # a zoo tracker that reads appearance features the det.txt files lack
        zoo_name = 'NeedsFeatures'
        required_inputs = ('features', )

    MODELS.register_module(module=NeedsFeatures, force=True)
    try:
        out = tool('tools/zoo_benchmark.py', '--data-root', demo_root, '--det-root', demo_dets, '--work-dir',
                   tmp_path, '--matchers', 'original')
    finally:
        MODELS.module_dict.pop('NeedsFeatures')
    assert set(out['table8']['protocol1']) == {'ByteTrack + original'}
    assert 'features' in out['skipped']['protocol1/NeedsFeatures/original']
    # given det.txt files without the NMS-0.95 set, TrackTrack is skipped naming it; DiffMOT without a trained D2MP
    assert 'nms95' in out['skipped']['protocol1/TrackTrack/original']
    assert 'motion.checkpoint' in out['skipped']['protocol1/DiffMOT/original']
