"""The deploy-only install (requirements/deploy.txt + deploy-nodeps.txt, `make deploy-setup`) is enough for the arm's
computer: the driver and the policy runner with an ONNX policy run with every other package blocked."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from test_policy_runner_checkpoints import exported

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "requirements"
# what the full install has and the deploy install must do without (training, simulators of other envs, plots,
# export, recording, and pypot's optional extras)
BLOCKED = ("torch", "mujoco", "Box2D", "matplotlib", "tensorboard", "stable_baselines3", "onnx", "tqdm", "rosbags",
           "mcap", "mcap_ros2", "cv2", "scipy", "ikpy", "tornado", "bottle", "requests", "wget", "pygame", "pytest")
# import names of what the deploy install does have (requirements/deploy*.txt and their dependencies)
DEPLOY_IMPORTS = {"numpy", "gymnasium", "cloudpickle", "farama_notifications", "typing_extensions", "pybullet",
                  "yaml", "serial", "onnxruntime", "flatbuffers", "google", "packaging", "pypot"}
OUR_PACKAGES = {"adr_core", "adr_deploy", "poppy_driver", "adr_ros"}  # adr_ros: the messages' signing

PROBE = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None  # any import of it now fails
import adr_deploy.policy_runner_node  # the node's module: rclpy and the messages
import poppy_driver.driver_node
from adr_deploy.policy_runner.goals import RandomGoals
from adr_deploy.policy_runner.kinematics import TipKinematics
from adr_deploy.policy_runner.loading import load_deployable
from adr_deploy.policy_runner.step_log import StepLog
d = load_deployable(sys.argv[1])
goal = RandomGoals(d.task, d.policy, d.space, 0, d.episode_steps).next_goal(0)  # a simulated episode too
TipKinematics(d.task).tip(dict.fromkeys(d.task.joint_names, 0.0))
StepLog(sys.argv[2], d.task.obs_dim, d.task.act_dim, d.task.joint_names)
assert d.kind == "onnx" and goal.simulated is not None
loaded = {{m.split(".")[0] for m, v in sys.modules.items() if v is not None}} - set(sys.stdlib_module_names)
print("third-party:", " ".join(sorted(loaded)))
"""


def _pins(name: str) -> dict[str, str]:
    pins = {}
    for line in (REQUIREMENTS / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            package, _, version = line.partition("==")
            pins[package.split("[")[0].lower()] = version  # gymnasium[box2d] -> gymnasium
    return pins


def test_the_deploy_path_runs_with_every_other_package_blocked(tmp_path: Path) -> None:
    folder = exported(tmp_path)
    script = PROBE.format(blocked=BLOCKED)
    result = subprocess.run([sys.executable, "-c", script, str(folder), str(tmp_path / "steps.csv")],
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = set(re.search(r"third-party: (.*)", result.stdout).group(1).split())
    ros = {m for m in loaded if m.startswith(("rcl", "rmw", "rosidl", "rpyutils", "ament", "ros_", "rosgraph"))
           or m.endswith("_msgs") or m.endswith("_interfaces") or m in ("std_srvs", "lark")}
    # runtimes, __main__, hooks; the interpreter's start-up hooks (a venv's sitecustomize) are no import of ours
    private = {m for m in loaded if m.startswith("_") or m in ("cython_runtime", "sitecustomize", "usercustomize")}
    assert loaded - ros - private - OUR_PACKAGES <= DEPLOY_IMPORTS, loaded - ros - private - OUR_PACKAGES


def test_deploy_pins_are_the_full_installs_pins() -> None:
    full, deploy = _pins("python.txt"), _pins("deploy.txt") | _pins("deploy-nodeps.txt")
    assert "torch" not in deploy and "onnxruntime" in deploy and "pypot" in deploy
    for package, version in deploy.items():
        assert package in full and full[package] == version, (package, version, full.get(package))
