"""Run the training graph with the pip launcher, and the in-process trainer with the same configuration."""
from __future__ import annotations

import csv
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from adr_core.training.config import TrainConfig
from adr_core.training.trainer import Trainer
from graph_harness.ros_processes import executable

# Small networks and short episodes: a few seconds per iteration on 2 cores, same code paths as the paper config.
# torch_threads is left at its default (1 in every process): a reduction over 1 or 2 threads may differ in the last
# bit, and the graph is compared with the in-process trainer to the bit, so the comparison checks that the default is
# the equal one (issue 28, item 7).
TINY = {"agent.batch_size": 32, "agent.learning_starts": 200, "agent.hidden_sizes": [32, 32],
        "svpg.num_particles": 2, "max_episode_steps": 100, "discriminator.hidden_size": 32,
        "checkpoint_every": 2, "tensorboard": False, "progress": False}
COMPARED = ("iteration", "agent_steps", "agent_updates", "return_mean", "solved_fraction", "critic_loss",
            "actor_loss", "entropy_alpha", "policy_entropy", "n_updates", "sampler_reward_mean", "sampler_reward_std",
            # written by the trainer node from the reference trajectories, the discriminator's and the sampler's
            # statistics (issue: graph runs write adr-train's columns)
            "reference_return_mean", "reference_solved_fraction", "d_randomized", "d_reference",
            "discriminator_loss", "discriminator_steps", "svpg_value_loss", "svpg_objective", "svpg_bandwidth",
            "svpg_kernel_mean", "svpg_log_std")


def overrides_arg(overrides: dict) -> str:
    body = ", ".join(f"{k}: {v}" for k, v in overrides.items())
    return "overrides:={" + body + "}"


def launch_command(run_dir: Path, domain_id: str, budget: int, *extra: str, overrides: dict | None = None) -> list[str]:
    return [str(executable("adr", "adr_launch")), "adr", "train_sim.launch.py", f"run_dir:={run_dir}",
            f"budget:={budget}", overrides_arg({**TINY, **(overrides or {})}), "--domain-id", domain_id, *extra]


def start_graph(run_dir: Path, env: dict[str, str], budget: int, *extra: str,
                overrides: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(launch_command(run_dir, env["ROS_DOMAIN_ID"], budget, *extra, overrides=overrides),
                            env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def read_until(process: subprocess.Popen, pattern: str, timeout: float, seen: list[str]) -> re.Match:
    """Read the launcher's output until a line matches ``pattern`` (lines are kept in ``seen``)."""
    deadline = time.monotonic() + timeout
    regex = re.compile(pattern)
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        match = regex.search(line)
        if match:
            return match
    raise AssertionError(f"no line matching {pattern!r} within {timeout} s; output:\n{''.join(seen[-60:])}")


def finish(process: subprocess.Popen, seen: list[str], timeout: float = 240) -> str:
    try:
        rest, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as late:
        # the output read so far (bytes): its "started" lines name the nodes that are to print their stacks
        read = late.output.decode(errors="replace") if isinstance(late.output, bytes) else late.output or ""
        raise AssertionError("graph did not finish in time:\n" + abandon(process, seen, read)) from None
    return "".join(seen) + rest


def abandon(process: subprocess.Popen, seen: list[str], read: str = "") -> str:
    """A graph that hangs: every node prints its threads' stacks (SIGUSR1, adr_ros.entry), then the launcher gets
    Ctrl-C and 30 s; then the launcher and every node it started are killed, so nothing of this run lives on to
    talk to the next test on the domain. ``read``: output a timed-out ``communicate`` read beyond ``seen`` (it
    returns it again). Returns the whole output, stacks included."""
    nodes = node_pids("".join(seen) + read)
    for pid in nodes:
        _signal(pid, signal.SIGUSR1)
    time.sleep(2.0)
    process.send_signal(signal.SIGINT)
    try:
        rest, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        _signal(process.pid, signal.SIGKILL)
        rest, _ = process.communicate(timeout=30)
    output = "".join(seen) + rest
    for pid in node_pids(output):
        _signal(pid, signal.SIGKILL)
    return output


def node_pids(output: str) -> list[int]:
    """The pids of the nodes a launch started, from its ``started <node> (pid N)`` lines."""
    return [int(pid) for pid in re.findall(r"\[adr_launch\] started \S+ \(pid (\d+)\)", output)]


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def run_in_process(out_dir: Path, budget: int, **overrides) -> Trainer:
    config = TrainConfig().with_overrides({**TINY, "total_agent_steps": budget, **overrides})
    trainer = Trainer(config, out_dir)
    trainer.run()
    return trainer


def metric_rows(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "metrics.csv", newline="") as handle:
        return [{k: row[k] for k in COMPARED} for row in csv.DictReader(handle)]


def sample_rows(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "sampled_parameters.csv", newline="") as handle:
        return list(csv.DictReader(handle))
