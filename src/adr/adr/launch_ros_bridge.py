"""Turn a graph description into ``launch``/``launch_ros`` actions (used by the files in launch/).

Imported only by launch files, so the ``launch`` packages are needed only where ``ros2 launch`` is used.
"""
from __future__ import annotations

from launch.actions import DeclareLaunchArgument, OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from adr.graph import Graph, NodeSpec, graph_for_launch_file
from launch import LaunchContext, LaunchDescription


def launch_description(launch_file: str) -> LaunchDescription:
    graph = graph_for_launch_file(launch_file)

    def nodes(context: LaunchContext) -> list[Node]:
        overrides = {argument.name: LaunchConfiguration(argument.name).perform(context) for argument in graph.arguments}
        return [_node(spec) for spec in graph.nodes(overrides)]

    declared = [
        DeclareLaunchArgument(
            a.name, default_value=a.default, description=a.description, choices=list(a.choices) or None
        )
        for a in graph.arguments
    ]
    return LaunchDescription([*declared, OpaqueFunction(function=nodes)])


def _node(spec: NodeSpec) -> Node:
    return Node(
        package=spec.package,
        executable=spec.executable,
        name=spec.name,
        parameters=[dict(spec.parameters)],
        arguments=list(spec.arguments),
        respawn=spec.respawn,
        sigterm_timeout=str(spec.shutdown_timeout),
        on_exit=[Shutdown(reason=f"{spec.name} exited")] if spec.required else None,
        output="screen",
    )


__all__ = ["Graph", "launch_description"]
