"""The core stays ROS-free: no module of adr_core imports rclpy or a ROS message package."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "src" / "adr_core" / "adr_core"
ROS_MODULES = ("rclpy", "rosidl_runtime_py", "adr_interfaces", "adr_ros", "std_msgs", "sensor_msgs",
               "geometry_msgs", "launch", "launch_ros", "ament_index_python")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_imports_no_ros(path: Path) -> None:
    assert not imported_modules(path) & set(ROS_MODULES)


def test_the_check_sees_ros_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import numpy\nfrom rclpy.node import Node\n")
    assert imported_modules(module) & set(ROS_MODULES) == {"rclpy"}
