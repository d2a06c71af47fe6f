"""Every console script's bad input, table-driven from the tools' own argparse definitions (issue 47).

Every option and positional of every tool must carry a declared check (an ``adr_core.cli_types.Checked`` type, or
argparse ``choices``); a new option without one fails here. Each check names the values it refuses; every one of
them, fed to the tool, must give one clear error line naming the option (and nothing else on stderr: no argparse
usage block, issue 61), a nonzero exit, no traceback, and write nothing (the scratch folder and the working directory
stay as they were). Every tool's parser is ``adr_core.cli_types.ArgumentParser``, whose errors are that one line.
"""
from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from adr_core.cli_types import ArgumentParser, Checked


@dataclass(frozen=True)
class Tool:
    module: str
    main: str
    base: Callable[[Path], list[str]]  # a valid command line up to the option under test (the scratch folder given)
    parser: str = "build_parser"


TOOLS: dict[str, Tool] = {
    "adr-train": Tool("adr_core.training.cli", "main", lambda s: ["--out", str(s / "new_run")]),
    "adr-evaluate": Tool("adr_core.evaluation.cli", "evaluate_main", lambda s: [str(s / "a_folder")]),
    "adr-report": Tool("adr_core.report.cli", "main", lambda s: [str(s / "a_folder"), "--out", str(s / "report")]),
    "adr-export": Tool("adr_core.export", "main", lambda s: [str(s / "a_folder"), "--format", "onnx"]),
    "adr-probe": Tool("adr_core.probe.cli", "main",
                      lambda s: ["--policy", "adr_core.probe.controllers:lunar_lander_heuristic", "--out",
                                 str(s / "probe")]),
    "adr-deploy-report": Tool("adr_deploy.real_report", "main", lambda s: ["--out", str(s / "report")]),
    "adr-identify": Tool("adr.identify_cli", "main",
                         lambda s: ["--env", "adr/ErgoPusher-v0", "--log", str(s / "a_folder"), "--out",
                                    str(s / "identified")]),
    "adr-standin-arm": Tool("poppy_standin.cli", "main", lambda s: ["--link", str(s / "tty")]),
    "adr_monitor": Tool("adr.monitor", "main", lambda s: []),
    "adr_launch": Tool("adr.launcher", "main", lambda s: ["adr", "train_sim.launch.py"]),
}
FLAG_ACTIONS = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._HelpAction,  # noqa: SLF001
                argparse._StoreConstAction, argparse._CountAction, argparse._VersionAction)  # noqa: SLF001


def parser_of(tool: Tool) -> argparse.ArgumentParser:
    return getattr(importlib.import_module(tool.module), tool.parser)()


