"""Simulator instances on other hosts (issue 18): network namespaces joined by veth links stand in for machines. The
head runs sampler, discriminator and trainer (role:=head), each worker runs simulator instances (role:=sims); DDS
traffic between them goes over the links (each side listens on its own address, dds_interfaces:=). Sync mode is
deterministic, so "nothing lost" is checked to the bit against the in-process trainer.

Needs root (ip netns); skipped where network namespaces cannot be made."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph_harness.graph_runs import finish, metric_rows, read_until, run_in_process, sample_rows
from graph_harness.netns_hosts import Host, can_make_namespaces, hosts, ip
from graph_harness.signing import run_key

BUDGET = 1000
RUN_ID = "multi-host-run"  # run_id:= of the head and both workers (role:=sims needs the head's)


pytestmark = pytest.mark.skipif(not can_make_namespaces(), reason="needs root and ip netns (network namespaces)")


@pytest.fixture
def network() -> Iterator[dict[str, Host]]:
    """A head and two workers, each worker on its own link to the head (10.213.k.0/24 and 10.214.k.0/24)."""
    with hosts(workers=2) as made:
        yield made


def launch(host: Host, run_dir: Path, ros_env: dict[str, str], *extra: str) -> subprocess.Popen:
    """The head creates the run's key in its run_dir; a worker gets a copy of it (docs/node_graph.md)."""
    if "role:=sims" in extra:
        worker_key = run_dir.parent / f"{run_dir.name}-{host.namespace}.key"
        if not worker_key.exists():
            shutil.copy2(run_key(run_dir), worker_key)  # the documented copy (mode 0600 kept)
        extra = (*extra, f"key_file:={worker_key}")
    # one start of the run for the head and its workers (a worker needs the head's: docs/node_graph.md); each run dir
    # is a test's own, so each test is a new start
    start = "start-" + hashlib.sha256(str(run_dir).encode()).hexdigest()[:12]
    return host.launch(run_dir, ros_env, BUDGET, *extra, f"run_id:={RUN_ID}", f"run_start:={start}")


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("in_process")
    run_in_process(out, BUDGET)
    return out


def stop(process: subprocess.Popen) -> str:
    """Ctrl-C to a worker's launcher (its instances wait for work until then)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    return output


def test_instances_on_two_worker_hosts_train_to_the_end_through_a_link_outage(
        network: dict[str, Host], ros_env: dict[str, str], reference_run: Path, tmp_path: Path) -> None:
    head, worker1, worker2 = network["head"], network["worker1"], network["worker2"]
    workers = [launch(worker1, tmp_path, ros_env, "role:=sims", "instances:=2", "sim_ids:=0"),
               launch(worker2, tmp_path, ros_env, "role:=sims", "instances:=2", "sim_ids:=1")]
    worker_seen: list[list[str]] = [[], []]
    for worker, lines in zip(workers, worker_seen):  # both instances up before the head starts handing out slots
        read_until(worker, r"adr_sim_\d+\]: .* instance \(", 180, lines)
    graph = launch(head, tmp_path, ros_env, "role:=head", "instances:=2")
    seen: list[str] = []
    try:
        read_until(graph, r"adr_trainer\]: iteration 1:", 180, seen)
        ip("-n", worker1.namespace, "link", "set", worker1.link, "down")  # worker 1 unreachable for 3 s
        time.sleep(3)
        ip("-n", worker1.namespace, "link", "set", worker1.link, "up")
        output = finish(graph, seen)
    finally:
        worker_outputs = ["".join(lines) + stop(w) for w, lines in zip(workers, worker_seen)]
    assert graph.returncode == 0, output
    assert not re.search(r"started adr_sim_", output)  # no instance on the head
    assert all("started adr_sim_" in out for out in worker_outputs), worker_outputs
    # the trainer counts the goals each instance finished: both workers' instances took part (they are up before the
    # head starts, and the outage comes after iteration 1); a fixed byte count per worker was not a good enough proxy
    # (a fresh-clone CI run: 36 kB from the worker that got the fewest slots; here 6 goals and ~310-340 kB each)
    done = {name: int(n) for name, n in
            re.findall(r"(adr_sim_\d+) (\d+)", re.search(r"rollouts per instance: ([^;]*);", output)[1])}
    assert set(done) == {"adr_sim_0", "adr_sim_1"} and min(done.values()) >= 1, done
    # each instance's trajectories crossed its own link, not shared memory: the link's traffic grows with the goals
    # it served (measured here: ~56 kB per goal, a randomized and a reference trajectory of <= 100 steps x 19 float32
    # each, to the trainer and to the discriminator); 10 kB per goal is a fifth of that
    assert worker1.bytes_sent() >= 10_000 * done["adr_sim_0"], (worker1.bytes_sent(), done)
    assert worker2.bytes_sent() >= 10_000 * done["adr_sim_1"], (worker2.bytes_sent(), done)
    assert metric_rows(tmp_path) == metric_rows(reference_run)  # nothing lost, nothing changed
    assert sample_rows(tmp_path) == sample_rows(reference_run)


def test_a_killed_worker_host_loses_nothing(network: dict[str, Host], ros_env: dict[str, str],
                                            reference_run: Path, tmp_path: Path) -> None:
    head, worker1, worker2 = network["head"], network["worker1"], network["worker2"]
    doomed = launch(worker1, tmp_path, ros_env, "role:=sims", "instances:=2", "sim_ids:=0")
    survivor = launch(worker2, tmp_path, ros_env, "role:=sims", "instances:=2", "sim_ids:=1")
    graph = launch(head, tmp_path, ros_env, "role:=head", "instances:=2", "rollout_timeout:=5")
    seen: list[str] = []
    try:
        read_until(graph, r"adr_trainer\]: iteration 1:", 180, seen)
        # the host is gone, mid-run: every process in it (the launcher and its instance, each in its own session)
        for pid in subprocess.run(["ip", "netns", "pids", worker1.namespace], capture_output=True,
                                  text=True).stdout.split():
            os.kill(int(pid), signal.SIGKILL)
        output = finish(graph, seen)
    finally:
        stop(survivor)
        doomed.wait(timeout=30)
    assert graph.returncode == 0, output
    assert re.search(r"adr_sim_0.*slot \d+ re-queued", output), output  # its rollout went to worker 2
    assert metric_rows(tmp_path) == metric_rows(reference_run)  # worker 2 took over worker 1's slots
    assert sample_rows(tmp_path) == sample_rows(reference_run)
