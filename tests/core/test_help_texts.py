"""Help texts and docs true to the code: every option the README and docs show for a command exists in that
command's ``--help``, and every ``name:=value`` they show for a launch file is one of its arguments."""
from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from adr.graph import GRAPHS

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMAND = re.compile(r"(adr-[a-z][a-z-]*|adr_launch"
                     r"|python3? (?:-m (?:benchmarks|experiments)\.\w+|examples/[\w/]+\.py))")
LAUNCH = re.compile(r"\b(train_sim|deploy_real)\.launch\.py")


def shown_options() -> dict[str, set[str]]:
    """command -> the --options written after it on a line of the docs (up to a comment, a table cell or a pipe)."""
    shown: dict[str, set[str]] = {}
    for doc in DOCS:
        for line in doc.read_text().splitlines():
            for match in COMMAND.finditer(line):
                rest = re.split(r"\s#|`|\||;|&&", line[match.end():])[0]
                shown.setdefault(match.group(1), set()).update(re.findall(r"(?<![\w-])--[a-z][\w-]*", rest))
    return shown


def shown_launch_arguments() -> list[tuple[str, str, str]]:
    """(doc, graph, name) for every name:= on a line that starts that graph (make train passes them through)."""
    found = []
    for doc in DOCS:
        for line in doc.read_text().splitlines():
            graph = LAUNCH.search(line) or ("make train ARGS=" in line and "train_sim")
            if graph:
                name = graph if isinstance(graph, str) else graph.group(1)
                found += [(doc.name, name, arg) for arg in re.findall(r"(?<![\w.])([a-z_]+):=", line)]
    return found


@cache
def help_text(command: str) -> str:
    argv = [sys.executable, *command.split()[1:]] if command.startswith("python") else [command]
    done = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, f"{command} --help failed:\n{done.stderr[-2000:]}"
    return done.stdout


OPTIONS = sorted((command, option) for command, options in shown_options().items() for option in options
                 if option != "--help")


def test_the_docs_show_commands_with_options() -> None:
    """The scan finds what it checks (a scan that matched nothing would pass trivially)."""
    commands = {command for command, _ in OPTIONS}
    assert {"adr-train", "adr_launch", "python -m experiments.time_to_land"} <= commands or len(OPTIONS) > 20


@pytest.mark.parametrize(("command", "option"), OPTIONS)
def test_every_option_the_docs_show_is_in_the_commands_help(command: str, option: str) -> None:
    assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", help_text(command)), \
        f"the docs show `{command} {option}`, which its --help does not list"


@pytest.mark.parametrize(("doc", "graph", "name"), sorted(set(shown_launch_arguments())))
def test_every_launch_argument_the_docs_show_exists(doc: str, graph: str, name: str) -> None:
    known = {argument.name for argument in GRAPHS[graph].arguments}
    assert name in known, f"{doc} shows {name}:= for {graph}.launch.py; its arguments: {sorted(known)}"


def test_the_config_argument_points_to_a_command_that_lists_the_experiments() -> None:
    (config,) = [a for a in GRAPHS["train_sim"].arguments if a.name == "config"]
    assert "adr-train --list" in config.description
    listed = subprocess.run(["adr-train", "--list"], capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and "lunar_lander_adr_fast" in listed.stdout
