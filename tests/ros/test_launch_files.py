"""The launch files load the way `ros2 launch` loads them (a module from a file path, then
``generate_launch_description()``), and start the nodes of the graph description, without fetching upstream code.

`launch`/`launch_ros` are on no registry this project can install from, so where they are absent (CI, the pip path)
a minimal stand-in of the few names the bridge uses is put in their place; where they are installed (a ROS user's
machine) the real ones are used. What the stand-in cannot show (the launch service's own behaviour) was checked by
hand with the real `ros2 launch` of Jazzy: docs/node_graph.md, "Two launchers".
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from adr.graph import GRAPHS

LAUNCH_DIR = Path(__file__).resolve().parents[2] / "src" / "adr" / "launch"
REAL_LAUNCH = importlib.util.find_spec("launch") is not None and importlib.util.find_spec("launch_ros") is not None


def stand_in_modules() -> dict[str, types.ModuleType]:
    """``launch``, ``launch.actions``, ``launch.events.process``, ``launch_ros.actions``:
    the constructors the bridge calls, keeping their keyword arguments."""

    @dataclass
    class Recorded:
        args: tuple = ()
        kwargs: dict[str, Any] = field(default_factory=dict)

    def recorder(name: str) -> type:
        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            Recorded.__init__(self, args, kwargs)
        return type(name, (Recorded,), {"__init__": init})

    class LaunchContext:
        def __init__(self) -> None:
            self.launch_configurations: dict[str, str] = {}
            self.is_shutdown = False

    modules = {name: types.ModuleType(name) for name in
               ("launch", "launch.actions", "launch.events", "launch.events.process", "launch.event_handlers",
                "launch_ros", "launch_ros.actions")}
    modules["launch"].LaunchDescription = recorder("LaunchDescription")
    modules["launch"].LaunchContext = LaunchContext
    for name in ("DeclareLaunchArgument", "OpaqueFunction", "Shutdown", "RegisterEventHandler"):
        setattr(modules["launch.actions"], name, recorder(name))
    modules["launch.event_handlers"].OnProcessExit = recorder("OnProcessExit")
    modules["launch.events.process"].ProcessExited = recorder("ProcessExited")
    modules["launch_ros.actions"].Node = recorder("Node")
    return modules


@pytest.fixture
def launch_api(monkeypatch: pytest.MonkeyPatch) -> bool:
    """True: the real launch packages; False: the stand-in is installed for this test."""
    if not REAL_LAUNCH:
        for name, module in stand_in_modules().items():
            monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delitem(sys.modules, "adr.launch_ros_bridge", raising=False)
    return REAL_LAUNCH


def load_launch_file(path: Path) -> Any:
    """As ros2launch does: import the file as a module, call generate_launch_description()."""
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate_launch_description()


def nodes_of(description: Any, arguments: dict[str, str], real: bool) -> list[tuple[str, str, str, dict, dict]]:
    """Declare the arguments as `ros2 launch` would, run the OpaqueFunction, describe each node it returns."""
    from launch import LaunchContext

    context = LaunchContext()
    if real:
        context.launch_configurations.update(arguments)
        nodes = []
        for entity in description.entities:
            nodes += [e for e in (entity.visit(context) or []) if type(e).__name__ == "Node"]
        return [(n.node_package, n.node_executable, "", {}, {}) for n in nodes]
    entities = description.args[0]
    declared = {e.args[0]: e.kwargs["default_value"] for e in entities if type(e).__name__ == "DeclareLaunchArgument"}
    context.launch_configurations.update({**declared, **arguments})
    (opaque,) = [e for e in entities if type(e).__name__ == "OpaqueFunction"]
    nodes = [n for n in opaque.kwargs["function"](context) if type(n).__name__ == "Node"]
    return [(n.kwargs["package"], n.kwargs["executable"], n.kwargs["name"], n.kwargs["parameters"][0],
             n.kwargs["additional_env"] or {}) for n in nodes]


def expected(graph_name: str, arguments: dict[str, str], real: bool) -> list[tuple[str, str, str, dict, dict]]:
    """What each node of the graph description gets: parameters and environment (the DDS profile) too."""
    return [(s.package, s.executable, "" if real else s.name, {} if real else dict(s.parameters),
             {} if real else dict(s.env)) for s in GRAPHS[graph_name].nodes(arguments)]


CASES = [("train_sim", {"budget": "3000", "instances": "3", "record": "true", "run_dir": "/tmp/adr_launch_test",
                        "run_id": "launch-test", "run_start": "launch-test-start"}),
         ("deploy_real", {"checkpoint": "<tiny ErgoReacher run>", "dry_run": "true"})]


@pytest.fixture(scope="module")
def tiny_ergo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ErgoReacher checkpoint (a few seconds of training): deploy_real checks it before building its nodes."""
    from adr_core.training.config import TrainConfig
    from adr_core.training.trainer import Trainer

    out = tmp_path_factory.mktemp("ergo_run")
    Trainer(TrainConfig().with_overrides({
        "env_id": "adr/ErgoReacher-v0", "total_agent_steps": 200, "agent.batch_size": 32, "agent.learning_starts": 100,
        "agent.hidden_sizes": [16, 16], "svpg.num_particles": 2, "discriminator.hidden_size": 16, "torch_threads": 1,
        "tensorboard": False, "progress": False}), out).run()
    return out


