"""tools/tune.py on real servers: trials as tasks of a Ray cluster on this machine (the Ray tests' shared one:
tests/experiments/conftest.py) sharing a study in a database of its own on a throwaway PostgreSQL server (conftest
``postgres_url``), a worker killed in the middle of a trial (its trial failed, ray runs the task
again, the study ends with the finished trials asked for, each recorded once), the preset the best complete trial
and scoring what its comment says; bad storage URLs named. (A SQLite study refused on a two-node ray cluster:
tests/tools/test_scaling.py.)"""
import json
import os
import os.path as osp
import re
import signal
import threading
import time

import pytest
from mmengine.config import Config

from helpers.common import REPO, SHARED_DATA, free_port, tool

AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
BYTETRACK = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py')
VIDEOS = ['chicken_3', 'deer_4', 'goose_4', 'zebra_3']
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('ray'),  # one worker starts ray and the server once
              pytest.mark.skipif(not osp.isdir(AT10), reason=f'{AT10} not found (../shared/data beside the clone)')]


def tune_args(work_dir, *extra) -> list:
    return [BYTETRACK, '--data-root', osp.join(AT10, 'gt'), '--det-root', osp.join(AT10, 'dets'), '--videos', *VIDEOS,
            '--folds', '2', '--space', 'thresholds', '--bootstrap', '50', '--work-dir', work_dir, *extra]


def trial_rows(url: str) -> list[tuple[int, str, int | None]]:
    """``(number, state, pid)`` of every trial in the PostgreSQL storage, read with SQL (none before the tuner made
    its tables)."""
    import psycopg
    with psycopg.connect(url) as connection:
        try:
            rows = connection.execute(
                "SELECT t.number, t.state, a.value_json FROM trials t LEFT JOIN trial_user_attributes a "
                "ON a.trial_id = t.trial_id AND a.key = 'pid' ORDER BY t.number").fetchall()
        except psycopg.errors.UndefinedTable:
            return []
    return [(number, state, None if pid is None else json.loads(pid)) for number, state, pid in rows]


def kill_a_running_trial(url: str, after: int, killed: dict, stop: threading.Event) -> None:
    """SIGKILL the worker process of the first running trial numbered ``after`` or later (its pid, a user attribute
    of the trial); ``killed`` gets the trial's number and pid."""
    while not stop.is_set():
        running = [(n, pid) for n, state, pid in trial_rows(url) if state == 'RUNNING' and n >= after and pid]
        if running:
            killed['number'], killed['pid'] = running[0]
            os.kill(killed['pid'], signal.SIGKILL)
            return
        time.sleep(0.05)


@pytest.fixture
def own_database(postgres_url):
    """A new database on the session's server, so that the trials read by SQL are this test's only (the server's
    first database holds the other tests' studies)."""
    import psycopg
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute('DROP DATABASE IF EXISTS tune_ray')
        connection.execute('CREATE DATABASE tune_ray')
    return postgres_url.rpartition('/')[0] + '/tune_ray'


