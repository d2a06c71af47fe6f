"""Start workspace executables as real processes in an isolated ROS 2 domain, and stop them cleanly."""
from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ament_index_python.packages import get_package_prefix


def executable(package: str, name: str) -> Path:
    """Path of a console script installed by colcon (``<prefix>/lib/<package>/<name>``)."""
    path = Path(get_package_prefix(package)) / "lib" / package / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run scripts/setup.sh (colcon build) first")
    return path


def isolated_ros_env(domain_id: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        ROS_DOMAIN_ID=str(domain_id),
        ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
        PYTHONUNBUFFERED="1",
    )
    env.pop("ROS_STATIC_PEERS", None)
    return env


@contextmanager
def running(cmd: list[str | Path], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """Run ``cmd`` in the background for the duration of the block; SIGINT (like Ctrl-C) on exit."""
    with open(log, "wb") as out:
        process = subprocess.Popen([str(c) for c in cmd], env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
