"""Argument types and checks every command line of the project shares: one clear line for a bad value.

Every option of every console script has one of these types (``tests/core/test_cli_bad_input.py`` enforces it from
the parsers themselves, so an option added later cannot skip validation). Each type knows what it refuses
(``bad_values``): the table-driven test feeds those to every tool and expects one line, a nonzero exit, no traceback
and nothing written. Checks that need the disk (a folder to write into, a file to read) happen while the arguments
are parsed, i.e. before a tool writes anything.

Every console script (and experiment driver) builds its parser with ``ArgumentParser`` below: a bad argument is the
one line ``<prog>: error: <what>`` and exit status 2, where argparse prints its whole usage block first (53 lines for
adr-train); ``--help`` is unchanged. A tool's own refusals go through ``parser.error`` too, so they read the same.
"""
from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

MAX_SEED = 2**31 - 1
MAX_DOMAIN_ID = 232  # the largest ROS_DOMAIN_ID the DDS port mapping accepts (ROS 2 docs, "The ROS_DOMAIN_ID")


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line: ``<prog>: error: <message>``, exit status 2 (``--help`` shows the
    usage). Sub-parsers made with ``add_subparsers`` are of this class too (argparse uses the parent's class)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


class Checked:
    """An argparse ``type``: ``parse(text)`` or ``argparse.ArgumentTypeError`` with the reason; ``kind`` and
    ``bad_values(scratch)`` (examples it refuses, given a scratch folder holding a file ``a_file`` and a folder
    ``a_folder``) for the table-driven test."""

    def __init__(self, kind: str, name: str, parse: Callable[[str], Any],
                 bad_values: Callable[[Path], list[str]] = lambda _: []) -> None:
        self.kind, self.__name__, self._parse, self.bad_values = kind, name, parse, bad_values

    def __call__(self, text: str) -> Any:
        return self._parse(text)

    def __repr__(self) -> str:
        return f"<{self.kind}: {self.__name__}>"


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def at_least(low: int) -> Checked:
    """An integer >= ``low`` (counts: episodes, points, workers, iterations)."""
    def parse(text: str) -> int:
        value = _integer(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        return value

    return Checked("count", f"integer >= {low}", parse, lambda _: [str(low - 1), "-5", "1.5", "nan", "x"])


def integer_in(low: int, high: int, what: str = "integer") -> Checked:
    """An integer in [low, high] (seeds, ids)."""
    def parse(text: str) -> int:
        value = _integer(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is outside [{low}, {high}]")
        return value

    return Checked("bounded_integer", f"{what} in [{low}, {high}]", parse,
                   lambda _: [str(low - 1), str(high + 1), "nan", "x"])


seed = integer_in(0, MAX_SEED, "seed")
domain_id = integer_in(0, MAX_DOMAIN_ID, "ROS domain id")


def positive_number(what: str = "number") -> Checked:
    """A finite number > 0 (durations, thresholds)."""
    def parse(text: str) -> float:
        value = _number(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{value:g} is not above 0")
        return value

    return Checked("positive", f"{what} > 0", parse, lambda _: ["0", "-5", "nan", "inf", "x"])


def non_negative_number(what: str = "number") -> Checked:
    """A finite number >= 0 (noise levels)."""
    def parse(text: str) -> float:
        value = _number(text)
        if value < 0:
            raise argparse.ArgumentTypeError(f"{value:g} is below 0")
        return value

    return Checked("non_negative", f"{what} >= 0", parse, lambda _: ["-0.5", "nan", "inf", "x"])


def number_in(low: float, high: float, what: str = "number") -> Checked:
    """A finite number in [low, high] (speeds, torques)."""
    def parse(text: str) -> float:
        value = _number(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value:g} is outside [{low:g}, {high:g}]")
        return value

    return Checked("bounded_number", f"{what} in [{low:g}, {high:g}]", parse,
                   lambda _: [f"{low - 1:g}", f"{high + 1:g}", "nan", "inf", "x"])


def writable_dir(path: Path, option: str = "--out") -> Path:
    """``path`` as an output folder: refused when it, or a folder above it, is a file, or when the folder (or the
    nearest existing one above it) cannot be written (else created as needed, later, by the tool)."""
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            named = f"{option}{'' if option.endswith('=') else ' '}{path}"
            raise ValueError(f"{named} is a file, not a directory" if part == path else
                             f"{named}: {part} is a file, not a directory")
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {path}: {existing} is not writable")
    return path


def _scratch_bad_dirs(scratch: Path) -> list[str]:
    return [str(scratch / "a_file"), str(scratch / "a_file" / "sub")]


def output_dir(option: str = "--out") -> Checked:
    """A folder the tool writes into (created as needed): not a file, nothing above it a file, writable."""
    def parse(text: str) -> Path:
        try:
            return writable_dir(Path(text), option)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error).removeprefix(f"{option} ")) from None

    return Checked("output_dir", "output folder", parse, _scratch_bad_dirs)


def existing_path(what: str = "path") -> Checked:
    """A file or folder that must exist (a run directory, a checkpoint)."""
    def parse(text: str) -> Path:
        path = Path(text)
        if not path.exists():
            raise argparse.ArgumentTypeError(f"{text}: no such file or folder")
        return path

    return Checked("existing_path", what, parse, lambda scratch: [str(scratch / "missing")])


def existing_file(what: str = "file") -> Checked:
    def parse(text: str) -> Path:
        path = Path(text)
        if not path.is_file():
            raise argparse.ArgumentTypeError(f"{text}: {'a folder, not a file' if path.is_dir() else 'no such file'}")
        return path

    return Checked("existing_file", what, parse, lambda scratch: [str(scratch / "missing"), str(scratch / "a_folder")])


def existing_dir(what: str = "folder") -> Checked:
    def parse(text: str) -> Path:
        path = Path(text)
        if not path.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: {'a file, not a folder' if path.exists() else 'no such folder'}")
        return path

    return Checked("existing_dir", what, parse, lambda scratch: [str(scratch / "missing"), str(scratch / "a_file")])


def text(what: str) -> Checked:
    """Free text the tool checks itself (a config name, a policy spec, KEY=VALUE); declared, so that the table test
    knows the option was considered."""
    return Checked("text", what, lambda value: value)


def env_modules_option(parser: argparse.ArgumentParser) -> None:
    """``--env-modules``: modules the user allows a checkpoint or run config to name (they register its env)."""
    parser.add_argument("--env-modules", nargs="+", default=[], metavar="MODULE", type=text("module name"),
                        help="modules that register the env of a run made with env_modules (docs/environments.md); "
                             "a file never makes this tool import a module you did not name here or in "
                             "$ADR_ENV_MODULES")

