"""Checkpoints: atomic write, weights_only load, clear errors for corrupt or mismatched files, bootstrapping."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_configs import tiny_config

from adr_core.base.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from adr_core.training.trainer import Trainer


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    trainer = Trainer(tiny_config(), out)
    trainer.run(max_iterations=2)
    return out, out / "checkpoints" / "latest.pt"


def test_atomic_write_leaves_no_temporary_files_and_round_trips(tmp_path):
    path = save_checkpoint(tmp_path / "c.pt", {"x": torch.arange(3), "n": 5, "nested": {"s": "a", "t": (1, 2)}})
    assert [p.name for p in tmp_path.iterdir()] == ["c.pt"]
    payload = load_checkpoint(path)
    assert payload["n"] == 5 and payload["nested"]["s"] == "a" and torch.equal(payload["x"], torch.arange(3))


def test_a_full_trainer_checkpoint_loads_with_weights_only(saved_run):
    _, path = saved_run
    payload = torch.load(path, weights_only=True)
    assert payload["iteration"] == 2 and payload["sampler_kind"] == "adr"
    assert {"agent", "sampler", "discriminator", "rng", "config"} <= set(payload)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "not_a_dict"])
def test_corrupt_checkpoints_raise_a_clear_error(saved_run, tmp_path, damage):
    _, good = saved_run
    bad = tmp_path / "bad.pt"
    data = good.read_bytes()
    if damage == "garbage":
        bad.write_bytes(b"this is not a checkpoint" * 10)
    elif damage == "truncated":
        bad.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        bad.write_bytes(b"")
    else:
        torch.save([1, 2, 3], bad)
    with pytest.raises(CheckpointError, match="bad.pt"):
        load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(tmp_path / "missing.pt")


def test_a_file_holding_objects_is_refused_without_torchs_advice_to_load_it_unsafely(tmp_path):
    path = tmp_path / "objects.pt"
    torch.save({"format": 1, "where": Path("/")}, path)  # a pickled object: weights_only refuses it
    with pytest.raises(CheckpointError) as refused:
        load_checkpoint(path)
    message = str(refused.value)
    assert "holds more than tensors and plain data" in message
    assert "weights_only=False" not in message and "Re-running" not in message


def test_resuming_with_a_different_config_names_the_differing_keys(saved_run):
    out, _ = saved_run
    with pytest.raises(CheckpointError, match=r"agent\.batch_size"):
        Trainer(tiny_config(agent={"batch_size": 64}), out, resume=True)
    Trainer(tiny_config(total_agent_steps=99_999, progress=True), out, resume=True)  # runtime fields may change


def test_a_checkpoint_of_another_environment_is_rejected(saved_run, tmp_path):
    _, path = saved_run
    trainer = Trainer(tiny_config(), None)
    payload = load_checkpoint(path)
    payload.pop("format")
    payload["env_id"], payload["obs_dim"] = "adr/Pusher3DOF-v0", 11
    save_checkpoint(tmp_path / "other.pt", payload)
    with pytest.raises(CheckpointError, match="Pusher3DOF"):
        trainer.load_checkpoint(tmp_path / "other.pt")


def test_bootstrap_reuses_sampler_and_discriminator_with_a_fresh_agent(saved_run):
    out, path = saved_run
    trained = Trainer(tiny_config(), out, resume=True)
    fresh = Trainer(tiny_config(seed=123), None, bootstrap_from=path)
    assert fresh.iteration == 0 and fresh.agent.transitions_seen == 0
    np.testing.assert_array_equal(fresh.sampler.propose(), trained.sampler.propose())
    for a, b in zip(fresh.discriminator.network.parameters(), trained.discriminator.network.parameters()):
        assert torch.equal(a, b)
    with pytest.raises(CheckpointError, match="'adr' sampler"):
        Trainer(tiny_config(sampler="udr"), None, bootstrap_from=path)


def test_a_checkpoint_that_cannot_be_written_is_one_line_and_the_previous_one_stays(tmp_path, monkeypatch):
    from adr_core.base import checkpoint as module

    path = tmp_path / "latest.pt"
    save_checkpoint(path, {"n": 1})
    monkeypatch.setattr("shutil.disk_usage", lambda folder: type("Usage", (), {"free": 0})())  # a full disk

    def full_disk(*args, **kwargs):
        raise RuntimeError("[enforce fail at inline_container.cc:664] . PytorchStreamWriter failed writing file "
                           "data/0: file write failed\nmore lines")

    monkeypatch.setattr(module.torch, "save", full_disk)
    with pytest.raises(CheckpointError) as refused:
        save_checkpoint(path, {"n": 2})
    assert str(refused.value).startswith(f"cannot write checkpoint {path}: no space left on the device of {tmp_path}")
    assert "\n" not in str(refused.value)
    monkeypatch.undo()
    assert load_checkpoint(path)["n"] == 1 and sorted(p.name for p in tmp_path.iterdir()) == ["latest.pt"]
    a_file = tmp_path / "notes.txt"
    a_file.write_text("kept")
    with pytest.raises(CheckpointError, match=f"cannot write checkpoint {a_file / 'x.pt'}: "):
        save_checkpoint(a_file / "x.pt", {"n": 3})


def test_the_checkpoint_schedule_writes_after_the_first_iteration_every_n_and_by_time():
    from adr_core.base.checkpoint import CheckpointSchedule

    now = [0.0]
    schedule = CheckpointSchedule(every=10, every_s=60.0, clock=lambda: now[0])
    assert schedule.due(1)  # the first iteration of this process: a run is resumable from then on
    schedule.written()
    now[0] = 30.0
    assert not schedule.due(2)
    assert schedule.due(10)  # every 10th
    now[0] = 61.0
    assert schedule.due(3)  # a minute since the last one
    schedule.written()
    assert not schedule.due(4)
    untimed = CheckpointSchedule(every=10, every_s=0.0, clock=lambda: now[0])
    untimed.written()
    now[0] = 1e9
    assert not untimed.due(4) and untimed.due(20)


@pytest.mark.parametrize("name", ["../../outside.pt", "/etc/passwd", "sub/sampler-000001.pt", "..", ""])
def test_a_graph_manifest_naming_a_file_outside_its_folder_is_refused(tmp_path, name):
    """Issue 30: graph resume reads only names inside the run's checkpoints/ (a forged latest.json cannot point the
    nodes at another file)."""
    from adr_core.base.checkpoint import save_checkpoint
    from adr_core.run_dir import checkpoint_dir, load_component

    outside = tmp_path / "outside.pt"
    save_checkpoint(outside, {"iteration": 1})
    checkpoint_dir(tmp_path / "run").mkdir(parents=True)
    (checkpoint_dir(tmp_path / "run") / "latest.json").write_text(
        json.dumps({"iteration": 1, "files": {"sampler": name}}))
    with pytest.raises(CheckpointError, match="expected a file name inside"):
        load_component(tmp_path / "run", "sampler")