def checked_actions(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its definitions there
        if not isinstance(action, FLAG_ACTIONS):
            yield action


def cases() -> Iterator[tuple[str, str, str]]:
    scratch = Path("SCRATCH")
    for name, tool in TOOLS.items():
        for action in checked_actions(parser_of(tool)):
            label = action.option_strings[0] if action.option_strings else action.dest
            values = list(action.type.bad_values(scratch)) if isinstance(action.type, Checked) else []
            if action.choices is not None:
                values.append("not_a_choice")
            for value in values:
                yield name, label, value


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_option_of_every_tool_declares_its_check(name: str) -> None:
    unchecked = [action.option_strings[0] if action.option_strings else action.dest
                 for action in checked_actions(parser_of(TOOLS[name]))
                 if not isinstance(action.type, Checked) and action.choices is None]
    assert not unchecked, f"{name}: options without a declared check (adr_core.cli_types): {unchecked}"


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_tool_builds_the_one_line_parser(name: str) -> None:
    assert isinstance(parser_of(TOOLS[name]), ArgumentParser), f"{name}: not adr_core.cli_types.ArgumentParser"


def test_no_command_line_of_the_project_builds_argparses_own_parser() -> None:
    """Console scripts and experiment drivers alike (experiments/preset_search.py is another change's, issue 61)."""
    root = Path(__file__).resolve().parents[2]
    offenders = [str(path.relative_to(root)) for folder in ("src", "experiments")
                 for path in (root / folder).rglob("*.py")
                 if "argparse.ArgumentParser(" in path.read_text() and path.name != "preset_search.py"]
    assert not offenders, f"argparse.ArgumentParser prints its usage block with every error; use " \
                          f"adr_core.cli_types.ArgumentParser in {offenders}"


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "a_file").write_text("kept")
    (tmp_path / "a_folder").mkdir()
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def argv_with(tool: Tool, parser: argparse.ArgumentParser, label: str, value: str, scratch: Path) -> list[str]:
    base = tool.base(scratch)
    action = next(a for a in checked_actions(parser)
                  if (a.option_strings and a.option_strings[0] == label) or (not a.option_strings and a.dest == label))
    if not action.option_strings:  # a positional: put the bad value in its place
        positionals = [a for a in checked_actions(parser) if not a.option_strings]
        index = positionals.index(action)
        plain = [i for i, item in enumerate(base) if not item.startswith("-") and
                 (i == 0 or not base[i - 1].startswith("-"))]
        if index < len(plain):
            base[plain[index]] = value
        else:
            base.append(value)
        return base
    if label in base:  # replace the base's own value of this option
        position = base.index(label)
        return base[:position] + [label, value] + base[position + 2:]
    return base + [label, value]


@pytest.mark.parametrize("name, label, value", list(cases()))
def test_a_bad_value_is_one_line_a_nonzero_exit_and_nothing_written(name: str, label: str, value: str,
                                                                     scratch: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    tool = TOOLS[name]
    parser = parser_of(tool)
    value = value.replace("SCRATCH", str(scratch))
    argv = argv_with(tool, parser, label, value, scratch)
    before = snapshot(scratch)
    main = getattr(importlib.import_module(tool.module), tool.main)
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main(argv))
    err = capsys.readouterr().err
    assert exit_info.value.code not in (0, None), f"{name} {argv}: accepted"
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"{name} {argv}: {len(lines)} lines on stderr, not one:\n{err}"
    last = lines[-1]
    prog = parser.prog
    assert last.startswith(f"{prog}:") and (label.lstrip("-") in last or label in last or value in last), last
    assert snapshot(scratch) == before, f"{name} {argv} wrote {set(snapshot(scratch)) - set(before)}"


def test_the_table_covers_every_console_script_with_a_parser() -> None:
    """Each argparse console script of the packages is in TOOLS (the ROS nodes take checked parameters instead)."""
    import re

    root = Path(__file__).resolve().parents[2] / "src"
    scripts = set()
    for setup in root.glob("*/setup.py"):
        scripts |= set(re.findall(r'"([\w-]+) = [\w.]+:\w+"', setup.read_text()))
    nodes = {"discriminator_node", "sampler_node", "sim_node", "trainer_node", "viewer_node", "adr_viewer",
             "poppy_driver", "policy_runner", "adr_record",
             "arm_identifier"}  # rclpy nodes: ROS parameters with descriptors
    assert scripts - nodes == set(TOOLS), scripts - nodes ^ set(TOOLS)
    assert os.path.isdir(root)


def test_an_unwritable_run_directory_is_one_line_before_the_run_starts(capsys: pytest.CaptureFixture[str]) -> None:
    """/proc takes no new folders (as a read-only or foreign file system would refuse them): adr-train says so in one
    line; the trainer node calls the same check (adr_core.run_dir.prepare_run_dir) in its constructor."""
    from adr_core.run_dir import RunDirError, prepare_run_dir
    from adr_core.training.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--out", "/proc/adr_unwritable_run", "--total_agent_steps", "100", "--progress", "false"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("adr-train: error: run directory /proc/adr_unwritable_run cannot be written")
    with pytest.raises(RunDirError, match="cannot be written"):
        prepare_run_dir("/proc/adr_unwritable_run/sub")
