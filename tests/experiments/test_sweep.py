"""vastmat.experiments.sweep (tools/analysis/sweep.py's library) on AnimalTrack-10fps-sim: a grid point scores
exactly as tools/test.py on the same config, a second invocation reuses every run, an unknown grid key stops it before
anything runs, and the torchrun shares (the partition, then two ranks as two local processes); then its modules one
by one on hand-made input (plan, run specs, report, the local launcher)."""
import argparse
import json
import os
import os.path as osp

import pytest

from helpers.common import DEBUG_YOLOX, REPO, SHARED_DATA, forked_ranks, free_port, tool

from vastmat.experiments import sweep
from vastmat.experiments import launchers
from vastmat.experiments.sweep import SweepSettings, plan, report, run_sweep, runs
from vastmat.utils.errors import UserInputError
from vastmat.utils.options import OptionError

AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
needs_at10 = pytest.mark.skipif(not osp.isdir(AT10), reason=f'{AT10} not found (../shared/data beside the clone)')
SWEEP = 'tools/analysis/sweep.py'
BYTETRACK = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py')
CDA_FIXED = dict(type='CDA', mode='fixed', alpha=0.25)  # configs/matchers/cda_fixed.py
CDA_OPTION = f'model.tracker.matcher={CDA_FIXED!r}'  # a dict value, as --base-options and --cfg-options take it
VIDEOS = ['chicken_5', 'deer_5', 'dolphin_4', 'zebra_5']  # the four smallest detection files
ALPHA_GRID = 'model.tracker.matcher.alpha=0,0.25,0.5'


def settings(work_dir, **kwargs):
    """ByteTrack with CDA fixed on the four videos."""
    return SweepSettings(BYTETRACK, osp.join(AT10, 'dets'), osp.join(AT10, 'gt'), str(work_dir),
                         **{'videos': VIDEOS, 'base_options': [CDA_OPTION], **kwargs})


def sweep_args(work_dir, *extra):
    return [BYTETRACK, '--data-root', osp.join(AT10, 'gt'), '--det-root', osp.join(AT10, 'dets'),
            '--work-dir', work_dir, '--videos', *VIDEOS, '--base-options', CDA_OPTION, *extra]


@pytest.fixture(scope='module')
def alpha_sweep(tmp_path_factory):
    work_dir = tmp_path_factory.mktemp('sweep')
    return work_dir, run_sweep(settings(work_dir, grid=[ALPHA_GRID], workers=2))


@needs_at10
@pytest.mark.slow
@pytest.mark.xdist_group('sweep')  # one worker makes the alpha sweep once
def test_a_grid_point_scores_as_tools_test(alpha_sweep, tmp_path):
    work_dir, result = alpha_sweep
    assert result['computed'] == 3 and result['reused'] == 0
    assert [row['params']['alpha'] for row in result['rows']] == ['0', '0.25', '0.5']
    row = next(row for row in result['rows'] if row['params']['alpha'] == '0.25')
    tool('tools/test.py', BYTETRACK, '--det-root', osp.join(AT10, 'dets'), '--data-root', osp.join(AT10, 'gt'),
         '--work-dir', tmp_path, '--cfg-options', f'test_dataloader.dataset.videos=[{",".join(VIDEOS)}]', CDA_OPTION)
    reference = json.load(open(tmp_path / 'metrics_per_video.json'))
    assert set(reference) == {*VIDEOS, 'COMBINED'}
    assert row['metrics']['HOTA'] == reference['COMBINED']['HOTA']  # same code path: exactly equal
    assert row['metrics']['IDSW'] == reference['COMBINED']['IDSW']
    run_dir = work_dir / 'runs' / row['id']
    metrics = json.load(open(run_dir / 'metrics.json'))
    assert set(metrics) == {*VIDEOS, 'COMBINED'}
    saved = json.load(open(run_dir / 'settings.json'))
    assert saved['options'] == {'model.tracker.matcher': CDA_FIXED}  # the grid's alpha folded into the dict
    assert saved['videos'] == VIDEOS
    assert saved['model']['tracker']['matcher'] == CDA_FIXED
    assert all(osp.isfile(run_dir / 'results' / f'{video}.txt') for video in VIDEOS)
    for name in ('table.csv', 'table.json', 'alpha.png'):
        assert osp.getsize(work_dir / name) > 0, name
    csv_lines = open(work_dir / 'table.csv').read().splitlines()
    assert csv_lines[0].split(',')[:2] == ['alpha', 'HOTA'] and len(csv_lines) == 4


