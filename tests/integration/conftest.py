import os

import pytest
from ros_processes import isolated_ros_env


@pytest.fixture(scope="session")
def ros_domain_id() -> int:
    """One DDS domain per test run, so parallel runs and other graphs on this host never cross-talk."""
    if "ADR_TEST_DOMAIN_ID" in os.environ:
        return int(os.environ["ADR_TEST_DOMAIN_ID"])
    return 100 + os.getpid() % 100  # 100..199: outside the default 0 and the launcher's default 42


@pytest.fixture
def ros_env(ros_domain_id: int) -> dict[str, str]:
    return isolated_ros_env(ros_domain_id)
