"""The training graph as real processes over Fast DDS: Algorithm 1 in sync mode equals the in-process trainer,
and faults (a simulator instance killed mid-iteration, Ctrl-C and resume) lose nothing."""
from __future__ import annotations

import contextlib
import csv
import json
import os
import signal
import time
from pathlib import Path

import pytest

from graph_harness.graph_runs import finish, metric_rows, read_until, run_in_process, sample_rows, start_graph

BUDGET = 1000


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The in-process trainer on the same configuration (LunarLander, ADR, seed 0)."""
    out = tmp_path_factory.mktemp("in_process")
    run_in_process(out, BUDGET)
    return out


def resume_and_compare(run_dir: Path, ros_env: dict[str, str], reference_run: Path, iteration: int,
                       overrides: dict | None = None) -> None:
    """Relaunch with resume:=true: it continues after ``iteration`` and ends with the uninterrupted run's rows."""
    second = start_graph(run_dir, ros_env, BUDGET, "instances:=1", "resume:=true", overrides=overrides)
    output = finish(second, [])
    assert second.returncode == 0, output
    assert f"resumed after iteration {iteration}" in output
    assert metric_rows(run_dir) == metric_rows(reference_run)
    assert sample_rows(run_dir) == sample_rows(reference_run)


def test_sync_graph_reproduces_the_in_process_trainer(reference_run: Path, ros_env: dict[str, str],
                                                      tmp_path: Path) -> None:
    graph = start_graph(tmp_path, ros_env, BUDGET, "instances:=2")
    output = finish(graph, [])
    assert graph.returncode == 0, output
    assert metric_rows(tmp_path) == metric_rows(reference_run)  # same losses, returns and rewards, to the bit
    assert sample_rows(tmp_path) == sample_rows(reference_run)  # same proposals
    manifest = json.loads((tmp_path / "checkpoints" / "latest.json").read_text())
    assert set(manifest["files"]) == {"agent", "sampler", "discriminator"}
    assert manifest["iteration"] == len(metric_rows(tmp_path)) - 1
    assert "Traceback" not in output


def test_killed_instance_loses_nothing_and_rejoins(reference_run: Path, ros_env: dict[str, str],
                                                   tmp_path: Path) -> None:
    graph = start_graph(tmp_path, ros_env, BUDGET, "instances:=2", "rollout_timeout:=3")
    seen: list[str] = []
    pid = int(read_until(graph, r"started adr_sim_0 \(pid (\d+)\)", 60, seen).group(1))
    read_until(graph, r"adr_trainer\]: iteration 1:", 120, seen)
    os.kill(pid, signal.SIGKILL)  # mid-run, most likely mid-rollout
    output = finish(graph, seen)
    assert graph.returncode == 0, output
    assert output.count("started adr_sim_0") == 2  # respawned, and the graph went on
    assert metric_rows(tmp_path) == metric_rows(reference_run)
    assert sample_rows(tmp_path) == sample_rows(reference_run)


def test_ctrl_c_checkpoints_and_resume_continues_the_same_run(reference_run: Path, ros_env: dict[str, str],
                                                              tmp_path: Path) -> None:
    first = start_graph(tmp_path, ros_env, BUDGET, "instances:=1")
    seen: list[str] = []
    read_until(first, r"adr_trainer\]: iteration 3:", 180, seen)
    first.send_signal(signal.SIGINT)
    output = finish(first, seen, timeout=60)
    assert first.returncode == 0, output
    assert "[adr_trainer] stop requested (Ctrl-C, or the launcher stopping the graph after a node ended): " \
           "stopping after the current learning block" in output  # said at once
    manifest = json.loads((tmp_path / "checkpoints" / "latest.json").read_text())
    assert manifest["iteration"] >= 3
    assert "Traceback" not in output

    second = start_graph(tmp_path, ros_env, BUDGET, "instances:=1", "resume:=true")
    output = finish(second, [])
    assert second.returncode == 0, output
    assert f"resumed after iteration {manifest['iteration']}" in output
    assert metric_rows(tmp_path) == metric_rows(reference_run)
    assert sample_rows(tmp_path) == sample_rows(reference_run)


