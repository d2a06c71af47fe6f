from setuptools import find_packages, setup

PACKAGE = "adr_deploy"

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
    description="Zero-shot deployment of trained Ergo policies on the Poppy Ergo Jr (the policy runner node).",
    license="MIT",
    entry_points={"console_scripts": ["policy_runner = adr_deploy.policy_runner_node:main",
                                     "arm_identifier = adr_deploy.identifier_node:main",
                                     "adr-deploy-report = adr_deploy.real_report:main"]},
)
