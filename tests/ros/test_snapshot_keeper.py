"""A node's snapshots are on disk when its iteration completes; old unrequested ones are pruned, checkpointed ones
and the one latest.json names are never removed (issue 28: a killed node leaves its last complete iteration)."""
from __future__ import annotations

from pathlib import Path

import torch

from adr_interfaces.srv import SaveCheckpoint
from adr_ros.checkpoints import SnapshotKeeper, checkpoint_dir, load_component, write_manifest
from adr_ros.signing import RunSigning


def files(run_dir: Path) -> list[str]:
    return sorted(p.name for p in checkpoint_dir(run_dir).glob("sampler-*.pt"))


def test_each_completed_iteration_is_written_at_once_and_old_ones_are_pruned(tmp_path: Path) -> None:
    stale = checkpoint_dir(tmp_path) / "sampler-000000.pt"  # left by a run that died
    keeper = SnapshotKeeper("sampler", run_dir=tmp_path, checkpoint_every=3)
    keeper.keep(1, {"iteration": 1, "w": torch.ones(2)})
    assert files(tmp_path) == ["sampler-000001.pt"]  # before anyone asked for it
    stale.write_bytes(b"")
    response = keeper.save(SaveCheckpoint.Request(run_id="", iteration=1, directory=""), SaveCheckpoint.Response(),
                           tmp_path)
    assert response.success
    write_manifest(tmp_path, 1, {"sampler": "sampler-000001.pt"})
    for k in range(2, 7):
        keeper.keep(k, {"iteration": k, "w": torch.full((2,), float(k))})
    # 0 (stale) and 3 pruned; 1: latest.json names it; 2 and 5: periodic checkpoints (every 3); the newest three stay
    assert files(tmp_path) == ["sampler-000001.pt", "sampler-000002.pt", "sampler-000004.pt", "sampler-000005.pt",
                               "sampler-000006.pt"]
    assert torch.equal(load_component(tmp_path, "sampler")["w"], torch.ones(2))


def test_without_a_run_dir_nothing_is_written(tmp_path: Path) -> None:
    keeper = SnapshotKeeper("sampler")
    keeper.keep(0, {"iteration": 0})
    assert not checkpoint_dir(tmp_path).exists()


class Rejections:
    """The part of a node's diagnostics ``serve`` uses: the refusals it counts."""

    def __init__(self) -> None:
        self.reasons: list[tuple[str, str]] = []

    def reject(self, reason: str, detail: str) -> None:
        self.reasons.append((reason, detail))


def test_the_service_refuses_unsigned_calls_and_other_runs_and_signs_its_answer(tmp_path: Path) -> None:
    key = b"k" * 32
    node = RunSigning(key, "run-a", "sampler", log=lambda line: None)
    caller = RunSigning(key, "run-a", "trainer", log=lambda line: None)
    stranger = RunSigning(b"x" * 32, "run-a", "trainer", log=lambda line: None)
    keeper = SnapshotKeeper("sampler", run_dir=tmp_path)
    keeper.keep(4, {"iteration": 4, "w": torch.ones(2)})
    diagnostics = Rejections()

    def call(signer: RunSigning, run_id: str) -> SaveCheckpoint.Response:
        request = signer.sign(SaveCheckpoint.Request(run_id=run_id, iteration=4, directory=str(tmp_path / "k")),
                              to=node.name)  # a request is signed for its server
        response = keeper.serve(request, SaveCheckpoint.Response(), signing=node, channel="/adr/save",
                                diagnostics=diagnostics, run_dir=tmp_path, run_id="run-a")  # type: ignore[arg-type]
        assert caller.accept(response, "/adr/save/answer", to_me=True)  # every answer signed for its caller
        return response

    unsigned = call(stranger, "run-a")
    assert not unsigned.success and "not signed" in unsigned.message and not (tmp_path / "k").exists()
    other_run = call(caller, "run-b")
    assert not other_run.success and diagnostics.reasons == [("save_checkpoint", other_run.message)]
    saved = call(caller, "run-a")
    assert saved.success and Path(saved.path) == tmp_path / "k" / "sampler-000004.pt"
    assert torch.equal(torch.load(saved.path, weights_only=True)["w"], torch.ones(2))
