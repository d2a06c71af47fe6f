"""The packaged experiment configs (``adr_core/config/experiments/*.yaml``) and how a name or a path becomes one:
what ``adr-train --config``, the launchers' ``config:=`` and the experiment scripts share (no CLI module needed)."""
from __future__ import annotations

from pathlib import Path

from .config import ConfigError

EXPERIMENTS_DIR = Path(__file__).resolve().parent.parent / "config" / "experiments"


def packaged_experiments() -> list[str]:
    return sorted(p.stem for p in EXPERIMENTS_DIR.glob("*.yaml"))


def resolve_experiment(name_or_path: str) -> Path:
    """A YAML file's path as given, else the packaged experiment of that name; ConfigError naming the packaged ones."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    packaged = EXPERIMENTS_DIR / f"{name_or_path}.yaml"
    if packaged.is_file():
        return packaged
    raise ConfigError(f"no config file {name_or_path!r} and no packaged experiment of that name; "
                      f"packaged: {packaged_experiments()}")
