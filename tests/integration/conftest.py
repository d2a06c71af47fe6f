import os

import pytest

from graph_harness.ros_processes import isolated_ros_env


@pytest.fixture(scope="session")
def ros_domain_id() -> int:
    """One DDS domain per test run, so parallel runs and other graphs on this host never cross-talk."""
    if "ADR_TEST_DOMAIN_ID" in os.environ:
        return int(os.environ["ADR_TEST_DOMAIN_ID"])
    return test_domain_id(os.environ, os.getpid(), os.getppid())


def test_domain_id(environ: dict[str, str] | os._Environ, pid: int, ppid: int) -> int:
    """100..199 (outside the default 0 and the launcher's default 42). Under pytest-xdist the workers of one run
    share a block of ids, two apart (a test uses its id + 1 as "another domain"), chosen by the controller's pid."""
    worker = environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return 100 + pid % 100
    count = max(1, int(environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    index = int(worker.removeprefix("gw"))
    block = 2 * count
    return 100 + (ppid % max(1, 100 // block)) * block + 2 * index


@pytest.fixture
def ros_env(ros_domain_id: int) -> dict[str, str]:
    return isolated_ros_env(ros_domain_id)
