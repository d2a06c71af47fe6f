"""Per-node checkpoint files of a graph run and the manifest that ties them together.

Each stateful node writes ``<run_dir>/checkpoints/<component>-<iteration:06d>.pt`` (atomic, ``adr_core`` format);
the trainer writes ``checkpoints/latest.json`` last, naming one file per component for the same iteration.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

from adr_core.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from adr_interfaces.srv import SaveCheckpoint

CHECKPOINTS = "checkpoints"
MANIFEST = "latest.json"


def checkpoint_dir(run_dir: str | Path) -> Path:
    return Path(run_dir) / CHECKPOINTS


def component_file(component: str, iteration: int) -> str:
    return f"{component}-{iteration:06d}.pt"


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
        manifest = json.loads(path.read_text())
        int(manifest["iteration"]), dict(manifest["files"])
    except FileNotFoundError:
        raise CheckpointError(f"nothing to resume: {path} does not exist") from None
    except (ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"{path} is not a checkpoint manifest ({error})") from None
    return manifest


def load_component(run_dir: str | Path, component: str) -> dict[str, Any]:
    """The payload the manifest names for ``component``; its ``iteration`` must match the manifest's."""
    manifest = read_manifest(run_dir)
    name = manifest["files"].get(component)
    if name is None:
        raise CheckpointError(f"the manifest of iteration {manifest['iteration']} names no {component} file")
    payload = load_checkpoint(checkpoint_dir(run_dir) / name)
    if payload.get("iteration") != manifest["iteration"]:
        raise CheckpointError(f"{name} holds iteration {payload.get('iteration')}, the manifest says "
                              f"{manifest['iteration']}")
    return payload


class SnapshotKeeper:
    """The state of a node after each of its last ``keep`` completed iterations, ready to be written."""

    def __init__(self, component: str, keep: int = 2) -> None:
        self.component = component
        self._keep = keep
        self._snapshots: OrderedDict[int, dict[str, Any]] = OrderedDict()

    @property
    def last_completed(self) -> int | None:
        return next(reversed(self._snapshots)) if self._snapshots else None

    def keep(self, iteration: int, payload: dict[str, Any]) -> None:
        self._snapshots[iteration] = payload
        while len(self._snapshots) > self._keep:
            self._snapshots.popitem(last=False)

    def write(self, directory: str | Path, iteration: int) -> Path:
        if iteration not in self._snapshots:
            raise CheckpointError(f"iteration {iteration} not completed yet or too old; last completed: "
                                  f"{self.last_completed}, kept: {list(self._snapshots)}")
        return save_checkpoint(Path(directory) / component_file(self.component, iteration),
                               self._snapshots[iteration])

    def save(self, request: SaveCheckpoint.Request, response: SaveCheckpoint.Response) -> SaveCheckpoint.Response:
        """Serve a SaveCheckpoint request."""
        try:
            response.path = str(self.write(request.directory, request.iteration))
            response.success, response.message = True, f"{self.component} state of iteration {request.iteration}"
        except (CheckpointError, OSError) as error:
            response.success, response.message = False, str(error)
        return response

    def save_all(self, run_dir: str | Path) -> list[Path]:
        """On shutdown: write every kept snapshot, so the trainer can tie the newest common iteration."""
        return [self.write(checkpoint_dir(run_dir), iteration) for iteration in self._snapshots]
