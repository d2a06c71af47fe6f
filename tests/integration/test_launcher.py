"""The pip-path launcher starts the graph described in adr/graph.py as real processes and stops it cleanly."""
from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from adr.graph import GRAPHS, graph_for_launch_file
from adr.launcher import node_command
from graph_harness.graph_runs import start_graph
from graph_harness.ros_processes import executable


def test_graph_arguments_are_validated() -> None:
    graph = graph_for_launch_file("train_sim.launch.py")
    assert graph is GRAPHS["train_sim"]
    # the one wording of both launchers (graph.check_names): unknown ones sorted, known ones in declaration order
    with pytest.raises(ValueError, match=r"^train_sim: unknown argument\(s\) budget_typo:=, zz:=; known: env, "):
        graph.nodes({"zz": "1", "budget_typo": "1"})
    with pytest.raises(ValueError, match="seed:=abc is not an integer"):
        graph.nodes({"seed": "abc"})
    with pytest.raises(ValueError, match="^train_sim: env_id: unknown env id 'adr/Nope-v0'; known: "):
        graph.nodes({"env": "adr/Nope-v0"})
    with pytest.raises(ValueError, match="no graph named 'nope'"):
        graph_for_launch_file("nope.launch.py")


def test_node_command_matches_the_description() -> None:
    (sampler,) = [s for s in GRAPHS["train_sim"].nodes({"seed": "5"}) if s.name == "adr_sampler"]
    command = node_command(sampler)
    assert command[0] == str(executable("adr_sampler_node", "sampler_node"))
    assert command[command.index("-r") + 1] == "__node:=adr_sampler"
    parameters = command[command.index("-p", command.index("__node:=adr_sampler")) + 1:]
    (run_spec,) = [arg for arg in parameters if arg.startswith("run_spec:=")]
    assert '"env_id": "adr/LunarLander-v0"' in run_spec and '"seed": 5' in run_spec, command
    # one config per node (issue 62): the run's config is in run_spec only
    assert not any(arg.startswith(("overrides:=", "config_file:=")) for arg in parameters), command


def test_launcher_runs_the_graph_and_stops_on_ctrl_c(ros_env: dict[str, str], tmp_path: Path) -> None:
    launcher = start_graph(tmp_path, ros_env, 100_000, "seed:=4", "instances:=1")
    try:
        # a second process watches the proposals the running graph's sampler publishes
        monitor = subprocess.run([str(executable("adr", "adr_monitor")), "--count", "4", "--timeout", "90"],
                                 env=ros_env, capture_output=True, text=True, timeout=120)
        assert monitor.returncode == 0, monitor.stderr
        proposals = [json.loads(line) for line in monitor.stdout.splitlines()]
        assert {p["env_id"] for p in proposals} == {"adr/LunarLander-v0"}
    finally:
        launcher.send_signal(signal.SIGINT)
        output, _ = launcher.communicate(timeout=120)
    assert launcher.returncode == 0, output
    for name in ("adr_sampler", "adr_sim_0", "adr_discriminator", "adr_trainer"):
        assert f"[adr_launch] started {name}" in output
    assert "checkpoint of iteration" in output  # Ctrl-C leaves a final checkpoint
    assert "Traceback" not in output


def _printed_run_spec(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(executable("adr", "adr_launch")), "adr", "train_sim.launch.py", *arguments, "--print"],
                          capture_output=True, text=True, timeout=120)


def _printed_in_process(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *arguments: str) -> str:
    """What ``adr_launch ... --print`` prints, from the launcher's main in this process; the nodes are built here
    instead of in its short-lived child (that child's import of torch is the command's cost; the CLI path is
    checked by the other tests)."""
    from adr import launcher

    monkeypatch.setattr(launcher, "node_specs", launcher._build_node_specs)  # what the child runs
    assert launcher.main(["adr", "train_sim.launch.py", *arguments, "--print"]) == 0
    return capsys.readouterr().out


def _trainer_spec(stdout: str) -> dict:
    (line,) = [line for line in stdout.splitlines() if "__node:=adr_trainer" in line]
    return json.loads(line.split("run_spec:='", 1)[1].split("' -p", 1)[0].replace("''", "'"))


PACKAGED = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "src" / "adr_core" / "adr_core" / "config"
                                   / "experiments").glob("*.yaml"))