@needs_at10
@pytest.mark.slow
@pytest.mark.xdist_group('sweep')
def test_the_matcher_option_is_the_swapped_matcher_as_one_option(alpha_sweep):
    """``--matcher cda_fixed`` / ``cda_fixed,alpha=0`` give the same runs (ids) as the grid's points with the same
    matcher: they are reused, not computed again; with a table preset it is refused."""
    work_dir, first = alpha_sweep
    ids = {row['params']['alpha']: row['id'] for row in first['rows']}
    for text, alpha in (('cda_fixed', '0.25'), ('cda-fixed,alpha=0', '0')):
        result = run_sweep(settings(work_dir, base_options=[], matcher=text))
        assert result['computed'] == 0 and result['reused'] == 1, text
        assert result['rows'][0]['id'] == ids[alpha], text
    with pytest.raises(UserInputError, match='--table 20 sets the matcher'):
        plan.make_plan(SweepSettings(BYTETRACK, 'd', 'd', 'w', table='20', matcher='cda_fixed'))


@needs_at10
@pytest.mark.slow
@pytest.mark.xdist_group('sweep')
def test_a_second_invocation_computes_nothing(alpha_sweep, capsys):
    work_dir, first = alpha_sweep
    again = tool(SWEEP, *sweep_args(work_dir, '--grid', ALPHA_GRID, '--workers', '2'))  # the command line, too
    assert (again['computed'], again['reused']) == (0, 3)
    assert '3 runs done before, 0 to run' in capsys.readouterr().out
    assert again['rows'] == first['rows']


@needs_at10
@pytest.mark.slow
def test_an_unknown_grid_key_is_an_error_naming_it(tmp_path, capsys):
    from vastmat.engine.cli import ConfigKeyError, run_cli
    with pytest.raises(SystemExit) as exit_info:
        run_cli(lambda argv: tool(SWEEP, *argv), sweep_args(tmp_path, '--grid', 'model.trackr.match_thresh=0.6,0.8'))
    assert exit_info.value.code == 2
    assert "--grid model.trackr.match_thresh: 'trackr' is not a key of model" in capsys.readouterr().err
    # a new argument of a component dict passes the key check, then the component refuses it: before any run
    with pytest.raises(UserInputError, match='match_threshold'):
        run_sweep(settings(tmp_path, grid=['model.tracker.match_threshold=0.6,0.8']))
    with pytest.raises(ConfigKeyError, match='--base-options model.tracker.kalman'):
        run_sweep(settings(tmp_path, base_options=[CDA_OPTION, 'model.tracker.kalman.std=1']))
    # a value of the wrong type, named with its flag
    with pytest.raises(OptionError, match="--grid model.tracker.match_thresh=high: expected a finite number"):
        run_sweep(settings(tmp_path, grid=['model.tracker.match_thresh=0.8,high']))
    assert not osp.exists(tmp_path / 'runs')


def test_torchrun_shares_are_disjoint_and_cover_the_grid():
    for num_runs in (0, 1, 5, 9, 16):
        for world_size in (1, 2, 3, 4):
            shares = [launchers.rank_share(num_runs, rank, world_size) for rank in range(world_size)]
            flat = [i for share in shares for i in share]
            assert sorted(flat) == list(range(num_runs)), (num_runs, world_size)
            assert max(map(len, shares)) - min(map(len, shares)) <= 1
    with pytest.raises(ValueError):
        launchers.rank_share(4, 2, 2)


