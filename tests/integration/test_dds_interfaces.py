"""dds_interfaces:= (issue 18): with the default, nothing a graph node reads from the network is reachable off this
host; a node still talks to ordinary ROS tools on this host. The check is what a node actually reads: datagrams
sent into each of its UDP sockets that is not bound to 127.0.0.1 stay unread."""
from __future__ import annotations

import os
import socket
import struct
import time
from pathlib import Path

import pytest
from rclpy_probe import probe_node, result_of, wait_until

from adr import dds_interfaces
from adr.graph import GRAPHS
from adr_interfaces.srv import ProposeParameters
from adr_ros import topics
from graph_harness.ros_processes import executable, isolated_ros_env, running
from graph_harness.signing import SAMPLER, key_parameter, run_key, signer

OVERRIDES = "{svpg.num_particles: 2, torch_threads: 1}"


def udp_sockets(pid: int) -> dict[tuple[str, int], int]:
    """(bound address, port) -> bytes waiting unread, for every IPv4 UDP socket of process ``pid``."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = {}
    for line in Path(f"/proc/{pid}/net/udp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[9] in inodes:
            address, port = fields[1].split(":")
            found[(socket.inet_ntoa(struct.pack("<I", int(address, 16))), int(port, 16))] = int(
                fields[4].split(":")[1], 16)
    return found


def unread_after_knocking(pid: int) -> dict[tuple[str, int], int]:
    """Send 3 datagrams into every socket of ``pid`` not bound to loopback; the bytes still unread a second later."""
    outside = [key for key in udp_sockets(pid) if key[0] != "127.0.0.1"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as knocker:
        for address, port in outside:
            for _ in range(3):
                knocker.sendto(b"\x00" * 64, ("127.0.0.1" if address == "0.0.0.0" else address, port))
    time.sleep(1.0)
    waiting = udp_sockets(pid)
    return {key: waiting.get(key, 0) for key in outside}


def sampler_env(ros_domain_id: int, dds: str) -> dict[str, str]:
    spec = next(s for s in GRAPHS["train_sim"].nodes({"dds_interfaces": dds}) if s.name == "adr_sampler")
    return {**isolated_ros_env(ros_domain_id), **spec.env}


@pytest.mark.parametrize("dds", ["loopback", "all"])
def test_a_node_reads_nothing_from_off_this_host_by_default(ros_domain_id: int, tmp_path: Path, dds: str) -> None:
    key = run_key(tmp_path / "run")
    command = [executable("adr_sampler_node", "sampler_node"), "--ros-args", "-p", f"overrides:='{OVERRIDES}'",
               "-p", f"run_dir:={tmp_path / 'run'}", *key_parameter(key)]
    env = sampler_env(ros_domain_id, dds)
    assert ("FASTRTPS_DEFAULT_PROFILES_FILE" in env) == (dds == "loopback")
    with probe_node("dds_probe", ros_domain_id) as node, \
            running(command, env, tmp_path / "sampler.log") as process:
        client = node.create_client(ProposeParameters, topics.PROPOSE_SERVICE)
        wait_until(client.service_is_ready, 20.0, "the sampler's propose service")
        # an ordinary ROS process of this host (default transports) still talks to it
        request = signer(key).sign(ProposeParameters.Request(count=0, iteration=0), to=SAMPLER)
        answer = result_of(client.call_async(request), 10.0, "propose")
        assert answer.success, answer.message
        sockets = udp_sockets(process.pid)
        unread = unread_after_knocking(process.pid)
    read_from_outside = sorted(key for key, waiting in unread.items() if waiting == 0)
    if dds == "loopback":
        assert any(address == "127.0.0.1" for address, _ in sockets), sockets
        assert not read_from_outside, f"sockets reachable off this host that the node reads: {read_from_outside}"
    else:  # Fast DDS's defaults: its receive sockets listen on every interface (the check can fail)
        assert read_from_outside, sockets


def test_bad_interface_values_name_the_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = GRAPHS["train_sim"]
    for value, message in [("eth0", "'eth0' is not an IPv4 address"), (",", "names no interface"),
                           ("203.0.113.77", "is not an address of this host")]:
        with pytest.raises(ValueError, match=message):
            graph.nodes({"dds_interfaces": value})
    monkeypatch.setenv("FASTRTPS_DEFAULT_PROFILES_FILE", "/etc/my_profile.xml")
    assert all(not spec.env for spec in graph.nodes({}))  # the user's own profile is kept
    with pytest.raises(ValueError, match="both choose the DDS transport"):
        graph.nodes({"dds_interfaces": "127.0.0.1"})


def test_the_profile_binds_udp_to_the_named_addresses_and_keeps_shared_memory() -> None:
    xml = dds_interfaces.profile_xml(("127.0.0.1", "10.0.0.5"))
    assert "<address>127.0.0.1</address>" in xml and "<address>10.0.0.5</address>" in xml
    assert "<type>SHM</type>" in xml and "<useBuiltinTransports>false</useBuiltinTransports>" in xml
    assert dds_interfaces.parse("all") is None and dds_interfaces.parse("loopback") == ("127.0.0.1",)
