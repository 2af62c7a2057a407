"""tools/analysis/sweep.py on AnimalTrack-10fps-sim: a grid point scores exactly as tools/test.py on the same
config, a second invocation reuses every run, an unknown grid key stops it before anything runs, and the torchrun
shares (the partition, then two ranks as two local processes)."""
import json
import os
import os.path as osp
import subprocess
import sys

import pytest

from conftest import REPO, SHARED_DATA, free_port, tool

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('sweep')]  # one worker makes the alpha sweep once

AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
needs_at10 = pytest.mark.skipif(not osp.isdir(AT10), reason=f'{AT10} not found (../shared/data beside the clone)')
SWEEP = 'tools/analysis/sweep.py'
CDA_FIXED = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets_cda-fixed.py')
VIDEOS = ['chicken_5', 'deer_5', 'dolphin_4', 'zebra_5']  # the four smallest detection files
ALPHA_GRID = 'model.tracker.matcher.alpha=0,0.25,0.5'


def sweep_args(work_dir, *extra):
    return [CDA_FIXED, '--data-root', osp.join(AT10, 'gt'), '--det-root', osp.join(AT10, 'dets'),
            '--work-dir', work_dir, '--videos', *VIDEOS, *extra]


@pytest.fixture(scope='module')
def alpha_sweep(tmp_path_factory):
    work_dir = tmp_path_factory.mktemp('sweep')
    return work_dir, tool(SWEEP, *sweep_args(work_dir, '--grid', ALPHA_GRID, '--workers', '2'))


@needs_at10
def test_a_grid_point_scores_as_tools_test(alpha_sweep, tmp_path):
    work_dir, result = alpha_sweep
    assert result['computed'] == 3 and result['reused'] == 0
    assert [row['params']['alpha'] for row in result['rows']] == ['0', '0.25', '0.5']
    row = next(row for row in result['rows'] if row['params']['alpha'] == '0.25')
    tool('tools/test.py', CDA_FIXED, '--det-root', osp.join(AT10, 'dets'), '--data-root', osp.join(AT10, 'gt'),
         '--work-dir', tmp_path, '--cfg-options', f'test_dataloader.dataset.videos=[{",".join(VIDEOS)}]')
    reference = json.load(open(tmp_path / 'metrics_per_video.json'))
    assert set(reference) == {*VIDEOS, 'COMBINED'}
    assert row['metrics']['HOTA'] == reference['COMBINED']['HOTA']  # same code path: exactly equal
    assert row['metrics']['IDSW'] == reference['COMBINED']['IDSW']
    run_dir = work_dir / 'runs' / row['id']
    metrics = json.load(open(run_dir / 'metrics.json'))
    assert set(metrics) == {*VIDEOS, 'COMBINED'}
    settings = json.load(open(run_dir / 'settings.json'))
    assert settings['options'] == {'model.tracker.matcher.alpha': 0.25} and settings['videos'] == VIDEOS
    assert all(osp.isfile(run_dir / 'results' / f'{video}.txt') for video in VIDEOS)
    for name in ('table.csv', 'table.json', 'alpha.png'):
        assert osp.getsize(work_dir / name) > 0, name
    csv_lines = open(work_dir / 'table.csv').read().splitlines()
    assert csv_lines[0].split(',')[:2] == ['alpha', 'HOTA'] and len(csv_lines) == 4


@needs_at10
def test_a_second_invocation_computes_nothing(alpha_sweep, capsys):
    work_dir, first = alpha_sweep
    again = tool(SWEEP, *sweep_args(work_dir, '--grid', ALPHA_GRID, '--workers', '2'))
    assert (again['computed'], again['reused']) == (0, 3)
    assert '3 runs done before, 0 to run' in capsys.readouterr().out
    assert again['rows'] == first['rows']


