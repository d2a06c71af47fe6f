"""``option(default, help)``: a dataclass field that carries its own documentation (shown by ``adr-train --help``)."""
from __future__ import annotations

from dataclasses import field
from typing import Any


def option(default: Any, help: str) -> Any:  # noqa: A002 - mirrors argparse's name
    if isinstance(default, (list, dict, set)):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})
