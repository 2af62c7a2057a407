"""The spread benchmark of make demo (tools/benchmark/demo_spread.py): its runs, work dirs and summary."""
import json
import os
import os.path as osp

import pytest

from helpers.common import tool_module
from vastmat.benchmarks.demo_spread import FLOOR, demo_spread, spread_runs, summarise


def test_spread_runs_reuse_make_demos_work_dir_for_the_first_seed():
    runs = spread_runs([0, 1, 2], ['avx2'])
    assert [r.name for r in runs] == ['seed0', 'seed1', 'seed2', 'seed0-avx2']
    assert runs[0].work_dir('W', 0) == 'W'  # make demo's trainings, reused
    assert runs[1].work_dir('W', 0) == osp.join('W', 'spread', 'seed1')
    assert runs[3].work_dir('W', 0) == osp.join('W', 'spread', 'seed0-avx2') and runs[3].kernels == 'avx2'


def test_summary_takes_min_mean_max_over_runs_and_the_floor():
    results = {'seed0': {'A': dict(test=0.30, dev=0.4, videos={}), 'B': dict(test=0.25, dev=None, videos={})},
               'seed1': {'A': dict(test=0.18, dev=0.2, videos={}), 'B': dict(test=0.21, dev=None, videos={})}}
    summary = summarise(results)
    assert summary['A']['min'] == 0.18 and summary['A']['max'] == 0.30 and summary['A']['mean'] == pytest.approx(0.24)
    assert not summary['A']['holds'] and summary['B']['holds'] and FLOOR == 0.20
    assert (summary['A']['dev_min'], summary['A']['dev_max']) == (0.2, 0.4) and summary['B']['dev_min'] is None
    assert summary['A']['runs'] == {'seed0': 0.30, 'seed1': 0.18}


def test_demo_spread_reads_finished_runs_and_saves_the_table(tmp_path, capsys, monkeypatch):
    """Finished runs (a zoo.json in their work dirs) are read, not run again, unless rerun; the table, JSON and plot
    are saved."""
    def zoo_json(hota: float) -> dict:
        videos = {'Bee-1': dict(HOTA=hota - 0.05), 'Horse-1': dict(HOTA=hota + 0.05)}
        return dict(runs=dict(protocol1={'MOTIP/original': dict(videos, COMBINED=dict(HOTA=hota), seconds=1.0),
                                         'ByteTrack/original': dict(videos, COMBINED=dict(HOTA=0.33), seconds=1.0),
                                         'ByteTrack/cda_fixed': dict(videos, COMBINED=dict(HOTA=0.5), seconds=1.0)}),
                    thresholds=dict(protocol1=dict(MOTIP=dict(scale=0.9, hota={'0.5': 0.1, '0.9': 0.27}))))
    for run, hota in zip(spread_runs([0, 1], ['avx2']), (0.236, 0.19, 0.21)):
        work_dir = run.work_dir(str(tmp_path), 0)
        os.makedirs(work_dir, exist_ok=True)
        json.dump(zoo_json(hota), open(osp.join(work_dir, 'zoo.json'), 'w'))
    out = demo_spread([0, 1], ['avx2'], str(tmp_path), [], 'test machine')
    assert out['trackers']['MOTIP']['min'] == 0.19 and out['trackers']['ByteTrack']['max'] == 0.33
    assert out['trackers']['MOTIP']['dev_mean'] == 0.27 and not out['holds']
    assert json.load(open(tmp_path / 'spread' / 'spread.json'))['machine'] == 'test machine'
    assert osp.getsize(tmp_path / 'spread' / 'spread.png') > 0
    printed = capsys.readouterr().out
    assert 'reading' in printed and 'seed0-avx2' in printed and 'MOTIP' in printed
    # after a recipe change, --rerun runs every finished run again (the zoo reuses what did not change)
    import vastmat.benchmarks.demo_spread as spread
    ran = []
    monkeypatch.setattr(spread, 'run_zoo', lambda run, run_dir, zoo_args, log: ran.append(run.name) or 1.0)
    demo_spread([0, 1], ['avx2'], str(tmp_path), [], 'test machine', rerun=True)
    assert ran == ['seed0', 'seed1', 'seed0-avx2']


def test_tool_splits_its_options_from_the_zoos():
    args, zoo_args = tool_module('tools/benchmark/demo_spread.py').parse_args(
        ['--seeds', '3', '4', '--kernels', '--', '--trackers', 'MOTIP', 'TCEI'])
    assert args.seeds == [3, 4] and args.kernels == [] and zoo_args == ['--trackers', 'MOTIP', 'TCEI']
    assert not args.rerun and tool_module('tools/benchmark/demo_spread.py').parse_args(['--rerun'])[0].rerun
    with pytest.raises(SystemExit):
        tool_module('tools/benchmark/demo_spread.py').parse_args(['--seeds', '1', '1'])