@pytest.mark.parametrize(("node", "mid_iteration"), [("adr_sampler", False), ("adr_discriminator", True)])
def test_a_killed_helper_node_costs_at_most_the_iteration_in_flight(node: str, mid_iteration: bool,
                                                                    reference_run: Path, ros_env: dict[str, str],
                                                                    tmp_path: Path) -> None:
    """Issue 28: SIGKILL of the sampler or the discriminator before the first periodic checkpoint: the launch exits
    128 + 9, the trainer's final checkpoint names the dead node's state of the last complete iteration (written when
    that iteration completed), and resume:=true ends with the uninterrupted run's metrics. ``mid_iteration``: the
    discriminator is frozen first, so the trainer has learned from iteration 3 while its rewards never come: the
    trainer rolls the agent back to iteration 2 and resume redoes 3."""
    never = {"checkpoint_every": 1000}  # no periodic checkpoint in this run
    first = start_graph(tmp_path, ros_env, BUDGET, "instances:=1", overrides=never)
    seen: list[str] = []
    pid = int(read_until(first, rf"started {node} \(pid (\d+)\)", 60, seen).group(1))
    read_until(first, r"adr_trainer\]: iteration 2:", 180, seen)
    if mid_iteration:
        os.kill(pid, signal.SIGSTOP)
        time.sleep(8.0)  # iteration 3 is rolled out and learned from; the trainer waits for its rewards
    os.kill(pid, signal.SIGKILL)
    output = finish(first, seen, timeout=120)
    assert first.returncode == 128 + signal.SIGKILL, output
    assert "stopped before the end" in output and "resume:=true continues after it" in output, output
    manifest = json.loads((tmp_path / "checkpoints" / "latest.json").read_text())
    assert manifest["iteration"] >= 2 and set(manifest["files"]) == {"agent", "sampler", "discriminator"}
    if mid_iteration:
        assert manifest["iteration"] == 2, output
        assert "iteration 3 did not complete (the discriminator's rewards never came)" in output, output
    assert "Traceback" not in output

    resume_and_compare(tmp_path, ros_env, reference_run, manifest["iteration"], never)
    # the completion-time files do not pile up (the dead run's included): the newest three and the one latest.json
    # names (no periodic checkpoint in these runs)
    for component in ("sampler", "discriminator"):
        assert len(list((tmp_path / "checkpoints").glob(f"{component}-*.pt"))) <= 4


