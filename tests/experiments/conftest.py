"""Fixtures of the experiments' tests: a local Ray."""
import pytest


@pytest.fixture
def ray_cluster():
    """A local ray of 2 CPUs, started where this process is connected to none and kept for the session (ray shuts it
    down at exit); the tests that use it share the xdist group 'ray', so one test worker starts it."""
    ray = pytest.importorskip('ray', reason='ray is the optional extra requirements/ray.txt (tools/setup_env.sh)')
    if not ray.is_initialized():
        ray.init(address='local', num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    return ray
