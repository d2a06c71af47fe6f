"""Without its simulator, an env names the pip extra that provides it (issue 29: the pip-only install)."""
from __future__ import annotations

import subprocess
import sys

import pytest

PROGRAM = """
import importlib.abc, sys
class Hide(importlib.abc.MetaPathFinder):  # as if {module} were not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {module!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
import gymnasium as gym
import adr_core  # registers the envs: the import itself needs no simulator
try:
    gym.make({env_id!r})
except ModuleNotFoundError as error:
    print(type(error).__name__, error)
"""


@pytest.mark.parametrize(("module", "env_id", "extra"), [
    ("mujoco", "adr/Pusher3DOF-v0", "mujoco"), ("pybullet", "adr/ErgoReacher-v0", "pybullet"),
    ("pybullet", "adr/ErgoPusher-v0", "pybullet"), ("Box2D", "adr/LunarLander-v0", "box2d"),
    ("pygame", "adr/LunarLander-v0", "box2d")])  # gymnasium's Box2D envs need pygame too (seen on a bare machine)
def test_a_missing_simulator_names_its_extra(module: str, env_id: str, extra: str) -> None:
    result = subprocess.run([sys.executable, "-c", PROGRAM.format(module=module, env_id=env_id)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip()
    assert line.endswith(f"pip install 'adr_core[{extra}]' (or the project's make setup)"), line
    assert result.stdout.startswith("MissingSimulator ") and env_id in result.stdout, result.stdout
    assert f"needs {module}, which is not installed" in line, line
