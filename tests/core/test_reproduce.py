"""experiments/reproduce.py on a tiny grid (2 methods x 1 seed, tiny networks, 200 agent steps): it runs the grid in
parallel, resumes a run stopped after its first checkpoint, restarts one killed before any checkpoint, builds the
report and the claims, and a further invocation does nothing."""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from experiments import reproduce

pytestmark = pytest.mark.skipif(
    shutil.which("adr-train") is None, reason="adr-train not on PATH (source scripts/env.sh)"
)

TINY = ["agent.hidden_sizes=[16,16]", "agent.batch_size=16", "agent.learning_starts=50", "agent.buffer_capacity=2000",
        "svpg.num_particles=2", "discriminator.hidden_size=16", "discriminator.steps_per_transition=0.05",
        "max_episode_steps=40", "evaluate_every=0", "checkpoint_every=1", "keep_checkpoint_every=0",
        "tensorboard=false"]
REPORT = ["--eval-episodes", "1", "--eval-seeds", "0", "--points", "3", "--report-arg=--no-checkpoint-curves",
          "--report-arg=--formats", "--report-arg=png", "--report-arg=--workers", "--report-arg=1"]


def argv(out: Path, *extra: str) -> list[str]:
    return ["--methods", "adr", "udr", "--seeds", "0", "--budget", "200", "--parallel", "2", "--out", str(out),
            *(f"--set={item}" for item in TINY), *REPORT, *extra]


def iterations(run: Path) -> list[int]:
    with (run / "metrics.csv").open(newline="") as handle:
        return [int(row["iteration"]) for row in csv.DictReader(handle)]


def attempts(run: Path) -> list[str]:
    return [json.loads(line)["state"] for line in (run / "attempts.jsonl").read_text().splitlines()]


def test_grid_runs_resumes_reports_and_then_does_nothing(tmp_path, capsys):
    out = tmp_path / "repro"
    adr, udr = out / "runs" / "lunarlander_adr_s0", out / "runs" / "lunarlander_udr_s0"

    # 1. every run stops after one iteration (as if killed after its first checkpoint): no done markers, no report
    assert reproduce.main(argv(out, "--max-iterations", "1")) == 0
    for run in (adr, udr):
        assert (run / "checkpoints" / "latest.pt").is_file() and not (run / "DONE.json").exists()
        assert iterations(run) == [0]
    assert not (out / "report").exists()
    assert "not finished" in capsys.readouterr().out

    # 2. UDR "killed before its first checkpoint": only a partial directory is left; it must start over
    shutil.rmtree(udr / "checkpoints")
    assert reproduce.main(argv(out)) == 0
    printed = capsys.readouterr().out
    assert "[lunarlander_adr_s0] resuming" in printed and "[lunarlander_udr_s0] starting" in printed
    assert attempts(adr) == ["new", "resume"] and attempts(udr) == ["new"]  # the partial directory was cleared
    for run in (adr, udr):
        marker = json.loads((run / "DONE.json").read_text())
        assert marker["budget"] == 200 and marker["agent_steps"] >= 200
        steps = iterations(run)
        assert steps == list(range(len(steps))) and len(steps) >= 3  # resumed, not restarted: no gap, no repeat
    assert (out / "report" / "summary.md").is_file() and (out / "report" / "lunarlander_scores.csv").is_file()
    claims = (out / "claims.md").read_text()
    assert "ADR beats UDR on the hard range | **inconclusive**" in claims and "fewer than 2 seeds" in claims
    assert "## Per setting" in claims and "| ADR | 0 |" in claims and "| UDR | 0 |" in claims  # every seed listed
    assert (out / "report" / "figures" / "lunarlander_adr_failures_vs_proposals.png").is_file()
    assert json.loads((out / "claims.json").read_text())[0]["claims"][0]["verdict"] == "inconclusive"

    # 3. nothing left to do: no trainer started, report and claims untouched
    watched = [adr / "DONE.json", udr / "DONE.json", out / "report" / "summary.md", out / "claims.md",
               adr / "checkpoints" / "latest.pt"]
    before = [p.stat().st_mtime_ns for p in watched]
    assert reproduce.main(argv(out)) == 0
    printed = capsys.readouterr().out
    assert "starting" not in printed and "resuming" not in printed and "report: up to date" in printed
    assert [p.stat().st_mtime_ns for p in watched] == before
    assert attempts(adr) == ["new", "resume"] and attempts(udr) == ["new"]


def test_dry_run_prints_each_command(tmp_path, capsys):
    assert reproduce.main(["--methods", "oracle", "--seeds", "3", "--budget", "500", "--out", str(tmp_path),
                           "--parallel", "1", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "lunarlander_oracle_s3" in printed and "--sampler fixed" in printed and "--fixed_range hard" in printed
    assert "--torch_threads" in printed and not (tmp_path / "runs").exists()
