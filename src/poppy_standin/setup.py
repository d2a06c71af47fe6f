from setuptools import find_packages, setup

PACKAGE = "poppy_standin"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "tests"]),
    package_data={PACKAGE: ["config/*.yaml"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="ADR ROS 2 maintainers",
    maintainer_email="adr-ros2@example.org",
    description="A stand-in Poppy Ergo Jr: six emulated XL-320 servos on a pty, moved by PyBullet physics of the arm.",
    license="MIT",
    entry_points={"console_scripts": ["adr-standin-arm = poppy_standin.cli:main"]},
)
