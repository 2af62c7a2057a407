"""The fixtures several test folders share (the rendered demo data, its simulated detections, the SORT plugin
installed in a private site, a PostgreSQL server) and the order the workers take the longest tests in; the helpers
the tests import live in helpers/common.py."""
import os
import os.path as osp
import subprocess
import sys

import pytest

from helpers.common import REPO, free_port, postgres_bin, run, tool

if os.environ.get('PYTEST_XDIST_WORKER') and 'OMP_NUM_THREADS' not in os.environ:
    # the workers share the cores: one thread each (torch's default, a thread per core in every worker,
    # oversubscribes them); subprocesses of the tests inherit it
    os.environ['OMP_NUM_THREADS'] = '1'
    import torch
    torch.set_num_threads(1)

@pytest.fixture(scope='session')
def sort_site(tmp_path_factory):
    """The SORT plugin pip-installed into a private site directory (the venv is not changed), made once per worker;
    :func:`plugins_from` loads it in this process."""
    import shutil
    tmp = tmp_path_factory.mktemp('sort_plugin')
    src, site = str(tmp / 'src'), str(tmp / 'site')
    # installed from a copy, so that pip's build/ and *.egg-info stay out of the plugin's folder
    shutil.copytree(osp.join(REPO, 'plugins', 'vastmat-sort'), src,
                    ignore=shutil.ignore_patterns('build', '*.egg-info', '__pycache__'))
    run([sys.executable, '-m', 'pip', 'install', '--quiet', '--no-deps', '--no-build-isolation',
         '--disable-pip-version-check', '--target', site, src])
    return site


@pytest.fixture(scope='session')
def demo_root(tmp_path_factory):
    """The rendered demo VastMAT dataset (12 frames a video, without the extra test videos: 3 Protocol 1 test
    videos), made once per session."""
    from vastmat.datasets.demo_data import make_demo_dataset
    root = str(tmp_path_factory.mktemp('demo_vastmat'))
    make_demo_dataset(root, num_frames=12, seed=0, extra_test_videos=())
    return root


@pytest.fixture(scope='session')
def demo_dets(demo_root, tmp_path_factory):
    """Simulated detections of the demo dataset's Protocol 1 test videos (tools/data/simulate_detections.py)."""
    out = tmp_path_factory.mktemp('demo_dets')
    tool('tools/data/simulate_detections.py', '--data-root', demo_root, '--out', out, '--split', 'protocol1/test')
    return str(out)


@pytest.fixture(scope='session')
def postgres_url():
    """A throwaway PostgreSQL server for the session (Debian's package, which tools/setup_env.sh installs): a cluster
    initialised in a new temporary folder, listening on a free local port (its unix socket in that folder), run as
    the user postgres where the tests run as root (the server refuses root), stopped and its folder removed at the
    end. Yields its URL (database and user vastmat, trust authentication). Skips, with the reason, where it cannot
    start."""
    import pwd
    import shutil
    import tempfile
    pytest.importorskip('psycopg', reason='the PostgreSQL driver is the optional extra requirements/postgres.txt '
                                          '(tools/setup_env.sh)')
    bin_dir = postgres_bin()
    if bin_dir is None:
        pytest.skip('no PostgreSQL server (initdb, pg_ctl): tools/setup_env.sh installs Debian\'s postgresql')
    as_user = []
    folder = tempfile.mkdtemp(prefix='vastmat-postgres-')
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam('postgres')
        except KeyError:
            shutil.rmtree(folder)
            pytest.skip('running as root and there is no user postgres to run the server as')
        os.chown(folder, account.pw_uid, account.pw_gid)
        as_user = ['runuser', '-u', 'postgres', '--']
    data, port = osp.join(folder, 'data'), free_port()

    def pg(tool: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*as_user, osp.join(bin_dir, tool), *args], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=120)

    started = False
    try:
        steps = (('initdb', '-D', data, '-U', 'vastmat', '--auth=trust', '-E', 'UTF8', '--no-sync'),
                 ('pg_ctl', '-D', data, '-l', osp.join(folder, 'server.log'), '-w', '-t', '60', '-o',
                  f'-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off',
                  'start'),
                 ('createdb', '-h', '127.0.0.1', '-p', str(port), '-U', 'vastmat', 'vastmat'))
        for step in steps:
            proc = pg(*step)
            if proc.returncode != 0:
                pytest.skip(f'PostgreSQL ({bin_dir}) did not start: {step[0]} exited with {proc.returncode}: '
                            f'{proc.stdout.strip()[-800:]}')
            started = started or step[0] == 'pg_ctl'
        yield f'postgresql://vastmat@127.0.0.1:{port}/vastmat'
    finally:
        if started:
            pg('pg_ctl', '-D', data, '-m', 'immediate', '-w', 'stop')
        shutil.rmtree(folder, ignore_errors=True)


# the longest tests and groups start first, so that the workers finish together (pytest-xdist hands the tests out in
# collection order; collected by file name, the README chains and the zoo came last and ran alone at the end): parts
# of their node ids, the longest first (tests/tools/test_readme.py prints each chain's commands with their times;
# test_scaling.py first of the Ray tests: its cluster serves the others)
RUN_FIRST = ('test_readme.py::test_readme_commands_run', 'test_zoo_benchmark.py::test_zoo_trains_every_learned_tracker',
             'test_scaling.py', 'test_sweep_ray.py', 'test_tune_postgres.py', 'test_kill_resume.py',
             'test_tracktrack_golden.py', 'test_compat.py::test_mmdet_breaks')


def pytest_collection_finish(session):
    """The objects of the imports (torch, mmdet, the test modules: millions) moved to the collector's permanent
    generation once collected: every full collection of the run (Python's own, and pytest's five at the end) then
    skips them (Python's gc.freeze). The collections of tests/models/mot and the shipped-config tests, about 85
    CPU-s in all, took 5.2 CPU-s without it, 3.4 and 4.7 with it (two runs), 2.7 with the threshold below too."""
    import gc
    gc.collect()
    gc.freeze()
    gc.set_threshold(10000, 20, 20)  # and fewer collections of the young objects (Python's default: 700, 10, 10)


def pytest_collection_modifyitems(items):
    def rank(item) -> int:
        return next((i for i, part in enumerate(RUN_FIRST) if part in item.nodeid), len(RUN_FIRST))
    items.sort(key=rank)  # stable: the collection order otherwise
