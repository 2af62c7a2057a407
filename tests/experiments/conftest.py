"""Fixtures of the experiments' tests: a local Ray."""
import pytest


@pytest.fixture
def ray_cluster():
    """The Ray this process is connected to (tests/tools/test_scaling.py's two-node cluster of 2 CPUs, where that
    test ran first on this worker), else a local ray of 2 CPUs, started and kept for the session (ray shuts it down
    at exit); the tests that use it share the xdist group 'ray', so one test worker starts it."""
    ray = pytest.importorskip('ray', reason='ray is the optional extra requirements/ray.txt (tools/setup_env.sh)')
    if not ray.is_initialized():
        ray.init(address='local', num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    return ray
