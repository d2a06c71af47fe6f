"""Every package.xml declares what its code imports at run time, so that `rosdep install --from-paths src` on Ubuntu
brings it in (issue: the ROS user's path). Static: the imports are read from the sources, nothing is imported.

An import is satisfied by an <exec_depend>/<depend> on the ROS package of the same name (rclpy, std_msgs, this
workspace's packages), on the rosdep key of ``ROSDEP_KEYS`` (keys checked against ros/rosdistro's rosdep/python.yaml),
or it is pip-only without a rosdep key (``PIP_ONLY``: named in the README's apt section), or optional in that package
(``OPTIONAL``, with the reason). The bringup package also declares what it starts without importing: every package
of a node in the graph description, and the `ros2 launch` verb."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
PACKAGES = sorted(p.parent.name for p in SRC.glob("*/package.xml"))

ROSDEP_KEYS = {"numpy": "python3-numpy", "yaml": "python3-yaml", "serial": "python3-serial", "PIL": "python3-pil",
               "sklearn": "python3-sklearn",
               "matplotlib": "python3-matplotlib", "tqdm": "python3-tqdm", "torch": "python3-pytorch-pip",
               "gymnasium": "python3-gymnasium-pip", "mujoco": "python3-mujoco-pip",
               "pybullet": "python3-pybullet-pip", "onnxruntime": "python3-onnxruntime-pip",
               "rosbags": "python3-rosbags-pip"}
PIP_ONLY = {"pypot", "cma"}  # no rosdep key: installed from requirements/python.txt (README, apt section)
OPTIONAL = {
    ("adr_core", "stable_baselines3"): "adr_core.integrations.sb3 only, an optional extra (make bench-setup)",
    ("adr_deploy", "torch"): "only for .pt checkpoints; the ONNX path runs without torch (deploy-only install)",
}
# started by the launch files without being imported by the bringup package
LAUNCHED = {"adr": {"ros2launch", "launch", "launch_ros", "adr_viewer", "adr_deploy", "poppy_driver"}}


def declared(package: str) -> set[str]:
    text = (SRC / package / "package.xml").read_text()
    return set(re.findall(r"<(?:exec_depend|depend)>\s*([^<\s]+)\s*</", text))


def imports(package: str) -> set[str]:
    names: set[str] = set()
    for path in (SRC / package).rglob("*.py"):
        if "test" in path.parts or path.name == "setup.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != package}


def required_keys(package: str) -> dict[str, str]:
    """import name -> the key package.xml must declare (pip-only and optional imports excluded)."""
    return {name: ROSDEP_KEYS.get(name, name) for name in imports(package)
            if name not in PIP_ONLY and (package, name) not in OPTIONAL}


@pytest.mark.parametrize("package", PACKAGES)
def test_package_xml_declares_every_run_time_import(package: str) -> None:
    missing = {name: key for name, key in required_keys(package).items() if key not in declared(package)}
    assert missing == {}, f"src/{package}/package.xml lacks <exec_depend> for (import: key) {missing}"


def test_the_bringup_package_declares_what_its_launch_files_start() -> None:
    graph = ast.parse((SRC / "adr" / "adr" / "graph.py").read_text())
    started = {call.args[0].value for call in ast.walk(graph) if isinstance(call, ast.Call)
               and getattr(call.func, "id", None) == "NodeSpec" and isinstance(call.args[0], ast.Constant)}
    assert {"adr_sampler_node", "adr_trainer_node", "poppy_driver"} <= started  # the description was read
    assert started - {"adr"} - declared("adr") == set()
    assert LAUNCHED["adr"] - declared("adr") == set()


def test_pip_only_dependencies_are_named_in_the_readme_apt_section() -> None:
    readme = (ROOT / "README.md").read_text()
    apt = readme[readme.index("## For ROS 2 Jazzy users"):]
    apt = apt[:apt.index("\n## ", 4)]
    assert all(name in apt for name in PIP_ONLY)


def test_the_check_finds_an_undeclared_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test above can fail: a package importing numpy without declaring it is reported."""
    package = tmp_path / "demo_pkg"
    (package / "demo_pkg").mkdir(parents=True)
    (package / "package.xml").write_text("<package><exec_depend>rclpy</exec_depend></package>")
    (package / "demo_pkg" / "node.py").write_text(
        "import os\nimport numpy as np\nimport rclpy\nfrom demo_pkg import x\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    assert {n: k for n, k in required_keys("demo_pkg").items() if k not in declared("demo_pkg")} == {
        "numpy": "python3-numpy"}
