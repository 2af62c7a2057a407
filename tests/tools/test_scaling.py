"""docs/scaling.md: its commands run, in order, on local stand-ins (tests/tools/test_readme.py leaves this page to this
test): its two ``ray start`` commands make a real two-node Ray cluster on this machine (each node ``--num-cpus 1``,
``--block``, ``RAY_AUTH_MODE=disabled``, the head's temp dir its own, one log monitor, the head's; the cleanup stands
in for ``ray stop``, which would stop every Ray of the machine), the tools reach it through the page's
``RAY_ADDRESS`` (the port a free one), the PostgreSQL URL is the throwaway server's (conftest ``postgres_url``), and
the tools run with the tiny settings of :data:`TINY`. On the same cluster, a SQLite study is refused."""
import json
import os
import os.path as osp
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from helpers.common import REPO, SHARED_DATA, free_port, tool
from test_readme import _workspace, read_page, readme_commands

PAGE = 'docs/scaling.md'
AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
PAGE_URL = 'postgresql://vastmat@127.0.0.1:5432/vastmat'
PAGE_PORT = '6379'
VIDEOS = ['chicken_3', 'deer_4', 'goose_4', 'zebra_3']
# the tools on 4 (tuning) or 2 (sweep) videos of AnimalTrack-10fps-sim; 3 trials of 2 folds
TINY = {
    'tools/tune.py': ['--videos', *VIDEOS, '--folds', '2', '--trials', '3', '--bootstrap', '50'],
    'tools/analysis/sweep.py': ['--videos', 'chicken_3', 'deer_4'],
    # the demo data's simulated boxes, two trackers, a 2-iteration D2MP (filled in by the test: conftest fixtures)
    'tools/zoo_benchmark.py': ['--data-root', '{demo_root}', '--det-root', '{demo_dets}', '--trackers', 'ByteTrack',
                               'DiffMOT', '--train-iters', '2'],
}
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('ray'),  # beside the other ray tests and the server
              pytest.mark.skipif(not osp.isdir(AT10), reason=f'{AT10} not found (../shared/data beside the clone)')]


def page_commands() -> list[str]:
    return readme_commands(read_page(PAGE))


def wait_for_line(log: str, line: str, node: subprocess.Popen, deadline: float) -> None:
    while line not in open(log).read():
        assert node.poll() is None, f'{log}: ray start exited with {node.returncode}:\n{open(log).read()[-3000:]}'
        assert time.monotonic() < deadline, f'{log}: no {line!r} in 60 s:\n{open(log).read()[-3000:]}'
        time.sleep(0.2)


@pytest.fixture(scope='session')
def cluster(tmp_path_factory):
    """The page's ``ray start`` commands, as a two-node cluster on this machine; this process connected to it.
    Yields its address. Kept for the session: the other Ray tests (the xdist group 'ray', which this test starts,
    tests/conftest.py's RUN_FIRST) run on the connection rather than start a local Ray (seconds each start)."""
    ray = pytest.importorskip('ray', reason='ray is the optional extra requirements/ray.txt (tools/setup_env.sh)')
    starts = [c for c in page_commands() if c.startswith('ray start')]
    assert len(starts) == 2 and '--head' in starts[0], starts
    if ray.is_initialized():
        ray.shutdown()  # conftest's local ray (its fixture starts it again where a later test needs it)
    port, temp_dir = str(free_port()), tempfile.mkdtemp(prefix='ray-')  # short: ray's sockets live there
    logs = tmp_path_factory.mktemp('ray_nodes')
    env = dict(os.environ, RAY_AUTH_MODE='disabled', PATH=osp.dirname(sys.executable) + os.pathsep + os.environ['PATH'])
    nodes = []
    try:
        deadline = time.monotonic() + 60
        for i, command in enumerate(starts):
            words = shlex.split(command.replace(PAGE_PORT, port).replace('--num-cpus 2', '--num-cpus 1'))
            words += ['--block', '--disable-usage-stats']
            if i == 0:
                words += ['--temp-dir', temp_dir, '--include-dashboard', 'false']
            else:  # one log monitor a host, as ray start's help asks: the head's
                words += ['--include-log-monitor', 'false']
            log = str(logs / f'node{i}.log')
            with open(log, 'w') as out:
                nodes.append(subprocess.Popen(words, env=env, stdout=out, stderr=subprocess.STDOUT,
                                              start_new_session=True))
            wait_for_line(log, 'Ray runtime started', nodes[-1], deadline)
        address = f'127.0.0.1:{port}'
        ray.init(address=address, log_to_driver=False, configure_logging=False)
        while sum(node['Alive'] for node in ray.nodes()) < 2:
            assert time.monotonic() < deadline, ray.nodes()
            time.sleep(0.2)
        yield address
    finally:
        ray.shutdown()
        for node in reversed(nodes):  # the page's `ray stop`: each node's processes, by their process group
            os.killpg(node.pid, signal.SIGKILL)
            node.wait(60)
        shutil.rmtree(temp_dir, ignore_errors=True)