def test_torchrun_environment_is_checked(monkeypatch):
    monkeypatch.delenv('RANK', raising=False)
    with pytest.raises(UserInputError, match='RANK and WORLD_SIZE are not set'):
        launchers.torchrun_env()
    monkeypatch.setenv('RANK', '2')
    monkeypatch.setenv('WORLD_SIZE', '2')
    with pytest.raises(UserInputError, match=r'RANK=2 is not in \[0, WORLD_SIZE=2\)'):
        launchers.torchrun_env()
    monkeypatch.setenv('RANK', '1')
    assert launchers.torchrun_env() == (1, 2)


@needs_at10
@pytest.mark.slow
def test_two_torchrun_ranks_split_the_runs_and_rank_0_writes_the_table(tmp_path):
    """Two processes with torchrun's environment (gloo barrier on a free local port): forked from this one, as
    torchrun's processes run the same code after their start (tools/dist_train.sh's launch is read by torchrun's own
    parser in tests/tools/test_readme.py)."""
    work_dir = tmp_path / 'w'
    args = [BYTETRACK, '--data-root', osp.join(AT10, 'gt'), '--det-root', osp.join(AT10, 'dets'), '--work-dir',
            str(work_dir), '--videos', *VIDEOS[:2], '--base-options', CDA_OPTION, '--grid',
            'model.tracker.matcher.alpha=0.25,0.75', '--launcher', 'torchrun']
    outputs = forked_ranks(SWEEP, *args, logs=[str(tmp_path / f'rank{rank}.log') for rank in (0, 1)],
                           master_port=free_port(), timeout=180)
    assert 'rank 0/2: 0 runs done before, 1 to run' in outputs[0]
    assert 'rank 1/2: 0 runs done before, 1 to run' in outputs[1]
    table = json.load(open(work_dir / 'table.json'))
    ranks = sorted(json.load(open(work_dir / 'runs' / row['id'] / 'settings.json'))['rank'] for row in table['rows'])
    assert ranks == [0, 1]
    assert 'bold = best' in outputs[0] and 'bold = best' not in outputs[1]  # the table: rank 0 only


def test_repeated_grid_and_base_option_flags_add_up(monkeypatch):
    """``--grid A=... --grid B=...`` is two axes, as ``--grid A=... B=...`` (argparse's default would keep the last
    flag only, silently dropping an axis)."""
    given = []

    def stop(settings):
        given.append(settings)
        raise KeyboardInterrupt  # the settings are all this test needs

    monkeypatch.setattr(sweep, 'make_plan', stop)
    with pytest.raises(KeyboardInterrupt):
        tool(SWEEP, BYTETRACK, '--data-root', 'd', '--det-root', 'd', '--work-dir', 'w',
             '--grid', 'model.tracker.matcher.alpha=0,0.5', '--grid', 'model.tracker.match_thresh=0.6,0.8',
             '--base-options', 'model.tracker.track_thresh=0.5', '--base-options', 'model.tracker.track_buffer=10')
    assert given[0].grid == ['model.tracker.matcher.alpha=0,0.5', 'model.tracker.match_thresh=0.6,0.8']
    assert given[0].base_options == ['model.tracker.track_thresh=0.5', 'model.tracker.track_buffer=10']


# ------------------------------------------------------------------------------------- the modules on their own

