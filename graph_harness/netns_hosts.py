"""Network namespaces joined by links, standing in for hosts (root and ``ip`` only): a head and worker hosts, each
worker on its own link to the head. A link is a veth pair, or (``link_delay_ms``) two TUN devices with
delayed_link.py between them, which holds every packet that long (kernels without ``sch_netem`` have no ``tc netem``).
Used by tests/integration/test_multi_host.py and benchmarks/link_latency.py."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from graph_harness.graph_runs import launch_command


def can_make_namespaces() -> bool:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return False
    name = f"adrprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True).returncode == 0
    if made:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return made


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@dataclass
class Host:
    namespace: str
    addresses: list[str]  # of its links
    peers: list[str]  # the addresses it reaches the others at
    links: list[str] = field(default_factory=list)  # its ends of the links (a worker: one, to the head)

    @property
    def link(self) -> str:
        return self.links[0]

    def env(self, base: dict[str, str]) -> dict[str, str]:
        return {**base, "ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET", "ROS_STATIC_PEERS": ";".join(self.peers)}

    def launch(self, run_dir: Path, base_env: dict[str, str], budget: int, *extra: str,
               overrides: dict | None = None) -> subprocess.Popen:
        """``adr_launch adr train_sim.launch.py`` in this host, DDS bound to its own addresses."""
        interfaces = ",".join([*self.addresses, "127.0.0.1"])
        command = ["ip", "netns", "exec", self.namespace,
                   *launch_command(run_dir, base_env["ROS_DOMAIN_ID"], budget, *extra, f"dds_interfaces:={interfaces}",
                                   overrides=overrides)]
        return subprocess.Popen(command, env=self.env(base_env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)

    def bytes_sent(self) -> int:
        """Bytes sent over its first link (a worker: its trajectories to the head, not through shared memory)."""
        shown = subprocess.run(["ip", "-n", self.namespace, "-s", "-j", "link", "show", "dev", self.link],
                               check=True, capture_output=True, text=True).stdout
        return int(json.loads(shown)[0]["stats64"]["tx"]["bytes"])


def _delayed_link(head_end: str, worker_end: str, delay_ms: float) -> subprocess.Popen:
    """Start delayed_link.py between two new TUN devices (in this namespace); returns once they exist."""
    forwarder = subprocess.Popen([sys.executable, str(Path(__file__).with_name("delayed_link.py")), "--names",
                                  head_end, worker_end, "--delay-ms", str(delay_ms)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    if forwarder.stdout is None or forwarder.stdout.readline().strip() != "ready":
        forwarder.kill()
        raise RuntimeError(f"delayed_link.py did not start: {forwarder.communicate()[1]}")
    return forwarder


@contextmanager
def hosts(workers: int = 2, link_delay_ms: float | None = None) -> Iterator[dict[str, Host]]:
    """``{"head": ..., "worker1": ..., ...}``; worker i on link 10.(213+i).k.0/24 (head .1, worker .2).
    ``link_delay_ms``: every link holds each packet that long, each way (round trip twice that); None: veth pairs,
    no added latency."""
    tag, k = os.getpid() % 100_000, os.getpid() % 250 + 1
    roles = ["head", *(f"worker{i + 1}" for i in range(workers))]
    names = {role: f"adr{tag}{role[0]}{role[-1]}" for role in roles}
    forwarders: list[subprocess.Popen] = []
    for name in names.values():
        ip("netns", "add", name)
    try:
        made = {"head": Host(names["head"], [], [])}
        for i in range(workers):
            head_end, worker_end = f"v{tag}h{i}", f"v{tag}w{i}"
            head_address, worker_address = f"10.{213 + i}.{k}.1", f"10.{213 + i}.{k}.2"
            if link_delay_ms is None:
                ip("link", "add", head_end, "type", "veth", "peer", "name", worker_end)
            else:
                forwarders.append(_delayed_link(head_end, worker_end, link_delay_ms))
            ip("link", "set", head_end, "netns", names["head"])
            ip("link", "set", worker_end, "netns", names[f"worker{i + 1}"])
            ip("-n", names["head"], "addr", "add", f"{head_address}/24", "dev", head_end)
            ip("-n", names[f"worker{i + 1}"], "addr", "add", f"{worker_address}/24", "dev", worker_end)
            ip("-n", names["head"], "link", "set", head_end, "up")
            ip("-n", names[f"worker{i + 1}"], "link", "set", worker_end, "up")
            made["head"].addresses.append(head_address)
            made["head"].peers.append(worker_address)
            made["head"].links.append(head_end)
            made[f"worker{i + 1}"] = Host(names[f"worker{i + 1}"], [worker_address], [head_address], [worker_end])
        for name in names.values():
            ip("-n", name, "link", "set", "lo", "up")
        yield made
    finally:
        for forwarder in forwarders:
            forwarder.kill()
            forwarder.wait()
        for name in names.values():
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
