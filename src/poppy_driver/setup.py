from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "poppy_driver"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "tests"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", [str(p) for p in sorted(Path("config").glob("*.yaml"))]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="ADR ROS 2 maintainers",
    maintainer_email="adr-ros2@example.org",
    description="pypot driver for the Poppy Ergo Jr (Dynamixel XL-320, protocol 2.0): no torch, no adr_core.",
    license="MIT",
    entry_points={
        "console_scripts": [
            "poppy_driver = poppy_driver.driver_node:main",
        ],
    },
)
