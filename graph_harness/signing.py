"""Keys and signing for tests that talk to the graph's nodes directly (adr_ros.signing): every node of a run checks
that what it receives is signed with the run's key, so a test's own messages and calls must be signed too; a call or
goal for one node is signed for it (``sign(msg, to=SAMPLER)``)."""
from __future__ import annotations

from pathlib import Path

from adr_ros.signing import KEY_FILE, RunSigning, create_key_file

SAMPLER = "/adr_sampler"  # the node names requests are signed for (a node started on its own, default name)
DISCRIMINATOR = "/adr_discriminator"


def run_key(directory: Path) -> Path:
    """The run's key in ``directory`` (created, mode 0600)."""
    return create_key_file(Path(directory) / KEY_FILE)


def key_parameter(key: Path) -> list[str]:
    """``--ros-args`` parameter arguments that give a node the key."""
    return ["-p", f"key_file:={key}"]


def signer(key: Path, run_id: str = "", sender: str = "/test_probe") -> RunSigning:
    """Signs a test's messages for run ``run_id`` (a node started on its own has the empty run id)."""
    return RunSigning.from_file(key, run_id, sender, lambda _line: None)
