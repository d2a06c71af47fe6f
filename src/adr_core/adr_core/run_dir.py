"""A run directory, written once: its file names, its checkpoints and the checks that a checkpoint fits a run.

Used by the in-process trainer, the ROS nodes, evaluation and deployment alike::

    <run_dir>/config.yaml                 the run's resolved TrainConfig
    <run_dir>/metrics.csv                 one row per iteration (both runners write the same columns)
    <run_dir>/sampled_parameters.csv      every proposal
    <run_dir>/evaluation.csv              the periodic evaluation (learning curves)
    <run_dir>/tb/                         TensorBoard
    <run_dir>/checkpoints/latest.pt       in-process runs: the whole state (iter_<n>.pt: kept snapshots)
    <run_dir>/checkpoints/latest.json     node-graph runs: the manifest naming one <component>-<k>.pt per node

Checkpoint files are ``adr_core.base.checkpoint`` files (atomic writes, ``weights_only`` reads).
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from .base.checkpoint import CheckpointError, load_checkpoint

CONFIG_FILE = "config.yaml"
METRICS_FILE = "metrics.csv"
SAMPLES_FILE = "sampled_parameters.csv"
CHECKPOINTS = "checkpoints"
IN_PROCESS_LATEST = "latest.pt"
MANIFEST = "latest.json"
_SNAPSHOT = re.compile(r"^(?:iter_(\d+)|agent-(\d+))\.pt$")
IDENTITY_KEYS = ("env_id", "space", "obs_dim", "act_dim")


class RunDirError(ValueError):
    """The run directory cannot be created or written; the message says which and why."""


def prepare_run_dir(run_dir: str | Path) -> Path:
    """Create the run directory (and the folders above it) and check a file can be written in it: an unwritable one
    (a read-only file system, no permission, a file in the way) is one line, before the run starts."""
    path = Path(run_dir)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise RunDirError(f"run directory {path} cannot be written: {error.strerror or error}") from None
    return path


def checkpoint_dir(run_dir: str | Path) -> Path:
    return Path(run_dir) / CHECKPOINTS


def snapshot_file(iteration: int) -> str:
    """A kept in-process snapshot."""
    return f"iter_{iteration:06d}.pt"


def component_file(component: str, iteration: int) -> str:
    """A graph node's checkpoint of one iteration (agent, sampler, discriminator)."""
    return f"{component}-{iteration:06d}.pt"


# ------------------------------------------------------------------ the graph's manifest
def write_manifest(run_dir: str | Path, iteration: int, files: dict[str, str]) -> Path:
    """Atomically point ``latest.json`` at the files of ``iteration`` (all must exist)."""
    directory = checkpoint_dir(run_dir)
    missing = [name for name in files.values() if not (directory / name).is_file()]
    if missing:
        raise CheckpointError(f"cannot write the manifest of iteration {iteration}: missing {missing}")
    fd, tmp = tempfile.mkstemp(prefix=".latest.", suffix=".json", dir=directory)
    with os.fdopen(fd, "w") as handle:
        json.dump({"iteration": int(iteration), "files": files}, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, directory / MANIFEST)
    return directory / MANIFEST


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    path = checkpoint_dir(run_dir) / MANIFEST
    try:
        manifest: dict[str, Any] = json.loads(path.read_text())
        int(manifest["iteration"]), dict(manifest["files"])
    except FileNotFoundError:
        raise CheckpointError(f"nothing to resume: {path} does not exist") from None
    except (ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"{path} is not a checkpoint manifest ({error})") from None
    return manifest


def manifest_file(manifest_path: Path, component: str = "agent") -> Path:
    """The file a manifest names for ``component`` (a bare name inside the manifest's folder)."""
    try:
        name = json.loads(manifest_path.read_text())["files"][component]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"{manifest_path} is not a checkpoint manifest naming an {component} file "
                              f"({error})") from None
    if not isinstance(name, str) or Path(name).name != name:
        raise CheckpointError(f"{manifest_path} names {name!r}; expected a file name inside {manifest_path.parent}")
    return manifest_path.parent / name