@pytest.mark.parametrize("name", PACKAGED)
def test_a_packaged_config_sets_env_and_sampler_of_the_graph(name: str, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """config:= means what it says: no default of env:= or method:= overrides the YAML (adr_launch --print)."""
    import yaml

    from adr_core.training.cli import resolve_experiment
    from adr_core.training.config import TrainConfig

    data = yaml.safe_load(resolve_experiment(name).read_text())
    printed = _printed_in_process(capsys, monkeypatch, f"config:={name}", "run_id:=cfg-test")
    spec = _trainer_spec(printed)
    assert (spec["env_id"], spec["config"]["sampler"]) == (data["env_id"], data["sampler"])
    config = TrainConfig.from_dict(data).with_overrides({"seed": 0, "device": "cpu"})
    config.svpg.num_particles = config.num_particles  # resolved once for every node (null: the paper's N)
    assert spec["config"] == config.to_dict()  # every other key of the YAML too


def test_the_config_seed_and_device_hold_unless_given(tmp_path: Path) -> None:
    """seed:= and device:= default to the config's own values (they used to replace them with 0 and cpu)."""
    config = tmp_path / "seeded.yaml"
    config.write_text("env_id: adr/LunarLander-v0\nseed: 9\ndevice: auto\n")
    kept = _trainer_spec(_printed_run_spec(f"config:={config}", "run_id:=seed-test").stdout)["config"]
    assert (kept["seed"], kept["device"]) == (9, "auto")
    given = _trainer_spec(_printed_run_spec(f"config:={config}", "seed:=3", "device:=cpu", "run_id:=seed-test").stdout)
    assert (given["config"]["seed"], given["config"]["device"]) == (3, "cpu")
    bare = _trainer_spec(_printed_run_spec("run_id:=seed-test").stdout)["config"]
    assert (bare["seed"], bare["device"]) == (0, "cpu")


def test_method_takes_a_plugin_named_in_overrides_as_in_a_config(capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 62: a plug-in sampler's method is accepted by method:= whether its module is named in the config file or
    in overrides:= (it used to be found only through the config file)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "toy_sampler"))
    printed = _printed_in_process(capsys, monkeypatch, "method:=toy_corner", "run_id:=plugin-test",
                                  "overrides:={sampler_modules: [adr_toy_sampler]}")
    config = _trainer_spec(printed)["config"]
    assert (config["sampler"], config["sampler_modules"]) == ("toy_corner", ["adr_toy_sampler"])


def test_method_replaces_the_config_sampler_and_env_must_agree_with_it() -> None:
    printed = _printed_run_spec("config:=ergo_reacher_adr", "method:=udr")
    assert printed.returncode == 0, printed.stderr
    spec = _trainer_spec(printed.stdout)
    assert (spec["env_id"], spec["config"]["sampler"]) == ("adr/ErgoReacher-v0", "udr")
    assert "ergoreacher_udr_seed0" in printed.stdout  # the default run dir names the run's own env and method
    same = _printed_run_spec("config:=ergo_reacher_adr", "env:=adr/ErgoReacher-v0")
    assert same.returncode == 0, same.stderr
    refused = _printed_run_spec("config:=ergo_reacher_adr", "env:=adr/LunarLander-v0")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [
        "adr_launch: train_sim: env:=adr/LunarLander-v0 contradicts config:=ergo_reacher_adr, a config of "
        "adr/ErgoReacher-v0; drop env:= or choose a config of adr/LunarLander-v0 (adr-train --list)"]


def _python_node(name: str, code: str, required: bool = True, shutdown_timeout: float = 10.0, serves: str = ""):
    from adr.graph import NodeSpec

    return NodeSpec("adr", "unused", name, required=required, shutdown_timeout=shutdown_timeout,
                    arguments=(code,), serves=serves)


def _run_python_graph(monkeypatch: pytest.MonkeyPatch, specs: list, capsys: pytest.CaptureFixture) -> tuple[int, str]:
    """run_graph with each spec's command replaced by ``python -c <its first argument>``: real processes, real
    signals, no ROS."""
    import sys

    from adr import launcher

    monkeypatch.setattr(launcher, "node_command", lambda spec: [sys.executable, "-c", spec.arguments[0]])
    code = launcher.run_graph(GRAPHS["train_sim"], specs, dict(__import__("os").environ))
    return code, capsys.readouterr().out


