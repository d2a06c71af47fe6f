"""Every launch argument's bad input, table-driven from the graph descriptions themselves (issue 61, item 3).

Every argument of every graph declares what it refuses (``adr.graph.Argument.bad_values``: its choices, the form and
range of a number, and examples of the values its checks refuse), or says why no value can be refused at launch; a
new argument without either fails here. Each refused value, given to ``adr_launch``, must be one line on stderr naming
the argument or what is wrong with its value, a nonzero exit, and nothing written: no run directory, no key, no bag,
no DDS profile, and no node started (before, three arguments started the graph and wrote run.key and the run
directory before a node failed on them). ``ros2 launch`` builds its nodes from the same ``Graph.nodes``.
"""
from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from adr import launcher
from adr.graph import GRAPHS, graph_for_launch_file

BASE = {"train_sim": ["run_dir:=SCRATCH/new_run"], "deploy_real": ["checkpoint:=TINY_RUN", "dry_run:=true"],
        "identify_arm": ["log_dir:=SCRATCH/new_log", "dry_run:=true"]}


def cases() -> Iterator[tuple[str, str, str, tuple[str, ...]]]:
    for graph in GRAPHS.values():
        for argument in graph.arguments:
            for value, beside in argument.bad_values():
                yield graph.name, argument.name, value, beside


def test_every_launch_argument_declares_what_it_refuses() -> None:
    silent = [f"{graph.name}: {argument.name}" for graph in GRAPHS.values() for argument in graph.arguments
              if not argument.bad_values() and not argument.unchecked]
    assert not silent, f"launch arguments that refuse nothing and do not say why (Argument.bad / unchecked): {silent}"


@pytest.fixture(scope="module")
def tiny_ergo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ErgoReacher run (a few seconds of training): deploy_real checks its checkpoint before anything else."""
    from adr_core.training.config import TrainConfig
    from adr_core.training.trainer import Trainer

    out = tmp_path_factory.mktemp("ergo_run")
    Trainer(TrainConfig().with_overrides({
        "env_id": "adr/ErgoReacher-v0", "total_agent_steps": 200, "agent.batch_size": 32, "agent.learning_starts": 100,
        "agent.hidden_sizes": [16, 16], "svpg.num_particles": 2, "discriminator.hidden_size": 16, "torch_threads": 1,
        "tensorboard": False, "progress": False}), out).run()
    return out


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """SCRATCH: a_file, a_folder (holding a recorder's bag folder), a_key (a usable key); the working directory and
    ROS_HOME are folders of their own beside it."""
    from adr_ros.signing import create_key_file

    scratch = tmp_path / "scratch"
    (scratch / "a_folder" / "bag").mkdir(parents=True)
    (scratch / "a_file").write_text("kept")
    create_key_file(scratch / "a_key")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setenv("ROS_HOME", str(tmp_path / "ros_home"))
    for variable in ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE", "ADR_ENV_MODULES"):
        monkeypatch.delenv(variable, raising=False)
    return scratch


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize(("graph_name", "name", "value", "beside"), list(cases()))
def test_a_bad_launch_argument_is_one_line_a_nonzero_exit_and_nothing_written(
        graph_name: str, name: str, value: str, beside: tuple[str, ...], scratch: Path, busy_port: int,
        tiny_ergo_run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def fill(text: str) -> str:
        return (text.replace("SCRATCH", str(scratch)).replace("BUSY_PORT", str(busy_port))
                .replace("TINY_RUN", str(tiny_ergo_run)))

    value = fill(value)
    given = {assignment.split(":=")[0]: fill(assignment) for assignment in [*BASE[graph_name], *beside]}
    given[name] = f"{name}:={value}"
    # the nodes are built in this process (adr_launch builds them in a child, to keep torch out of the launcher)
    monkeypatch.setattr(launcher, "node_specs", lambda file, overrides: graph_for_launch_file(file).nodes(overrides))

    def started(*_: object) -> int:
        raise AssertionError(f"{graph_name} {name}:={value}: the graph started")

    monkeypatch.setattr(launcher, "run_graph", started)
    before = snapshot(scratch.parent)
    try:
        code = launcher.main(["adr", f"{graph_name}.launch.py", *given.values()])
    except SystemExit as exit_info:
        code = exit_info.code
    err = capsys.readouterr().err
    assert code not in (0, None), f"{graph_name} {name}:={value}: accepted"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("adr_launch: "), err
    named = [f"{name}:=", value, *(word for word in re.findall(r"[A-Za-z_][\w.-]{3,}", value))]
    assert any(part and part in lines[0] for part in named), lines[0]
    assert snapshot(scratch.parent) == before, f"{graph_name} {name}:={value} wrote something"
