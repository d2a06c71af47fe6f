"""Ctrl-C on adr-train finishes the iteration, writes a checkpoint and exits 0; --resume continues from it."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

TINY = ["--agent.hidden_sizes", "[16, 16]", "--agent.batch_size", "16", "--agent.learning_starts", "50",
        "--svpg.num_particles", "2", "--max_episode_steps", "50", "--discriminator.hidden_size", "16",
        "--tensorboard", "false", "--progress", "false", "--checkpoint_every", "1000", "--torch_threads", "1"]


def test_ctrl_c_checkpoints_the_last_iteration(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "adr_core.training.cli", "--out", str(tmp_path), "--total_agent_steps",
               "1000000", *TINY]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    metrics = tmp_path / "metrics.csv"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not metrics.exists() or len(metrics.read_text().splitlines()) < 3):
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert "with a checkpoint" in err
    rows = len(metrics.read_text().splitlines()) - 1
    payload = torch.load(tmp_path / "checkpoints" / "latest.pt", weights_only=True)
    assert payload["iteration"] == rows >= 2  # every logged iteration is in the checkpoint

    resumed = subprocess.run([sys.executable, "-m", "adr_core.training.cli", "--out", str(tmp_path), "--resume",
                              "--max-iterations", "1", *TINY], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert len(metrics.read_text().splitlines()) - 1 == rows + 1
