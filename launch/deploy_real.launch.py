"""ros2 launch adr deploy_real.launch.py checkpoint:=<run dir> [port:=...] [goal_mode:=random|clicked] [dry_run:=true]
— a trained ErgoReacher/ErgoPusher policy on the Poppy Ergo Jr: poppy_driver + policy_runner (docs/deploy_real.md).

The node graph is described once in adr/graph.py; the pip-path launcher (adr_launch) starts the same one.
"""
from pathlib import Path

from adr.launch_ros_bridge import launch_description


def generate_launch_description():
    return launch_description(Path(__file__).name)
