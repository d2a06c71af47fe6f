"""Find the packaged randomization space of an env id (YAML files in ``adr_core/config/spaces``)."""
from __future__ import annotations

from pathlib import Path

from .errors import RandomizationError
from .space import RandomizationSpace

SPACES_DIR = Path(__file__).resolve().parent.parent / "config" / "spaces"
ENV_NAMESPACE = "adr/"
_SPACE_FILES: dict[str, Path] = {}  # env id -> space YAML of an env registered with its own (adr_core.envs.registry)


def register_space_file(env_id: str, path: str | Path) -> None:
    """The space of ``env_id`` is the YAML file ``path`` (an env registered outside the packaged ones)."""
    _SPACE_FILES[env_id] = Path(path)


def packaged_space_path(env_id: str) -> Path:
    """``adr/LunarLander-v0`` (or ``LunarLander-v0``) -> ``.../config/spaces/LunarLander-v0.yaml``."""
    stem = env_id[len(ENV_NAMESPACE):] if env_id.startswith(ENV_NAMESPACE) else env_id
    return SPACES_DIR / f"{stem}.yaml"


def available_spaces() -> list[str]:
    return sorted([ENV_NAMESPACE + p.stem for p in SPACES_DIR.glob("*.yaml")] + list(_SPACE_FILES))


def space_of(env_id: str, space: RandomizationSpace | str | Path | None = None) -> RandomizationSpace:
    """The space a run uses: ``space`` itself, the packaged variant or YAML file it names, or (None) the env's
    packaged space."""
    if isinstance(space, RandomizationSpace):
        return space
    return load_space(env_id if space is None else space)


def load_space(env_id_or_yaml_path: str | Path) -> RandomizationSpace:
    """The space of an env id (packaged YAML) or of a YAML file path."""
    text = str(env_id_or_yaml_path)
    if text in _SPACE_FILES:
        return RandomizationSpace.from_yaml(_SPACE_FILES[text])
    if text.endswith((".yaml", ".yml")) or Path(text).is_file():
        return RandomizationSpace.from_yaml(text)
    path = packaged_space_path(text)
    if not path.is_file():
        raise RandomizationError(f"no packaged randomization space for {text!r}; available: {available_spaces()}")
    return RandomizationSpace.from_yaml(path)
