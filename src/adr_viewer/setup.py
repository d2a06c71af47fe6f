from setuptools import find_packages, setup

PACKAGE = "adr_viewer"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "tests"]),
    package_data={PACKAGE: ["web/*.html"]},
    include_package_data=True,
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", ["config/adr.rviz"]),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="ADR ROS 2 maintainers",
    maintainer_email="adr-ros2@example.org",
    description="Live browser view and rviz2 markers of a running ADR graph.",
    license="MIT",
    entry_points={
        "console_scripts": [
            "viewer_node = adr_ros.entry:viewer_node",  # the graph's executable (ros2 run adr_viewer viewer_node)
            "adr_viewer = adr_ros.entry:viewer_node",  # the same, under a name that says what it is when on PATH
        ],
    },
)
