"""adr_core: the ROS-free core of Active Domain Randomization.

Installable both by colcon (ament_python) and by plain ``pip install -e src/adr_core``.
"""
from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "adr_core"
HERE = Path(__file__).resolve().parent

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "tests"]),
    package_data={PACKAGE: ["config/**/*.yaml", "envs/assets/*"]},
    include_package_data=True,
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    python_requires=">=3.10",
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="ADR ROS 2 maintainers",
    maintainer_email="adr-ros2@example.org",
    description="ROS-free core of Active Domain Randomization (Mehta et al., CoRL 2019)",
    license="MIT",
    entry_points={
        "console_scripts": [
            "adr-train = adr_core.training.cli:main",
            "adr-evaluate = adr_core.evaluation.cli:evaluate_main",
            "adr-report = adr_core.evaluation.cli:report_main",
            "adr-probe = adr_core.probe.cli:main",
            "adr-export = adr_core.export:main",
        ],
    },
)
