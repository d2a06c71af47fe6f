"""Turn a graph description into ``launch``/``launch_ros`` actions (used by the files in launch/).

Imported only by launch files, so the ``launch`` packages are needed only where ``ros2 launch`` is used.

Under ``ros2 launch`` the graph behaves as under ``adr_launch``:
- a ``name:=value`` that is not one of the graph's arguments is refused (one line listing the known ones), and a
  value of the wrong form names its argument; ``ros2 launch`` then exits 1 (an error while loading);
- when a required node exits by itself (not during a shutdown), the graph stops and ``ros2 launch`` exits with that
  node's exit code (128 + s when signal s killed it, as a shell reports it: ``graph.exit_status``). The launch
  service itself returns 0 after a ``Shutdown`` action, so the code is kept here and the process ends with it once
  ``ros2 launch`` has finished (``atexit``, after its own clean-up);
- a node that ``serves`` another (sampler and discriminator serve the trainer's final checkpoint) is killed when it
  is still running ``SERVED_EXIT_GRACE_S`` after that node exited: a hung sampler does not hold Ctrl-C for its
  300 s ``sigterm_timeout``. (A ``TimerAction`` would be cancelled by the shutdown in progress, so the launch
  service's event loop schedules the kill.)
"""
from __future__ import annotations

import atexit
import os
import signal
import sys
from collections.abc import Mapping
from functools import partial
from typing import Any

from launch.actions import DeclareLaunchArgument, OpaqueFunction, RegisterEventHandler, Shutdown
from launch.event_handlers import OnProcessExit
from launch.events.process import ProcessExited
from launch_ros.actions import Node

from adr.graph import (
    SERVED_EXIT_GRACE_S,
    Graph,
    NodeSpec,
    describe_exit,
    exit_status,
    graph_for_launch_file,
    prepare_files,
)

# ros2/launch is absent from the pip venv, where mypy takes the repository's launch/ folder for this package
from launch import LaunchContext, LaunchDescription  # type: ignore[attr-defined]

_exit_code: dict[str, int] = {}  # "code": the exit code of the first required node that stopped the graph


def launch_description(launch_file: str) -> LaunchDescription:
    graph = graph_for_launch_file(launch_file)

    def nodes(context: LaunchContext) -> list[Any]:
        specs = graph.nodes(graph_arguments(graph, context.launch_configurations))
        prepare_files(specs)  # the run's key file, before any node starts
        actions = {spec.name: _node(spec) for spec in specs}
        ends = [RegisterEventHandler(OnProcessExit(target_action=actions[spec.serves],
                                                   on_exit=partial(end_served_helper, actions[spec.name], spec.name)))
                for spec in specs if spec.serves in actions]
        return [*actions.values(), *ends]

    declared = [
        DeclareLaunchArgument(  # an empty default outside the choices means "from the config": the graph checks it
            a.name, default_value=a.default, description=a.description,
            choices=list(a.choices) if a.choices and a.default in a.choices else None,
        )
        for a in graph.arguments
    ]
    return LaunchDescription([*declared, OpaqueFunction(function=nodes)])


def graph_arguments(graph: Graph, configurations: Mapping[str, str]) -> dict[str, str]:
    """The launch configurations as the graph's arguments; names the graph does not know are refused (ros2 launch
    itself accepts any ``name:=value``, so a typo would otherwise start a run with the default)."""
    graph.check_names(configurations)
    known = {argument.name for argument in graph.arguments}
    return {name: str(configurations[name]) for name in known if name in configurations}


def required_node_exited(name: str, event: ProcessExited, context: LaunchContext) -> list[Shutdown]:
    """A required node ended: stop the graph and, unless it was stopping anyway, end with its exit code. One killed
    while the graph stops (it ignored Ctrl-C past its sigterm_timeout: launch sent SIGKILL) makes the exit 137
    unless a code was recorded before: never 0 when a node had to be killed."""
    if not context.is_shutdown and "code" not in _exit_code:
        _exit_code["code"] = exit_status(int(event.returncode))
        if event.returncode != 0:
            atexit.register(_exit_with_recorded_code)
    elif context.is_shutdown and int(event.returncode) == -signal.SIGKILL:
        _record_kill()
    return [Shutdown(reason=describe_exit(name, int(event.returncode)))]


def _record_kill() -> None:
    """A node had to be killed: the launch ends with 137 unless a failure's own code was recorded before."""
    if _exit_code.get("code", 0) == 0:
        _exit_code["code"] = exit_status(-signal.SIGKILL)
        atexit.register(_exit_with_recorded_code)


def end_served_helper(helper: Any, name: str, event: ProcessExited, context: LaunchContext) -> None:
    """The node ``helper`` serves has exited: kill ``helper`` if it still runs SERVED_EXIT_GRACE_S later."""
    context.asyncio_loop.call_later(SERVED_EXIT_GRACE_S, kill_if_running, helper, name)


def kill_if_running(helper: Any, name: str) -> None:
    details = helper.process_details
    if details is None or helper.return_code is not None:
        return
    print(f"[adr] {name} is still running {SERVED_EXIT_GRACE_S:g} s after the node it serves exited; killing it",
          file=sys.stderr, flush=True)
    try:
        os.kill(int(details["pid"]), signal.SIGKILL)
    except ProcessLookupError:
        return
    _record_kill()  # whatever it had not written (its final checkpoint) is lost: the launch does not exit 0


def _exit_with_recorded_code() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_exit_code["code"])


def _node(spec: NodeSpec) -> Node:
    def on_exit(event: ProcessExited, context: LaunchContext) -> list[Shutdown]:
        return required_node_exited(spec.name, event, context)

    return Node(
        package=spec.package,
        executable=spec.executable,
        name=spec.name,
        parameters=[dict(spec.parameters)],
        arguments=list(spec.arguments),
        respawn=spec.respawn,
        sigterm_timeout=str(spec.shutdown_timeout),
        on_exit=on_exit if spec.required else None,
        output="screen",
        additional_env=dict(spec.env) or None,
    )


__all__ = ["Graph", "end_served_helper", "graph_arguments", "kill_if_running", "launch_description",
           "required_node_exited"]
