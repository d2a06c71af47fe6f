"""adr_core: the ROS-free core of Active Domain Randomization.

Installable both by colcon (ament_python) and by plain pip, without ROS:
``pip install "./src/adr_core[sb3,box2d]"`` (extras: ``sb3``, ``box2d`` for LunarLander, ``mujoco`` for Pusher3DOF,
``pybullet`` for the Ergo envs, ``export`` for ONNX, ``tensorboard``, ``samplers`` for alp_gmm, ``cluster`` for Ray,
``all``). Install torch first, pinned (``pip install torch==2.13.0``): an unpinned torch may pull several GB of CUDA
wheels.

pip builds in a temporary directory (the ``egg_info``/``build`` defaults below), so the source tree stays clean;
under colcon (``COLCON=1`` in the environment) colcon's own build directories are used as before.
"""
import os
import tempfile
from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "adr_core"
HERE = Path(__file__).resolve().parent
SCRATCH = Path(tempfile.gettempdir()) / f"{PACKAGE}-build"

OUT_OF_TREE = {} if os.environ.get("COLCON") else {
    "egg_info": {"egg_base": str(SCRATCH)}, "build": {"build_base": str(SCRATCH / "build")}}
if OUT_OF_TREE:
    SCRATCH.mkdir(parents=True, exist_ok=True)  # egg_info refuses an egg_base that does not exist

EXTRAS = {
    "sb3": ["stable-baselines3>=2.3"],
    "box2d": ["gymnasium[box2d]>=1.0,<2"],
    "mujoco": ["mujoco>=3.1"],
    "pybullet": ["pybullet>=3.2.6"],
    "export": ["onnx>=1.16", "onnxruntime>=1.18"],
    "tensorboard": ["tensorboard>=2.15"],
    "samplers": ["scikit-learn>=1.3"],  # the alp_gmm sampler's Gaussian mixtures
    # campaigns of whole runs on a Ray cluster (the experiment drivers' --backend ray): every node of a cluster must run
    # the same Ray, and token authentication (docs/cluster.md) exists from 2.52 on; its dependencies are pinned in
    # requirements/constraints.txt
    "cluster": ["ray==2.60.0"],
    "identify": ["cma>=3.3", "pybullet>=3.2.6"],  # adr_core.identify's fits of an arm's servo model
}
EXTRAS["all"] = sorted({requirement for group in EXTRAS.values() for requirement in group})

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "tests"]),
    package_data={PACKAGE: ["config/**/*.yaml", "envs/assets/*", "py.typed"]},
    include_package_data=True,
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    python_requires=">=3.10",
    install_requires=["setuptools", "numpy>=1.26", "torch>=2.4", "gymnasium>=1.0,<2", "pyyaml>=6", "tqdm>=4.60",
                      "matplotlib>=3.8"],
    extras_require=EXTRAS,
    options=OUT_OF_TREE,
    zip_safe=False,
    maintainer="ADR ROS 2 maintainers",
    maintainer_email="adr-ros2@example.org",
    description="ROS-free core of Active Domain Randomization (Mehta et al., CoRL 2019)",
    license="MIT",
    entry_points={
        "console_scripts": [
            "adr-train = adr_core.training.cli:main",
            "adr-evaluate = adr_core.evaluation.cli:evaluate_main",
            "adr-report = adr_core.report.cli:main",
            "adr-probe = adr_core.probe.cli:main",
            "adr-export = adr_core.export:main",
        ],
    },
)