def test_the_pages_commands_run_on_a_two_node_cluster_and_a_postgres_study(cluster, postgres_url, demo_root, demo_dets,
                                                                           tmp_path, monkeypatch):
    root = _workspace(tmp_path)
    monkeypatch.chdir(root)
    commands = page_commands()
    assert commands[-1] == 'ray stop'
    out, timings = {}, []
    for command in commands:
        if command.startswith('ray '):
            continue  # the cluster fixture's nodes and its cleanup
        assert PAGE_PORT in command
        words = shlex.split(command.replace(PAGE_PORT, cluster.rpartition(':')[2]).replace(PAGE_URL, postgres_url))
        assert words[0] == f'RAY_ADDRESS={cluster}' and words[1] == 'python' and words[2] in TINY, command
        monkeypatch.setenv('RAY_ADDRESS', cluster)
        start = time.perf_counter()
        tiny = [arg.format(demo_root=demo_root, demo_dets=demo_dets) for arg in TINY[words[2]]]
        out[words[2]] = tool(words[2], *words[3:], *tiny)
        timings.append(f'{time.perf_counter() - start:5.1f} s  {command[:100]}')
    print('\n'.join(timings))

    report = out['tools/tune.py']
    assert report['launcher'] == 'ray' and report['storage'] == postgres_url
    assert report['complete'] + report['pruned'] == 3 and report['failed'] == 0
    pids = {trial['pid'] for trial in report['trials']}
    assert os.getpid() not in pids  # the trials ran in the cluster's worker processes
    assert osp.getsize(report['preset_path']) > 0
    sweep = out['tools/analysis/sweep.py']
    assert sweep['computed'] == len(sweep['rows']) == 5  # Table 20: alpha 0, 0.25, 0.5, 0.75, 1
    settings = [json.load(open(osp.join(root, 'work_dirs', 'sweep_at10_ray', 'runs', row['id'], 'settings.json')))
                for row in sweep['rows']]
    assert os.getpid() not in {s['pid'] for s in settings}

    # the zoo's trackers as tasks of the cluster give the tables of the tool run one tracker after another here
    zoo = out['tools/zoo_benchmark.py']
    tiny = [arg.format(demo_root=demo_root, demo_dets=demo_dets) for arg in TINY['tools/zoo_benchmark.py']]
    here = tool('tools/zoo_benchmark.py', *tiny, '--threads', '1', '--workers', '1', '--work-dir',
                tmp_path / 'zoo_here')
    assert set(zoo['table5']) == {'ByteTrack', 'DiffMOT'} and zoo['table5'] == here['table5']
    assert as_json(zoo['table8']) == as_json(here['table8'])  # (json: NaN equals NaN)
    assert as_json(without_minutes(zoo['curves'])) == as_json(without_minutes(here['curves']))
    assert not zoo['training']['protocol1']['DiffMOT']['reused']


def as_json(value) -> str:
    return json.dumps(value, sort_keys=True)


def without_minutes(curves: dict) -> dict:
    """The zoo's learning curves less the training minutes (wall time)."""
    return {protocol: {tracker: [{k: v for k, v in point.items() if k != 'minutes'} for point in curve]
                       for tracker, curve in by_tracker.items()} for protocol, by_tracker in curves.items()}


def test_a_sqlite_study_on_the_two_node_cluster_is_refused(cluster, tmp_path, monkeypatch, capsys):
    from vastmat.engine.cli import run_cli
    monkeypatch.setenv('RAY_ADDRESS', cluster)
    args = ['configs/bytetrack/bytetrack_cached-dets.py', '--data-root', osp.join(AT10, 'gt'), '--det-root',
            osp.join(AT10, 'dets'), '--launcher', 'ray', '--trials', '1', '--work-dir', str(tmp_path), '--videos',
            *VIDEOS, '--folds', '2']
    monkeypatch.chdir(REPO)
    with pytest.raises(SystemExit) as exit_info:
        run_cli(lambda argv: tool('tools/tune.py', *argv), args)
    assert exit_info.value.code == 2
    message = (f'--storage sqlite:///{tmp_path}/study.db: a SQLite file cannot be shared by the 2 nodes of the ray '
               f'cluster (RAY_ADDRESS={cluster}); give a database server every node reaches')
    assert message in capsys.readouterr().err
    assert not osp.exists(tmp_path / 'study.db')
    assert 'a SQLite file cannot be shared by the 2 nodes of the ray cluster' in ' '.join(read_page(PAGE).split())
