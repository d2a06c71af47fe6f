"""ros2 launch adr identify_arm.launch.py env:=adr/ErgoPusher-v0 log_dir:=<new folder> [port:=...] [max_speed:=...]
— an excitation of the Poppy Ergo Jr's joints, logged for adr-identify: poppy_driver + arm_identifier
(docs/sim_to_real.md, "Measure the arm").

The node graph is described once in adr/graph.py; the pip-path launcher (adr_launch) starts the same one.
"""
from pathlib import Path

from adr.launch_ros_bridge import launch_description


def generate_launch_description():
    return launch_description(Path(__file__).name)