def load_component(run_dir: str | Path, component: str) -> dict[str, Any]:
    """The payload the manifest names for ``component``; its ``iteration`` must match the manifest's."""
    manifest = read_manifest(run_dir)
    name = manifest["files"].get(component)
    if name is None:
        raise CheckpointError(f"the manifest of iteration {manifest['iteration']} names no {component} file")
    if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
        raise CheckpointError(f"{checkpoint_dir(run_dir) / MANIFEST} names {name!r} for the {component}; expected a "
                              f"file name inside {checkpoint_dir(run_dir)} (no folders, no absolute paths)")
    payload = load_checkpoint(checkpoint_dir(run_dir) / name)
    if payload.get("iteration") != manifest["iteration"]:
        raise CheckpointError(f"{name} holds iteration {payload.get('iteration')}, the manifest says "
                              f"{manifest['iteration']}")
    return payload


# ------------------------------------------------------------------ finding a run's policy checkpoint
def resolve_checkpoint(path: str | Path) -> Path:
    """The checkpoint file ``path`` designates: a run directory (its in-process ``latest.pt``, else the agent file
    its manifest names), a ``checkpoints/`` folder, a ``latest.json`` manifest or a ``.pt`` file."""
    path = Path(path)
    if path.is_file():
        return manifest_file(path) if path.suffix == ".json" else path
    if not path.is_dir():
        raise CheckpointError(f"no run directory or checkpoint at {path}")
    holds_checkpoints = (path / IN_PROCESS_LATEST).is_file() or (path / MANIFEST).is_file()
    directory = path if holds_checkpoints else checkpoint_dir(path)
    if (directory / IN_PROCESS_LATEST).is_file():
        return directory / IN_PROCESS_LATEST
    if (directory / MANIFEST).is_file():
        return manifest_file(directory / MANIFEST)
    raise CheckpointError(f"{path} holds no checkpoint: expected {CHECKPOINTS}/{IN_PROCESS_LATEST} (adr-train) or "
                          f"{CHECKPOINTS}/{MANIFEST} (node graph)")


def snapshot_checkpoints(run_dir: str | Path) -> list[Path]:
    """Policy snapshots kept during training (``iter_<n>.pt`` or ``agent-<k>.pt``), oldest first."""
    directory = checkpoint_dir(run_dir)
    if not directory.is_dir():
        return []
    found = [(int(m.group(1) or m.group(2)), p) for p in directory.iterdir() if (m := _SNAPSHOT.match(p.name))]
    return [p for _, p in sorted(found)]


# ------------------------------------------------------------------ does a checkpoint fit this run?
def run_identity(env_id: str, space_dict: dict[str, Any], obs_dim: int, act_dim: int) -> dict[str, Any]:
    """The keys every checkpoint payload carries so that a loader can tell which run it belongs to."""
    return {"env_id": env_id, "space": space_dict, "obs_dim": int(obs_dim), "act_dim": int(act_dim)}


def check_identity(payload: dict[str, Any], expected: dict[str, Any], path: str | Path) -> None:
    """Refuse a checkpoint of another env, shape or randomization space, naming what differs."""
    missing = [k for k in IDENTITY_KEYS if k not in payload]
    if missing:
        raise CheckpointError(f"{path} lacks {missing}; it was not written by this project's trainers")
    found = tuple(payload[k] for k in ("env_id", "obs_dim", "act_dim"))
    wanted = tuple(expected[k] for k in ("env_id", "obs_dim", "act_dim"))
    if found != wanted:
        raise CheckpointError(f"{path} is for (env, obs_dim, act_dim) = {found}, this run is {wanted}")
    if payload["space"] != expected["space"]:
        raise CheckpointError(f"{path} was trained on a different randomization space of {payload['env_id']}")


def check_config(saved: dict[str, Any], config: Any, path: str | Path) -> None:
    """Refuse a checkpoint written with another config, except for the keys that may change on resume. The saved
    config is read as a file's (``TrainConfig.from_saved``): the modules it names are not imported."""
    kind = type(config)  # TrainConfig (read through the instance: this module sits below training/)
    differences = config.differences(kind.from_saved(saved, f"{path}"), ignore=kind.RUNTIME_FIELDS)
    if differences:
        raise CheckpointError(f"{path} was written with a different config; differing keys: {differences}")