@needs_at10
def test_an_unknown_grid_key_is_an_error_naming_it(tmp_path, capsys):
    from vastmat.engine.cli import ConfigKeyError, run_cli
    from vastmat.utils.errors import UserInputError
    with pytest.raises(SystemExit) as exit_info:
        run_cli(lambda argv: tool(SWEEP, *argv), sweep_args(tmp_path, '--grid', 'model.trackr.match_thresh=0.6,0.8'))
    assert exit_info.value.code == 2
    assert "--grid model.trackr.match_thresh: 'trackr' is not a key of model" in capsys.readouterr().err
    # a new argument of a component dict passes the key check, then the component refuses it: before any run
    with pytest.raises(UserInputError, match='match_threshold'):
        tool(SWEEP, *sweep_args(tmp_path, '--grid', 'model.tracker.match_threshold=0.6,0.8'))
    with pytest.raises(ConfigKeyError, match='--base-options model.tracker.kalman'):
        tool(SWEEP, *sweep_args(tmp_path, '--base-options', 'model.tracker.kalman.std=1'))
    assert not osp.exists(tmp_path / 'runs')


def test_torchrun_shares_are_disjoint_and_cover_the_grid():
    sys.path.insert(0, osp.join(REPO, 'tools', 'analysis'))
    from sweep import rank_share
    for num_runs in (0, 1, 5, 9, 16):
        for world_size in (1, 2, 3, 4):
            shares = [rank_share(num_runs, rank, world_size) for rank in range(world_size)]
            flat = [i for share in shares for i in share]
            assert sorted(flat) == list(range(num_runs)), (num_runs, world_size)
            assert max(map(len, shares)) - min(map(len, shares)) <= 1
    with pytest.raises(ValueError):
        rank_share(4, 2, 2)


@needs_at10
def test_two_torchrun_ranks_split_the_runs_and_rank_0_writes_the_table(tmp_path):
    """Two processes with torchrun's environment (gloo barrier on a free local port)."""
    work_dir = tmp_path / 'w'
    args = [sys.executable, osp.join(REPO, SWEEP), CDA_FIXED, '--data-root', osp.join(AT10, 'gt'), '--det-root',
            osp.join(AT10, 'dets'), '--work-dir', str(work_dir), '--videos', *VIDEOS[:2], '--grid',
            'model.tracker.matcher.alpha=0.25,0.75', '--launcher', 'torchrun']
    base = dict(os.environ, PYTHONPATH=REPO, WORLD_SIZE='2', MASTER_ADDR='127.0.0.1', MASTER_PORT=str(free_port()))
    procs = [subprocess.Popen(args, cwd=REPO, env=dict(base, RANK=str(rank), LOCAL_RANK=str(rank)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for rank in (0, 1)]
    outputs = [proc.communicate(timeout=180)[0] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    assert 'rank 0/2: 0 runs done before, 1 to run' in outputs[0]
    assert 'rank 1/2: 0 runs done before, 1 to run' in outputs[1]
    table = json.load(open(work_dir / 'table.json'))
    ranks = sorted(json.load(open(work_dir / 'runs' / row['id'] / 'settings.json'))['rank'] for row in table['rows'])
    assert ranks == [0, 1]
    assert 'bold = best' in outputs[0] and 'bold = best' not in outputs[1]  # the table: rank 0 only


def test_repeated_grid_and_base_option_flags_add_up():
    """``--grid A=... --grid B=...`` is two axes, as ``--grid A=... B=...`` (argparse's default would keep the last
    flag only, silently dropping an axis)."""
    sys.path.insert(0, osp.join(REPO, 'tools', 'analysis'))
    from sweep import parse_args
    args = parse_args([CDA_FIXED, '--data-root', 'd', '--det-root', 'd', '--work-dir', 'w',
                       '--grid', 'model.tracker.matcher.alpha=0,0.5', '--grid', 'model.tracker.match_thresh=0.6,0.8',
                       '--base-options', 'model.tracker.track_thresh=0.5', '--base-options', 'model.tracker.track_buffer=10'])
    assert args.grid == ['model.tracker.matcher.alpha=0,0.5', 'model.tracker.match_thresh=0.6,0.8']
    assert args.base_options == ['model.tracker.track_thresh=0.5', 'model.tracker.track_buffer=10']