@pytest.mark.parametrize(("graph_name", "arguments"), CASES)
def test_each_launch_file_starts_the_nodes_of_its_graph_description(launch_api: bool, graph_name: str,
                                                                    arguments: dict[str, str],
                                                                    tiny_ergo_run: Path, tmp_path: Path) -> None:
    if "checkpoint" in arguments:
        arguments = {**arguments, "checkpoint": str(tiny_ergo_run)}
    if "run_dir" in arguments:
        arguments = {**arguments, "run_dir": str(tmp_path / "run")}
    want = expected(graph_name, arguments, launch_api)  # first: launching records the start (run.starts)
    description = load_launch_file(LAUNCH_DIR / f"{graph_name}.launch.py")
    nodes = nodes_of(description, arguments, launch_api)
    assert nodes == want
    # dds_interfaces:=loopback (the default): every node gets the Fast DDS profile that binds its sockets
    assert launch_api or all("FASTRTPS_DEFAULT_PROFILES_FILE" in env for *_, env in nodes)


def run_ids_of(arguments: dict[str, str]) -> set[str]:
    """The run ids one launch gives its nodes (in run_spec; the viewer's parameter)."""
    import json

    nodes = GRAPHS["train_sim"].nodes(arguments)
    return ({json.loads(s.parameters["run_spec"])["run_id"] for s in nodes if "run_spec" in s.parameters}
            | {s.parameters["run_id"] for s in nodes if "run_id" in s.parameters})


def test_every_node_of_a_launch_gets_one_run_id_and_every_launch_a_new_one(tmp_path: Path) -> None:
    from adr_ros.signing import create_key_file

    first, second = run_ids_of({"viewer": "true"}), run_ids_of({"viewer": "true"})
    assert len(first) == len(second) == 1 and first != second
    assert run_ids_of({"run_id": "head-7"}) == {"head-7"}
    key = create_key_file(tmp_path / "copy.key")
    assert run_ids_of({"role": "sims", "run_id": "head-7", "sim_ids": "1", "key_file": str(key),
                       "run_start": "s1"}) == {"head-7"}


def starts_of(arguments: dict[str, str]) -> set[str]:
    return {s.parameters["run_start"] for s in GRAPHS["train_sim"].nodes(arguments) if "run_start" in s.parameters}


def test_every_launch_is_a_new_start_of_the_run_and_a_start_is_never_used_twice(tmp_path: Path) -> None:
    """Issue 61: a resume with a fixed run_id:= took messages captured in the first start. Every launch draws a new
    start nonce for all its nodes (signatures cover it); a worker needs the head's; a start a head is given must not
    have started the run before (run.starts)."""
    from adr.graph import STARTS_FILE, prepare_files

    arguments = {"viewer": "true", "run_id": "fixed", "run_dir": str(tmp_path / "run")}
    first, second = starts_of(arguments), starts_of(arguments)
    assert len(first) == len(second) == 1 and first != second
    from adr_ros.signing import create_key_file

    key = create_key_file(tmp_path / "copy.key")
    with pytest.raises(ValueError, match="role:=sims needs run_start:= the head's start"):
        GRAPHS["train_sim"].nodes({"role": "sims", "run_id": "fixed", "key_file": str(key)})
    prepare_files(GRAPHS["train_sim"].nodes({**arguments, "run_start": "start-one"}))
    assert (tmp_path / "run" / STARTS_FILE).read_text() == "start-one\n"
    with pytest.raises(ValueError, match="run_start:=start-one started this run before"):
        GRAPHS["train_sim"].nodes({**arguments, "run_start": "start-one"})