def test_plan_axes_options_and_tables():
    axes = plan.grid_axes(['model.tracker.matcher.alpha=0,0.25', 'model.post_processors.0.alpha=1,2',
                           "model.tracker.matcher=dict(type='CDA',mode='fixed'),dict(type='IoU')"])
    assert [a.name for a in axes] == ['model.tracker.matcher.alpha', 'model.post_processors.0.alpha', 'matcher']
    assert axes[0].values == [0, 0.25] and axes[0].labels == ['0', '0.25']
    assert axes[2].labels == ['CDA(mode=fixed)', 'IoU()']
    with pytest.raises(UserInputError, match='given twice'):
        plan.grid_axes(['a.b=1,2', 'a.b=3'])
    with pytest.raises(OptionError, match=r"--grid a\.b: .*unclosed"):
        plan.grid_axes(['a.b=[1,2'])
    # folding: a key under an earlier dict value goes into it; a key set again drops what was set below it
    assert plan.resolve_options([('m.matcher', dict(type='CDA', alpha=0.5)), ('m.matcher.alpha', 0.25)]) == {
        'm.matcher': dict(type='CDA', alpha=0.25)}
    assert plan.resolve_options([('m.matcher.alpha', 0.25), ('m.x', 1), ('m.matcher', dict(type='IoU'))]) == {
        'm.matcher': dict(type='IoU'), 'm.x': 1}
    fixed, axes, caption = plan.table_preset('23', [])
    assert fixed[0][1]['type'] == 'CDA' and [a.name for a in axes] == ['k', 'N_ref'] and 'Table 23' in caption
    fixed, axes, _ = plan.table_preset('20', [])
    assert axes[0].values == list(plan.TABLE20_ALPHAS) and fixed[0][1]['mode'] == 'fixed'
    assert plan.post_processors(None) == plan.DEFAULT_POST_PROCESSORS
    assert plan.post_processors("dict(type='AFLink')") == [dict(type='AFLink')]
    for bad in ('[1, 2]', 'AFLink', '[dict(type=AFLink'):
        with pytest.raises(UserInputError, match='--post-processors'):
            plan.post_processors(bad)


def test_a_table_preset_and_a_grid_on_its_keys_are_refused():
    with pytest.raises(UserInputError, match='a --table preset already varies its keys'):
        plan.make_plan(SweepSettings(BYTETRACK, 'd', 'd', 'w', table='20', grid=['model.tracker.matcher.alpha=0,1']))
    with pytest.raises(UserInputError, match='has no model.tracker.matcher'):
        plan.make_plan(SweepSettings(DEBUG_YOLOX, 'd', 'd', 'w', table='20'))


def test_run_specs_ids_and_cache(tmp_path):
    spec = argparse.Namespace(config=BYTETRACK, det_root='dets', data_root='gt', preset='vastmat')
    axes = plan.grid_axes(['model.tracker.match_thresh=0.6,0.8'])
    made = runs.make_runs(spec, [('model.tracker.track_thresh', 0.5)], axes, ['v1'], str(tmp_path))
    assert [r['label'] for r in made] == ['0.6', '0.8'] and len({r['id'] for r in made}) == 2
    assert made[0]['config'] == 'configs/bytetrack/bytetrack_cached-dets.py'  # relative: a clone keeps its ids
    assert made[0]['options'] == {'model.tracker.match_thresh': 0.6, 'model.tracker.track_thresh': 0.5}
    assert made[0]['run_dir'] == str(tmp_path / 'runs' / made[0]['id'])
    again = runs.make_runs(spec, [('model.tracker.track_thresh', 0.5)], axes, ['v1'], str(tmp_path / 'elsewhere'))
    assert [r['id'] for r in again] == [r['id'] for r in made]  # the work dir is not part of a run's identity
    other = runs.make_runs(spec, [('model.tracker.track_thresh', 0.5)], axes, ['v1', 'v2'], str(tmp_path))
    assert not {r['id'] for r in other} & {r['id'] for r in made}
    with pytest.raises(UserInputError, match='resolve to the same settings'):
        runs.make_runs(spec, [], plan.grid_axes(['model.tracker.match_thresh=0.8,0.8']), ['v1'], str(tmp_path))
    assert not runs.is_done(made[0])
    os.makedirs(made[0]['run_dir'])
    open(osp.join(made[0]['run_dir'], 'metrics.json'), 'w').write('{}')
    assert runs.is_done(made[0])
    cfg = runs.build_config(BYTETRACK, {'model.tracker.matcher': dict(type='CDA', alpha=0.25)})
    assert cfg.model.tracker.matcher.to_dict() == dict(type='CDA', alpha=0.25)  # replaced whole: no plus_one


