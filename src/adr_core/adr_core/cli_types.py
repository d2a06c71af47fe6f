"""Argument types and checks every command line of the project shares: one clear line for a bad value."""
from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def at_least(low: int) -> Callable[[str], int]:
    """``type=at_least(1)``: an integer >= ``low``, else argparse's one-line error naming the option."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def writable_dir(path: Path, option: str = "--out") -> Path:
    """``path`` as an output folder: refused when it, or a folder above it, is a file (else created as needed)."""
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            named = f"{option}{'' if option.endswith('=') else ' '}{path}"
            raise ValueError(f"{named} is a file, not a directory" if part == path else
                             f"{named}: {part} is a file, not a directory")
    return path


def env_modules_option(parser: argparse.ArgumentParser) -> None:
    """``--env-modules``: modules the user allows a checkpoint or run config to name (they register its env)."""
    parser.add_argument("--env-modules", nargs="+", default=[], metavar="MODULE",
                        help="modules that register the env of a run made with env_modules (docs/environments.md); "
                             "a file never makes this tool import a module you did not name here or in "
                             "$ADR_ENV_MODULES")


def allow_env_modules(args: argparse.Namespace) -> None:
    from .envs import allow_env_modules as allow

    allow(args.env_modules)
