from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "adr"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "tests"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", sorted(str(p) for p in Path("launch").glob("*.launch.py"))),
        (f"share/{PACKAGE}/config", sorted(str(p) for p in Path("config").glob("*.yaml"))),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="ADR ROS 2 maintainers",
    maintainer_email="adr-ros2@example.org",
    description="Bringup: launch files, graph description and the pip-path launcher of the ADR stack.",
    license="MIT",
    entry_points={
        "console_scripts": [
            "adr_launch = adr.launcher:main",
            "adr-identify = adr.identify_cli:main",
            "adr_monitor = adr.monitor:main",
            "adr_record = adr.recorder:main",
        ],
    },
)