def test_report_rows_csv_and_matrix(tmp_path):
    axes = plan.grid_axes(['a.k=1,2', 'a.alpha=0,0.5'])
    made = []
    for i, (k, alpha) in enumerate([(1, 0), (1, 0.5), (2, 0), (2, 0.5)]):
        run_dir = tmp_path / 'runs' / f'r{i}'
        metrics = {key: 0.1 * i for _, key in report.COLUMNS}
        os.makedirs(run_dir)
        (run_dir / 'metrics.json').write_text(json.dumps({'COMBINED': metrics}))
        made.append(dict(id=f'r{i}', label=f'{k}, {alpha}', params={'k': str(k), 'alpha': f'{alpha:g}'},
                         values={'a.k': k, 'a.alpha': alpha}, run_dir=str(run_dir)))
    rows = report.read_rows(made)
    assert [r['metrics']['HOTA'] for r in rows] == [0.0, 0.1, 0.2, pytest.approx(0.3)]
    report.write_csv(rows, axes, str(tmp_path / 'table.csv'))
    lines = (tmp_path / 'table.csv').read_text().splitlines()
    assert lines[0] == 'k,alpha,HOTA,DetA,AssA,IDF1,MOTA,IDSW,FP,FN,run_id' and lines[4].endswith(',r3')
    assert report.alpha_axis(axes) is axes[1]
    matrix = report.hota_matrix(rows, axes)
    assert [c.header for c in matrix.columns] == ['k \\ alpha', '0', '0.5']
    report.plot_alpha(rows, made, axes, str(tmp_path / 'alpha.png'), 'title')
    assert osp.getsize(tmp_path / 'alpha.png') > 0
    os.remove(tmp_path / 'runs' / 'r2' / 'metrics.json')
    with pytest.raises(FileNotFoundError, match='did not finish'):
        report.read_rows(made)


def test_the_local_launcher_reports_each_run_and_names_a_failing_one():
    todo = [dict(id=f'r{i}', label=f'run {i}', run_dir=f'/w/runs/r{i}') for i in range(3)]
    done, started = [], []
    launchers.run_tasks(_fake_run, todo, 'local', 1, lambda run, result: done.append(result['id']),
                        lambda: started.append(1), runs.describe_run)
    assert done == ['r0', 'r1', 'r2'] and started == [1]
    todo[1]['fail'] = True
    done.clear()
    with pytest.raises(RuntimeError, match='boom') as info:
        launchers.run_tasks(_fake_run, todo, 'local', 1, lambda run, result: done.append(result['id']),
                            describe=runs.describe_run)
    assert done == ['r0'] and 'in sweep run r1 (run 1), folder /w/runs/r1' in info.value.__notes__


def _fake_run(run: dict) -> dict:
    """A run that fails where it is told to (a module-level function: the pool pickles it)."""
    if run.get('fail'):
        raise RuntimeError('boom')
    return dict(id=run['id'], HOTA=0.5, seconds=0.0)


def test_the_pool_keeps_at_most_workers_tasks_in_flight_and_pulls_more_as_they_end():
    """Two forked workers: the next task is asked for only when one is free, and the launcher ends once there is
    none (the tuner's trials are pulled this way)."""
    todo = [dict(id=f'r{i}') for i in range(5)]
    handed, done = [], []

    def next_task():
        assert len(handed) - len(done) < 2  # asked only when a worker is free
        if len(handed) == len(todo):
            return None
        handed.append(todo[len(handed)])
        return handed[-1]
    launchers.run_pulled(_fake_run, next_task, 'local', 2, lambda run, result: done.append(result['id']))
    assert sorted(done) == [f'r{i}' for i in range(5)]
