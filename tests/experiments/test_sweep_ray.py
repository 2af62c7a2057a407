"""The sweep's launchers on a tiny grid (2 videos of AnimalTrack-10fps-sim x 2 alphas): a Ray cluster of 2 CPUs on
this machine (the Ray tests' shared one: tests/experiments/conftest.py) gives the local launcher's table, and a sweep
resumes after a killed run under both launchers (a run whose metrics.json never came, with a half-written temp file
and results left behind; a run that failed): the second invocation computes only the unfinished runs and ends with
the uninterrupted table."""
import json
import os
import os.path as osp
import shutil

import pytest

from helpers.common import REPO, SHARED_DATA

from vastmat.experiments.sweep import SweepSettings, is_done, make_plan, make_runs, resolve_videos, run_sweep

AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('ray'),  # one worker starts ray once (conftest ray_cluster)
              pytest.mark.skipif(not osp.isdir(AT10), reason=f'{AT10} not found (../shared/data beside the clone)')]
BYTETRACK = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py')
CDA_FIXED = "model.tracker.matcher=dict(type='CDA', mode='fixed', alpha=0.25)"  # configs/matchers/cda_fixed
VIDEOS = ['chicken_5', 'deer_5']  # two of the smallest detection files
GRID = 'model.tracker.matcher.alpha=0.25,0.75'


def settings(work_dir, launcher='local'):
    return SweepSettings(BYTETRACK, osp.join(AT10, 'dets'), osp.join(AT10, 'gt'), str(work_dir), videos=VIDEOS,
                         base_options=[CDA_FIXED], grid=[GRID], workers=2, launcher=launcher)


def specs(work_dir):
    """The run specs of the sweep (ids and folders) without running anything."""
    s = settings(work_dir)
    plan = make_plan(s)
    return make_runs(s, plan.fixed, plan.axes, resolve_videos(s), str(work_dir))


@pytest.fixture(scope='module')
def reference(tmp_path_factory):
    """The uninterrupted sweep, local launcher (2 processes)."""
    work_dir = tmp_path_factory.mktemp('local')
    return work_dir, run_sweep(settings(work_dir))


def test_a_local_ray_cluster_gives_the_local_table(ray_cluster, reference, tmp_path):
    work_dir, local = reference
    result = run_sweep(settings(tmp_path, 'ray'))
    assert (result['computed'], result['reused']) == (2, 0)
    assert result['rows'] == local['rows']
    assert (tmp_path / 'table.csv').read_text() == (work_dir / 'table.csv').read_text()
    pids = {json.load(open(tmp_path / 'runs' / row['id'] / 'settings.json'))['pid'] for row in result['rows']}
    assert os.getpid() not in pids  # the runs ran in ray's worker processes


@pytest.mark.parametrize('launcher', ['local', 'ray'])
def test_a_killed_run_is_the_only_one_run_again(launcher, request, reference, tmp_path):
    if launcher == 'ray':
        request.getfixturevalue('ray_cluster')
    work_dir, uninterrupted = reference
    shutil.copytree(work_dir, tmp_path, dirs_exist_ok=True)
    killed = specs(tmp_path)[1]
    # killed while writing: metrics.json never renamed into place, its temp file and a partial result left behind
    os.remove(osp.join(killed['run_dir'], 'metrics.json'))
    open(osp.join(killed['run_dir'], '.metrics.json3x8k.tmp'), 'w').write('{"COMBINED": {"HO')
    results = osp.join(killed['run_dir'], 'results', f'{VIDEOS[1]}.txt')
    open(results, 'w').write('1,1,10,10')
    again = run_sweep(settings(tmp_path, launcher))
    assert (again['computed'], again['reused']) == (1, 1)
    assert again['rows'] == uninterrupted['rows']
    assert (tmp_path / 'table.csv').read_text() == (work_dir / 'table.csv').read_text()


@pytest.mark.parametrize('launcher', ['local', 'ray'])
def test_a_sweep_resumes_after_a_failed_run(launcher, request, reference, tmp_path):
    if launcher == 'ray':
        request.getfixturevalue('ray_cluster')
    _, uninterrupted = reference
    runs = specs(tmp_path)
    blocked = runs[1]['run_dir']
    os.makedirs(osp.dirname(blocked))
    open(blocked, 'w').close()  # a file where the run's folder goes: that run fails as it starts
    with pytest.raises(Exception) as info:
        run_sweep(settings(tmp_path, launcher))
    assert f'in sweep run {runs[1]["id"]}' in ' '.join(getattr(info.value, '__notes__', []))
    os.remove(blocked)
    assert not is_done(runs[1])
    again = run_sweep(settings(tmp_path, launcher))
    # the failed run is computed again; the other one finished, or was stopped with the sweep and is computed again
    # (a ray task already running may still finish after the sweep raised, so it is not counted before)
    assert again['computed'] >= 1 and again['computed'] + again['reused'] == 2, again
    assert again['rows'] == uninterrupted['rows']
