"""Checkpoint files: ``torch.save`` of a plain dict, written atomically, read with ``weights_only=True``.

A checkpoint holds everything a run needs to continue bit-for-bit: agent (networks, optimizers, replay,
generator), sampler (particles, optimizers, positions, generator), discriminator (network, optimizer,
generator), the global RNG states, counters and the run's config. See docs/algorithm.md for the layout.
"""
from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

FORMAT = "adr_core.checkpoint/1"


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or does not belong to this run; the message says which."""


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> Path:
    """Write ``payload`` (plus the format tag) to ``path`` atomically: temp file in the same folder, fsync, rename.
    A file that cannot be written (disk full, no permission, a file where a folder should be) raises
    ``CheckpointError`` naming the path and the OS's reason; the previous checkpoint at ``path`` stays intact."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise CheckpointError(f"cannot write checkpoint {path}: {error.strerror or error}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save({"format": FORMAT, **payload}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except (OSError, RuntimeError) as error:  # torch's writer reports a full disk as a RuntimeError
        Path(tmp_name).unlink(missing_ok=True)
        raise CheckpointError(f"cannot write checkpoint {path}: {_write_failure(error, path.parent)}") from None
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return path


def _write_failure(error: BaseException, folder: Path) -> str:
    """The OS's reason in one line (torch's RuntimeError hides ENOSPC behind 'file write failed')."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    try:
        import shutil

        if shutil.disk_usage(folder).free < 64 * 1024 * 1024:
            return f"no space left on the device of {folder} ({str(error).splitlines()[0]})"
    except OSError:
        pass
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def load_checkpoint(path: str | Path, map_location: torch.device | str = "cpu") -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # noqa: BLE001 - the unpickler raises many kinds (IndexError, EOFError, ...) on bad bytes
        reason = str(exc).splitlines()[0] if str(exc) else ""
        if reason.startswith("Weights only load failed"):  # torch's advice to retry unsafely is not for us
            reason = "it holds more than tensors and plain data, and is read with weights_only=True only"
        raise CheckpointError(f"{path} is corrupt or not an adr_core checkpoint ({type(exc).__name__}: "
                              f"{reason})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        raise CheckpointError(f"{path} is not an adr_core checkpoint of format {FORMAT!r} (found {found!r})")
    return payload


def require_keys(payload: dict[str, Any], keys: tuple[str, ...], path: str | Path) -> None:
    missing = [k for k in keys if k not in payload]
    if missing:
        raise CheckpointError(f"{path} lacks {missing}; it was not written by this trainer")


# ------------------------------------------------------------------ global RNG states (plain tensors/ints)
def global_rng_state() -> dict[str, Any]:
    # legacy=True (the default): the MT19937 state tuple, never the dict
    kind, keys, pos, has_gauss, cached = cast("tuple[str, np.ndarray, int, int, float]", np.random.get_state())
    return {"torch": torch.get_rng_state(), "numpy_keys": torch.from_numpy(keys.astype(np.int64)),
            "numpy_pos": int(pos), "numpy_has_gauss": int(has_gauss), "numpy_cached": float(cached),
            "numpy_kind": str(kind)}


def set_global_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state((state["numpy_kind"], state["numpy_keys"].numpy().astype(np.uint32), state["numpy_pos"],
                         state["numpy_has_gauss"], state["numpy_cached"]))


class CheckpointSchedule:
    """When a run writes its checkpoint: after every ``every``-th completed iteration, after the first iteration
    this process completes, and when ``every_s`` seconds have passed since the last one (0: never by time). The
    in-process trainer and the graph's trainer node share it, so a killed trainer loses at most about ``every_s``
    seconds of work and a run is resumable from its first iteration on."""

    def __init__(self, every: int, every_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.every, self.every_s, self._clock = int(every), float(every_s), clock
        self._last: float | None = None

    def due(self, completed: int) -> bool:
        """``completed``: iterations completed so far in the run (the checkpoint would be of the last one)."""
        if completed % self.every == 0 or self._last is None:
            return True
        return self.every_s > 0 and self._clock() - self._last >= self.every_s

    def written(self) -> None:
        self._last = self._clock()
