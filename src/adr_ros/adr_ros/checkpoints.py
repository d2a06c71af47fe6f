"""Per-node checkpoints of a graph run: the snapshots a node keeps and the SaveCheckpoint service it serves.

Each stateful node writes ``<run_dir>/checkpoints/<component>-<iteration:06d>.pt`` (atomic, ``adr_core`` format);
the trainer writes ``checkpoints/latest.json`` last, naming one file per component for the same iteration. The
layout, the manifest and the checks are ``adr_core.run_dir``'s (re-exported here for the nodes).
"""
from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from adr_core.base.checkpoint import CheckpointError, save_checkpoint
from adr_core.run_dir import (
    CHECKPOINTS,
    MANIFEST,
    checkpoint_dir,
    component_file,
    load_component,
    read_manifest,
    write_manifest,
)
from adr_interfaces.srv import SaveCheckpoint
from adr_ros.diagnostics import NodeDiagnostics
from adr_ros.signing import RunSigning

__all__ = ["CHECKPOINTS", "MANIFEST", "SnapshotKeeper", "checkpoint_dir", "component_file", "load_component",
           "read_manifest", "write_manifest"]

class SnapshotKeeper:
    """The state of a node after each of its last ``keep`` completed iterations, ready to be written.

    ``run_dir``: also write each snapshot to ``<run_dir>/checkpoints/`` as soon as the iteration completes (before the
    node tells anyone it completed), so a node killed later, even by SIGKILL, has left its state of every iteration
    the trainer counts as complete: the trainer's final checkpoint can name it, and ``resume:=true`` continues from
    there even before the first periodic checkpoint. This node's older files are removed as it goes, except the
    newest ``keep`` + 1, the one ``latest.json`` names and those of periodic checkpoints (``checkpoint_every``)."""

    def __init__(self, component: str, keep: int = 2, run_dir: str | Path | None = None,
                 checkpoint_every: int | None = None) -> None:
        self.component = component
        self._keep = keep
        self._snapshots: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self._run_dir = None if run_dir is None else Path(run_dir)
        self._checkpoint_every = checkpoint_every

    @property
    def last_completed(self) -> int | None:
        return next(reversed(self._snapshots)) if self._snapshots else None

    def keep(self, iteration: int, payload: dict[str, Any]) -> None:
        """Keep the state after ``iteration``; with a ``run_dir``, write it at once (raises ``CheckpointError``)."""
        self._snapshots[iteration] = payload
        while len(self._snapshots) > self._keep:
            self._snapshots.popitem(last=False)
        if self._run_dir is not None:
            self.write(checkpoint_dir(self._run_dir), iteration)
            self._prune()

    def _prune(self) -> None:
        """Remove this component's files that no checkpoint needs (left by this run or by one that died)."""
        assert self._run_dir is not None
        directory = checkpoint_dir(self._run_dir)
        try:
            named = set(read_manifest(self._run_dir)["files"].values())
        except (CheckpointError, OSError, KeyError, ValueError):
            named = set()
        on_disk: dict[int, Path] = {}
        for path in directory.glob(f"{self.component}-*.pt"):
            suffix = path.stem.rsplit("-", 1)[-1]
            if suffix.isdigit():
                on_disk[int(suffix)] = path
        recent = sorted(on_disk)[-(self._keep + 1):]  # one more than in memory: an async trainer may roll back one
        every = self._checkpoint_every
        for iteration, path in on_disk.items():
            periodic = every is not None and (iteration + 1) % every == 0
            if iteration not in recent and path.name not in named and not periodic:
                path.unlink(missing_ok=True)

    def write(self, directory: str | Path, iteration: int) -> Path:
        if iteration not in self._snapshots:
            raise CheckpointError(f"iteration {iteration} not completed yet or too old; last completed: "
                                  f"{self.last_completed}, kept: {list(self._snapshots)}")
        return save_checkpoint(Path(directory) / component_file(self.component, iteration),
                               self._snapshots[iteration])

    def save(self, request: SaveCheckpoint.Request, response: SaveCheckpoint.Response,
             run_dir: str | Path, run_id: str = "") -> SaveCheckpoint.Response:
        """Serve a SaveCheckpoint request of run ``run_id``: only into ``run_dir`` or a folder inside it (empty: its
        checkpoints/)."""
        if request.run_id != run_id:
            response.success = False
            response.message = f"refused: a request of run {request.run_id!r}, this is run {run_id!r}"
            return response
        directory = Path(request.directory or checkpoint_dir(run_dir)).resolve()
        if not directory.is_relative_to(Path(run_dir).resolve()):
            response.success = False
            response.message = f"refused: {request.directory} is outside the run directory {run_dir}"
            return response
        try:
            response.path = str(self.write(directory, request.iteration))
            response.success, response.message = True, f"{self.component} state of iteration {request.iteration}"
        except (CheckpointError, OSError) as error:
            response.success, response.message = False, str(error)
        return response

    def serve(self, request: SaveCheckpoint.Request, response: SaveCheckpoint.Response, *, signing: RunSigning,
              channel: str, diagnostics: NodeDiagnostics, run_dir: str | Path,
              run_id: str = "") -> SaveCheckpoint.Response:
        """A node's SaveCheckpoint service: refuse a call not signed with the run's key, else ``save``; a refusal
        is counted on the node's diagnostics; the response is signed."""
        if not signing.accept(request, channel, to_me=True):
            response.success, response.message = False, "refused: the call is not signed with the run's key"
            return signing.answer(response, request)
        response = self.save(request, response, run_dir, run_id)
        if not response.success and response.message.startswith("refused"):
            diagnostics.reject("save_checkpoint", response.message)
        return signing.answer(response, request)

    def save_all(self, run_dir: str | Path) -> list[Path]:
        """On shutdown: write every kept snapshot, so the trainer can tie the newest common iteration. Raises
        ``CheckpointError`` (one line: the path and the OS's reason) after trying every one."""
        written, failures = [], []
        for iteration in self._snapshots:
            done = checkpoint_dir(run_dir) / component_file(self.component, iteration)
            if self._run_dir is not None and done.is_file():  # written when the iteration completed
                written.append(done)
                continue
            try:
                written.append(self.write(checkpoint_dir(run_dir), iteration))
            except CheckpointError as error:
                failures.append(str(error))
        if failures:
            raise CheckpointError(failures[-1])
        return written