def test_a_killed_trainer_resumes_from_its_last_checkpoint_even_before_the_first_periodic_one(
        reference_run: Path, ros_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 28: SIGKILL of the trainer (whose agent state lives only in it) before its first periodic checkpoint:
    the trainer checkpoints after its first iteration (and every checkpoint_every_s seconds), so the launch exits
    137, the helpers stop on their own, and resume:=true ends with the uninterrupted run's metrics."""
    never = {"checkpoint_every": 1000}
    first = start_graph(tmp_path, ros_env, BUDGET, "instances:=1", overrides=never)
    seen: list[str] = []
    pid = int(read_until(first, r"started adr_trainer \(pid (\d+)\)", 60, seen).group(1))
    read_until(first, r"adr_trainer\]: iteration 2:", 180, seen)
    os.kill(pid, signal.SIGKILL)
    output = finish(first, seen, timeout=120)
    assert first.returncode == 128 + signal.SIGKILL, output
    manifest = json.loads((tmp_path / "checkpoints" / "latest.json").read_text())
    assert manifest["iteration"] in (0, 1, 2), output  # the first iteration's checkpoint, or a later one by time

    resume_and_compare(tmp_path, ros_env, reference_run, manifest["iteration"], never)


def test_ergo_reacher_graph_runs_adr_iterations(ros_env: dict[str, str], tmp_path: Path) -> None:
    graph = start_graph(tmp_path, ros_env, 600, "env:=adr/ErgoReacher-v0", "instances:=2")
    output = finish(graph, [])
    assert graph.returncode == 0, output
    rows = metric_rows(tmp_path)
    assert len(rows) >= 3  # the sampler proposed again after each iteration's rewards reached it
    assert all(row["sampler_reward_mean"] for row in rows)  # discriminator rewards of every iteration
    assert int(rows[-1]["agent_updates"]) > 0  # the weights version advanced
    manifest = json.loads((tmp_path / "checkpoints" / "latest.json").read_text())
    assert manifest["iteration"] == len(rows) - 1
    assert set(sample_rows(tmp_path)[0]) >= {"iteration", "slot", "u_m2_gain", "m2_gain"}


def test_sync_graph_learning_from_reference_rollouts_and_stopping_early_reproduces_the_in_process_trainer(
        ros_env: dict[str, str], tmp_path: Path) -> None:
    """The fast preset's agent and two run options: SAC, learn_from_reference (the trainer node stores the reference
    trajectories it receives, as adr-train does) and the early stop (a rule any policy meets: both runs end at the
    first check, long before the budget); and observation normalization (fitted by the trainer node at its first
    gradient step; the simulator instances run the actor with the statistics its weights carry)."""
    stop = {"early_stop_every_steps": BUDGET // 4, "early_stop_episodes": 3, "early_stop_solved_fraction": 0.0,
            "early_stop_return_mean": -1.0e9}
    in_process = tmp_path / "in_process"
    trainer = run_in_process(in_process, BUDGET * 4, learn_from_reference=True,
                             **{"agent.algorithm": "sac", "agent.normalize_observations": True}, **stop)
    graph_dir = tmp_path / "graph"
    graph = start_graph(graph_dir, ros_env, BUDGET * 4, "instances:=1",
                        overrides={"learn_from_reference": "true", "agent.algorithm": "sac",
                                   "agent.normalize_observations": "true", **stop})
    output = finish(graph, [])
    assert graph.returncode == 0, output
    assert "stopping early" in output
    assert metric_rows(graph_dir) == metric_rows(in_process)
    assert float(metric_rows(in_process)[-1]["entropy_alpha"]) > 0  # SAC's statistics, the same in both
    assert float(trainer.agent.actor.obs_scale.max()) > 1.0  # the normalization was fitted (identity before)
    assert trainer.solved and int(metric_rows(in_process)[-1]["agent_steps"]) < BUDGET  # ended by the rule
    assert int(metric_rows(in_process)[-1]["agent_steps"]) == trainer.agent.replay.size  # reference steps stored
    checks = [[{k: r[k] for k in ("agent_steps", "episodes", "return_mean", "met")}
               for r in csv.DictReader((run / "early_stop.csv").read_text().splitlines())]
              for run in (graph_dir, in_process)]
    assert checks[0] == checks[1] and [c["met"] for c in checks[1]] == ["1"]


def test_ctrl_c_stops_the_trainer_while_a_node_it_waits_on_hangs(ros_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 18: with the sampler frozen (SIGSTOP), the trainer waits for proposals; Ctrl-C must end that wait at
    once (it used to wait out the 60-s service timeout until the launcher killed it), and the launcher must not
    wait out the sampler's 300-s shutdown grace once the trainer it serves has exited."""
    graph = start_graph(tmp_path, ros_env, 100_000, "instances:=1")
    seen: list[str] = []
    sampler = int(read_until(graph, r"started adr_sampler \(pid (\d+)\)", 60, seen).group(1))
    read_until(graph, r"adr_trainer\]: iteration 1:", 180, seen)
    os.kill(sampler, signal.SIGSTOP)
    try:
        time.sleep(4.0)  # the trainer is now waiting for the frozen sampler's proposals
        graph.send_signal(signal.SIGINT)
        output = finish(graph, seen, timeout=90)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(sampler, signal.SIGCONT)
    assert "stopping after the current learning block" in output, output
    assert "adr_trainer]: stopped before the end:" in output, output
    assert "adr_trainer ignored Ctrl-C" not in output, output
    assert "adr_trainer exited with code 0" in output, output
    # the hung sampler served the trainer's final checkpoint: once the trainer is gone it gets 10 s, not 300
    assert "adr_sampler ignored Ctrl-C" in output, output


def test_async_graph_trains_to_the_budget_without_refusing_its_own_rollouts(ros_env: dict[str, str],
                                                                           tmp_path: Path) -> None:
    """mode:=async: instances roll out while the trainer learns; every trajectory carries a version the trainer
    published (the inbox refuses others), so none of the graph's own rollouts may be refused."""
    graph = start_graph(tmp_path, ros_env, BUDGET, "instances:=2", "mode:=async")
    output = finish(graph, [])
    assert graph.returncode == 0, output
    rows = metric_rows(tmp_path)
    assert int(rows[-1]["agent_steps"]) >= BUDGET and int(rows[-1]["agent_updates"]) > 0
    assert [int(row["iteration"]) for row in rows] == list(range(len(rows)))
    for refusal in ("mismatch:", "unexpected:", "stale weights", "no policy weights"):
        assert refusal not in output, output
    assert "Traceback" not in output