def test_ray_workers_share_a_postgres_study_and_a_killed_worker_is_replaced(ray_cluster, own_database, tmp_path):
    trials, postgres_url = 8, own_database
    killed, stop = {}, threading.Event()
    killer = threading.Thread(target=kill_a_running_trial, args=(postgres_url, 2, killed, stop), daemon=True)
    killer.start()
    try:
        report = tool('tools/tune.py', *tune_args(tmp_path / 'tune', '--launcher', 'ray', '--workers', '2',
                                                  '--storage', postgres_url, '--trials', str(trials),
                                                  '--heartbeat', '1'))
    finally:
        stop.set()
        killer.join()
    assert killed, 'no trial was running to kill'
    assert killed['pid'] != os.getpid()  # a ray worker's process, not this one
    rows = trial_rows(postgres_url)
    states = {number: state for number, state, _ in rows}
    # every trial recorded once, numbered 0..n-1; the killed one failed; the study ends with the finished trials asked
    # for (the killed worker's task ran again in a new trial)
    assert [number for number, _, _ in rows] == list(range(len(rows)))
    assert states[killed['number']] == 'FAIL'
    assert sum(state in ('COMPLETE', 'PRUNED') for state in states.values()) == trials
    assert len(rows) == trials + 1 and report['failed'] == 1
    assert len({pid for _, _, pid in rows}) >= 3 and os.getpid() not in {pid for _, _, pid in rows}
    saved = json.load(open(tmp_path / 'tune' / 'tune.json'))
    assert saved['launcher'] == 'ray' and saved['storage'] == postgres_url
    assert [t['number'] for t in saved['trials']] == [n for n, state, _ in rows if state == 'COMPLETE']
    csv_numbers = [int(line.split(',')[0]) for line in open(tmp_path / 'tune' / 'trials.csv').read().splitlines()[1:]]
    assert csv_numbers == [t['number'] for t in saved['trials']]

    # the preset is the best complete trial, and scores what its comment says
    import optuna
    study = optuna.load_study(study_name=saved['study'], storage=postgres_url)
    complete = [t for t in study.trials if t.state.name == 'COMPLETE']
    best = max(complete, key=lambda t: (t.value, -t.number))
    assert saved['best']['trial'] == best.number and saved['best']['params'] == best.params
    text = open(saved['preset_path']).read()
    stated = float(re.search(r'Trial (\d+): COMBINED HOTA ([\d.]+) on the tuning videos', text).group(2))
    assert f'Trial {best.number}: COMBINED HOTA' in text and stated == round(100 * best.value, 2)
    tracker = Config.fromfile(saved['preset_path']).model.tracker
    assert {key: tracker[key] for key in best.params} == best.params
    metrics = tool('tools/test.py', saved['preset_path'], '--data-root', osp.join(AT10, 'gt'), '--det-root',
                   osp.join(AT10, 'dets'), '--work-dir', tmp_path / 'preset', '--cfg-options',
                   f'test_dataloader.dataset.videos={VIDEOS}')
    assert metrics['vastmat/HOTA'] == pytest.approx(best.value, abs=1e-12)
    assert round(100 * metrics['vastmat/HOTA'], 2) == stated


def test_bad_storage_urls_are_named(postgres_url, tmp_path, capsys, monkeypatch):
    """Each named at once: a database or server that is not there is not tried again (only a lost race to make a new
    database's tables is: tests/experiments/test_tune.py)."""
    import optuna

    from vastmat.engine.cli import run_cli
    opened = []

    class CountedStorage(optuna.storages.RDBStorage):
        def __init__(self, url, *args, **kwargs):
            opened.append(url)
            super().__init__(url, *args, **kwargs)
    monkeypatch.setattr(optuna.storages, 'RDBStorage', CountedStorage)
    absent = postgres_url.rsplit('/', 1)[0] + '/absent'
    closed = f'postgresql://vastmat:secret@127.0.0.1:{free_port()}/vastmat'
    for storage, message in (('postgres://vastmat@127.0.0.1/vastmat', "--storage postgres://vastmat@127.0.0.1/vastmat: "
                                                                      "not a database URL the tuner can open"),
                             (absent, f'--storage {absent}: cannot open it: .*database "absent" does not exist'),
                             (closed, f'--storage {closed.replace("secret", "[*][*][*]")}: cannot open it: '
                                      '.*Connection refused')):
        with pytest.raises(SystemExit) as exit_info:
            run_cli(lambda argv: tool('tools/tune.py', *argv), [str(a) for a in tune_args(
                tmp_path, '--storage', storage, '--trials', '1')])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert re.search(message, err), err
        assert 'secret' not in err
    assert opened == ['postgres://vastmat@127.0.0.1/vastmat', absent, closed]  # one try each
