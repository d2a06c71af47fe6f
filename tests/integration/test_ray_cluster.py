"""The claims grid on a real multi-node Ray cluster on one machine (Ray's own cluster utilities: a head and two
worker nodes, each its own raylet and processes): ``experiments.reproduce --backend ray --address ...`` run as a
user runs it gives every run bit for bit what the local pool gives, also when a worker node dies mid-grid (its run
is retried on the other node and resumes from its last checkpoint); an unreachable address is one line and exit 2."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from experiments import reproduce
from experiments.runner import ROOT, root_env

ray = pytest.importorskip("ray", reason="Ray is not installed here (pip install 'src/adr_core[cluster]'); CI has it")
from ray.cluster_utils import Cluster  # noqa: E402

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("adr-train") is None, reason="adr-train not on PATH")]

TINY = ["agent.hidden_sizes=[16,16]", "agent.batch_size=16", "agent.learning_starts=50", "agent.buffer_capacity=4000",
        "svpg.num_particles=2", "discriminator.hidden_size=16", "discriminator.steps_per_transition=0.05",
        "max_episode_steps=40", "evaluate_every=0", "checkpoint_every=1", "keep_checkpoint_every=0",
        "tensorboard=false"]
METHODS, SEEDS, BUDGET = ("adr", "udr"), ("0", "1"), "2400"


def argv(out: Path, *extra: str) -> list[str]:
    return ["--methods", *METHODS, "--seeds", *SEEDS, "--budget", BUDGET, "--out", str(out), "--no-report",
            *(f"--set={item}" for item in TINY), *extra]


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return [{k: v for k, v in row.items() if "time" not in k} for row in csv.DictReader(handle)]


def runs(out: Path) -> list[Path]:
    return sorted((out / "runs").iterdir())


def in_flight_with_checkpoint(out: Path) -> list[Path]:
    return [r for r in (out / "runs").glob("*")
            if (r / "checkpoints" / "latest.pt").exists() and not (r / "DONE.json").exists()]


def test_a_grid_on_a_ray_cluster_equals_the_local_grid_even_when_a_worker_node_dies(tmp_path: Path) -> None:
    local = tmp_path / "local"
    assert reproduce.main(argv(local, "--parallel", "2")) == 0

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})  # the head schedules, workers train
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    out = tmp_path / "ray"
    try:
        driver = subprocess.Popen(
            [sys.executable, "-m", "experiments.reproduce", *argv(out, "--backend", "ray", "--address",
                                                                  cluster.address)],
            cwd=ROOT, env=root_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # a worker node dies while both nodes' runs have checkpointed and neither has finished: its run is cut
        # mid-way, and the retry must resume it
        deadline = time.monotonic() + 240
        while len(in_flight_with_checkpoint(out)) < 2:
            assert driver.poll() is None and time.monotonic() < deadline, driver.communicate()[0]
            time.sleep(0.1)
        cluster.remove_node(workers[0], allow_graceful=False)
        output, _ = driver.communicate(timeout=600)
    finally:
        cluster.shutdown()
    assert driver.returncode == 0, output
    assert [r.name for r in runs(out)] == [r.name for r in runs(local)]
    for run, twin in zip(runs(out), runs(local)):
        assert json.loads((run / "DONE.json").read_text())["agent_steps"] == int(BUDGET)
        assert rows(run / "metrics.csv") == rows(twin / "metrics.csv"), run.name
        assert rows(run / "sampled_parameters.csv") == rows(twin / "sampled_parameters.csv"), run.name
    # the run the dead node held was resumed from its checkpoint on the other node (nothing else resumes)
    states = [json.loads(line)["state"] for r in runs(out) for line in (r / "attempts.jsonl").read_text().splitlines()]
    assert "resume" in states, output


def test_an_unreachable_address_is_one_line_and_nothing_runs(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "experiments.reproduce", *argv(tmp_path / "out", "--backend", "ray", "--address",
                                                              "127.0.0.1:9")],
        cwd=ROOT, env=root_env(), capture_output=True, text=True, timeout=180)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot join the Ray cluster at 127.0.0.1:9" in done.stderr
    assert "Traceback" not in done.stderr
    assert not any((tmp_path / "out" / "runs").glob("*/metrics.csv"))