def test_a_required_node_killed_by_a_signal_makes_the_launch_exit_128_plus_the_signal(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    dies = "import os, signal, time; time.sleep(0.3); os.kill(os.getpid(), signal.SIGKILL)"
    waits = "import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    pass"
    code, output = _run_python_graph(monkeypatch, [_python_node("adr_sampler", dies),
                                                   _python_node("adr_trainer", waits)], capsys)
    assert code == 137, output  # 128 + SIGKILL, as a shell reports it (not -9 & 0xFF = 247)
    assert "[adr_launch] adr_sampler was killed by SIGKILL (exit status 137): a required node, stopping the graph" \
        in output
    code, output = _run_python_graph(monkeypatch, [_python_node("adr_trainer", "raise SystemExit(3)")], capsys)
    assert code == 3, output


def test_a_required_node_that_ignores_ctrl_c_is_killed_and_the_launch_says_so(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    import os
    import threading

    stubborn = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)"
    threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()  # the user's Ctrl-C
    code, output = _run_python_graph(monkeypatch, [_python_node("adr_trainer", stubborn, shutdown_timeout=1.0)],
                                     capsys)
    assert code == 137, output
    assert "adr_trainer ignored Ctrl-C for 1 s; killing it" in output
    assert "adr_trainer had to be killed: whatever it had not written yet (a final checkpoint) is lost" in output


def test_a_helper_that_had_to_be_killed_makes_the_launch_exit_137(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """Issue 61: the launcher exited 0 although it had killed the discriminator (which serves the trainer) for
    ignoring Ctrl-C: whatever it had not written is lost, so the launch never exits 0 then."""
    import os
    import threading

    stubborn = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)"
    obeys = "import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    pass"
    threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()  # the user's Ctrl-C
    code, output = _run_python_graph(monkeypatch, [
        _python_node("adr_discriminator", stubborn, shutdown_timeout=1.0, serves="adr_trainer"),
        _python_node("adr_trainer", obeys)], capsys)
    assert "adr_trainer exited with code 0" in output and "adr_discriminator ignored Ctrl-C" in output, output
    assert code == 137, output
    assert "adr_discriminator had to be killed" in output


def test_a_helper_is_killed_a_grace_after_the_node_it_serves_ended_the_run(monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture,
                                                                           tmp_path: Path) -> None:
    """A run that ends: the trainer exits 0, then the launcher stops the graph. A helper still running
    SERVED_EXIT_GRACE_S after the trainer's exit is killed then, as when the trainer exits during a Ctrl-C (it got its
    whole shutdown_timeout instead, 300 s for the sampler: a graph test gave up waiting for a sampler that had not
    noticed its trainer was gone)."""
    from adr import launcher

    monkeypatch.setattr(launcher, "SERVED_EXIT_GRACE_S", 1.0)
    ready = tmp_path / "helper_ignores_ctrl_c"
    stubborn = (f"import pathlib, signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                f"pathlib.Path({str(ready)!r}).touch(); time.sleep(120)")
    ends_the_run = f"import pathlib, time\nwhile not pathlib.Path({str(ready)!r}).exists():\n    time.sleep(0.05)"
    code, output = _run_python_graph(monkeypatch, [
        _python_node("adr_sampler", stubborn, shutdown_timeout=20.0, serves="adr_trainer"),
        _python_node("adr_trainer", ends_the_run)], capsys)
    assert "adr_trainer exited with code 0" in output, output
    assert "(1 s after adr_trainer, which it serves, exited); killing it" in output, output
    assert code == 137, output
    assert "adr_sampler had to be killed" in output


def test_a_run_dir_under_a_file_and_a_negative_monitor_count_are_refused_in_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("kept")
    printed = _printed_run_spec(f"run_dir:={a_file}")
    assert printed.returncode == 2 and printed.stderr.strip() == (
        f"adr_launch: train_sim: run_dir:={a_file} is a file, not a directory")
    monitor = subprocess.run([str(executable("adr", "adr_monitor")), "--count", "-1"], capture_output=True, text=True,
                             timeout=60)
    assert monitor.returncode == 2 and monitor.stderr.strip().splitlines()[-1] == (
        "adr_monitor: error: argument --count: -1 is below 1")


LAUNCHER_THEN_KILLED = """
import os, sys
from adr import launcher
from adr.graph import GRAPHS, NodeSpec
launcher.node_command = lambda spec: [sys.executable, "-c", spec.arguments[0]]
spec = NodeSpec("adr", "unused", "adr_trainer", arguments=(sys.argv[1],))
launcher.run_graph(GRAPHS["train_sim"], [spec], dict(os.environ))
"""


def test_nodes_get_ctrl_c_when_their_launcher_is_killed(tmp_path: Path) -> None:
    """SIGKILL leaves the launcher no time to stop its nodes; the kernel interrupts them (PR_SET_PDEATHSIG), so none
    goes on talking to a later graph of the same ROS domain."""
    import os
    import sys
    import time

    started, stopped = tmp_path / "started", tmp_path / "stopped"
    # 'started' is written inside the try: a signal right after it still lands in the handler (under load the test
    # killed the launcher between the write and a try after it, and the node died with no 'stopped')
    # the handler is installed as rclpy's nodes install theirs: a suite started from a background shell inherits
    # SIGINT ignored, and a plain Python child would keep ignoring it
    node = ("import pathlib, signal, time\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
            f"try:\n    pathlib.Path({str(started)!r}).write_text('x')\n    time.sleep(60)\n"
            f"except KeyboardInterrupt:\n    pathlib.Path({str(stopped)!r}).write_text('interrupted')")
    launch = subprocess.Popen([sys.executable, "-c", LAUNCHER_THEN_KILLED, node], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "the node never started"
        os.kill(launch.pid, signal.SIGKILL)
        launch.wait(timeout=10)
        deadline = time.monotonic() + 30  # a starved machine; polled for the text (the file is created before it)
        while not (stopped.exists() and stopped.read_text() == "interrupted") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stopped.exists() and stopped.read_text() == "interrupted"
    finally:
        launch.kill()