def test_every_node_of_a_launch_gets_the_runs_key_and_resolving_writes_none(tmp_path: Path) -> None:
    nodes = GRAPHS["train_sim"].nodes({"viewer": "true", "run_dir": str(tmp_path / "run")})
    assert {s.parameters.get("key_file") for s in nodes} == {str((tmp_path / "run" / "run.key").resolve())}
    assert not (tmp_path / "run").exists()  # the launchers create it when the graph starts (graph.prepare_files)


@pytest.mark.parametrize(("arguments", "message"), [
    ({"role": "sims"}, "role:=sims needs run_id:= the head's run id"),
    ({"role": "sims", "run_id": "head-7"}, "role:=sims needs key_file:= a copy of the head's"),
    ({"key_file": "/nonexistent/run.key"}, "train_sim: .*run.key"),
    ({"run_id": "a b"}, "run id 'a b' must be 1-64 letters, digits")])
def test_a_missing_or_malformed_run_id_is_refused(arguments: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GRAPHS["train_sim"].nodes(arguments)


def test_every_graph_has_a_launch_file() -> None:
    assert sorted(p.name for p in LAUNCH_DIR.glob("*.launch.py")) == sorted(f"{g}.launch.py" for g in GRAPHS)


def test_a_misspelled_argument_is_refused_with_the_known_ones(launch_api: bool) -> None:
    description = load_launch_file(LAUNCH_DIR / "train_sim.launch.py")
    known = r"known: env, method, instances, role, "  # declaration order, as --show-args lists them
    with pytest.raises(ValueError, match=r"^train_sim: unknown argument\(s\) budgt:=; " + known):
        nodes_of(description, {"budgt": "3000"}, launch_api)


@pytest.mark.parametrize(("argument", "message"), [
    ("budget:=abc", "budget:=abc is not an integer"), ("rollout_timeout:=0", r"rollout_timeout:=0 must be a number"),
    ("service_timeout:=0", r"service_timeout:=0 must be a number"),
    ("viewer_port:=99999", r"viewer_port:=99999 must be an integer in \[0, 65535\]"),
    ("overrides:={a: [", "overrides:={a: \\[ is not valid YAML")])
def test_a_value_of_the_wrong_form_names_its_argument(launch_api: bool, argument: str, message: str) -> None:
    name, value = argument.split(":=")
    description = load_launch_file(LAUNCH_DIR / "train_sim.launch.py")
    with pytest.raises(ValueError, match=message):
        nodes_of(description, {name: value}, launch_api)


def test_a_required_node_that_fails_stops_the_graph_and_sets_the_exit_code(launch_api: bool,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    bridge = importlib.import_module("adr.launch_ros_bridge")
    registered: list = []
    monkeypatch.setattr(bridge, "_exit_code", {})
    monkeypatch.setattr(bridge.atexit, "register", registered.append)
    running, stopping = types.SimpleNamespace(is_shutdown=False), types.SimpleNamespace(is_shutdown=True)
    actions = bridge.required_node_exited("policy_runner", types.SimpleNamespace(returncode=2), running)
    assert [type(a).__name__ for a in actions] == ["Shutdown"]
    assert bridge._exit_code == {"code": 2} and registered == [bridge._exit_with_recorded_code]
    # later exits (the others, stopped by that shutdown) do not change it
    bridge.required_node_exited("poppy_driver", types.SimpleNamespace(returncode=-2), stopping)
    assert bridge._exit_code == {"code": 2} and len(registered) == 1
    monkeypatch.setattr(bridge, "_exit_code", {})  # killed by SIGKILL: 128 + 9, as a shell reports it
    bridge.required_node_exited("adr_trainer", types.SimpleNamespace(returncode=-9), running)
    assert bridge._exit_code == {"code": 137}


def test_after_ctrl_c_or_a_clean_finish_the_exit_code_stays_zero(launch_api: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    bridge = importlib.import_module("adr.launch_ros_bridge")
    registered: list = []
    monkeypatch.setattr(bridge, "_exit_code", {})
    monkeypatch.setattr(bridge.atexit, "register", registered.append)
    bridge.required_node_exited("adr_trainer", types.SimpleNamespace(returncode=-2),
                                types.SimpleNamespace(is_shutdown=True))  # Ctrl-C: launch was already stopping
    assert registered == [] and bridge._exit_code == {}
    bridge.required_node_exited("adr_trainer", types.SimpleNamespace(returncode=0),
                                types.SimpleNamespace(is_shutdown=False))  # the run finished
    assert registered == []


def test_a_helper_still_running_after_the_node_it_serves_exited_is_killed(launch_api: bool,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ros2 launch, sampler and discriminator serve the trainer's final checkpoint: once the trainer has exited
    they get SERVED_EXIT_GRACE_S, then are killed (a hung sampler does not hold Ctrl-C for its 300 s)."""
    import subprocess

    bridge = importlib.import_module("adr.launch_ros_bridge")
    description = load_launch_file(LAUNCH_DIR / "train_sim.launch.py")
    if not launch_api:  # the stand-in: one exit handler per served relation, on the trainer's process
        from launch import LaunchContext

        entities = description.args[0]
        context = LaunchContext()
        context.launch_configurations.update({e.args[0]: e.kwargs["default_value"] for e in entities
                                              if type(e).__name__ == "DeclareLaunchArgument"})
        (opaque,) = [e for e in entities if type(e).__name__ == "OpaqueFunction"]
        actions = opaque.kwargs["function"](context)
        handlers = [a.args[0] for a in actions if type(a).__name__ == "RegisterEventHandler"]
        trainer = next(a for a in actions if type(a).__name__ == "Node" and a.kwargs["name"] == "adr_trainer")
        assert sorted(h.kwargs["on_exit"].args[1] for h in handlers) == ["adr_discriminator", "adr_sampler"]
        assert all(h.kwargs["target_action"] is trainer for h in handlers)

    scheduled: list = []
    registered: list = []
    monkeypatch.setattr(bridge, "_exit_code", {"code": 0})  # the trainer finished cleanly
    monkeypatch.setattr(bridge.atexit, "register", registered.append)
    context = types.SimpleNamespace(asyncio_loop=types.SimpleNamespace(call_later=lambda *a: scheduled.append(a)))
    hung = subprocess.Popen(["sleep", "60"])
    helper = types.SimpleNamespace(process_details={"pid": hung.pid}, return_code=None)
    bridge.end_served_helper(helper, "adr_sampler", types.SimpleNamespace(returncode=0), context)
    ((delay, function, *arguments),) = scheduled
    assert delay == bridge.SERVED_EXIT_GRACE_S
    function(*arguments)
    assert hung.wait(timeout=5) == -9  # SIGKILL
    # a node had to be killed: ros2 launch does not exit 0 (issue 61)
    assert bridge._exit_code == {"code": 137} and registered == [bridge._exit_with_recorded_code]
    done = types.SimpleNamespace(process_details={"pid": hung.pid}, return_code=0)
    bridge.kill_if_running(done, "adr_sampler")  # already finished: nothing is sent


def test_ros2_launch_takes_env_and_sampler_from_the_config(launch_api: bool, tmp_path: Path) -> None:
    """The launch file path (ros2 launch) resolves config:= as adr_launch does: the YAML's env and sampler."""
    import json

    description = load_launch_file(LAUNCH_DIR / "train_sim.launch.py")
    arguments = {"config": "pusher3dof_udr", "run_id": "cfg-test", "run_start": "cfg-test-start",
                 "run_dir": str(tmp_path / "run")}
    want = expected("train_sim", arguments, launch_api)
    nodes = nodes_of(description, arguments, launch_api)
    assert nodes == want
    again = GRAPHS["train_sim"].nodes({**arguments, "run_start": ""})  # a new start: cfg-test-start has started
    spec = json.loads(next(s for s in again if s.name == "adr_trainer").parameters["run_spec"])
    assert (spec["env_id"], spec["config"]["sampler"]) == ("adr/Pusher3DOF-v0", "udr")
    with pytest.raises(ValueError, match="env:=adr/ErgoPusher-v0 contradicts config:=pusher3dof_udr"):
        nodes_of(description, {**arguments, "env": "adr/ErgoPusher-v0"}, launch_api)
