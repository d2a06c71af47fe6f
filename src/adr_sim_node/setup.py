
from setuptools import find_packages, setup

PACKAGE = "adr_sim_node"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "tests"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="ADR ROS 2 maintainers",
    maintainer_email="adr-ros2@example.org",
    description="Simulator instance node: runs assigned rollouts in a randomized and a reference env.",
    license="MIT",
    entry_points={
        "console_scripts": [
            "sim_node = adr_ros.entry:sim_node",
        ],
    },
)
