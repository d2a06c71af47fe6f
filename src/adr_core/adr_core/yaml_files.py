"""YAML files of the project (configs, randomization spaces): read as a mapping with errors naming the file."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml


def read_yaml_mapping(path: str | Path, what: str, error: type[Exception]) -> Mapping[str, Any] | None:
    """The mapping in ``path`` (None for an empty file). An unreadable file, a YAML syntax error or a top level that is
    not a mapping raises ``error`` with one line naming ``what`` and the file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise error(f"{what} {path} is not valid YAML{where}: {problem}") from None
    if data is not None and not isinstance(data, Mapping):
        raise error(f"{what} {path}: the top level must be a mapping, got {type(data).__name__}")
    return data


def write_yaml(path: str | Path, data: Mapping[str, Any]) -> None:
    Path(path).write_text(yaml.safe_dump(dict(data), sort_keys=False))
