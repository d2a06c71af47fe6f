"""ros2 launch adr train_sim.launch.py [env:=...] [seed:=...] — ADR training in simulation.

The node graph is described once in adr/graph.py; the pip-path launcher (adr_launch) starts the same one.
"""
from pathlib import Path

from adr.launch_ros_bridge import launch_description


def generate_launch_description():
    return launch_description(Path(__file__).name)
