"""Which network interfaces the graph's DDS participants listen on (Fast DDS, the default RMW).

``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` only limits *discovery*: Fast DDS still opens its unicast receive sockets
on every interface (0.0.0.0), so a host on the network can send into them. The graphs therefore give every node a
Fast DDS profile (``FASTRTPS_DEFAULT_PROFILES_FILE``) whose UDP transport is bound to the chosen addresses, plus
shared memory for processes on this host:

- ``loopback`` (default): 127.0.0.1 only; nothing off this host reaches a node.
- ``all``: no profile, Fast DDS's defaults (every interface): sim instances on other hosts, ``--allow-other-hosts``.
- ``10.0.0.5,127.0.0.1``: those IPv4 addresses of this host (a multi-host run on a chosen network).

A profile of the user's own (``FASTRTPS_DEFAULT_PROFILES_FILE`` or ``FASTDDS_DEFAULT_PROFILES_FILE`` already set)
is kept when ``dds_interfaces`` is left at its default; naming interfaces as well is refused as a conflict.
"""
from __future__ import annotations

import hashlib
import ipaddress
import os
import socket
from collections.abc import Mapping
from pathlib import Path

DEFAULT = "loopback"
PROFILE_VARIABLES = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")

_PROFILE = """<?xml version="1.0" encoding="UTF-8" ?>
<!-- written by adr (adr/dds_interfaces.py): UDP bound to {listing}; shared memory on this host -->
<dds xmlns="http://www.eprosima.com">
  <profiles>
    <transport_descriptors>
      <transport_descriptor>
        <transport_id>adr_udp</transport_id>
        <type>UDPv4</type>
        <interfaceWhiteList>
{addresses}
        </interfaceWhiteList>
      </transport_descriptor>
      <transport_descriptor>
        <transport_id>adr_shm</transport_id>
        <type>SHM</type>
      </transport_descriptor>
    </transport_descriptors>
    <participant profile_name="adr_bound_interfaces" is_default_profile="true">
      <rtps>
        <userTransports>
          <transport_id>adr_shm</transport_id>
          <transport_id>adr_udp</transport_id>
        </userTransports>
        <useBuiltinTransports>false</useBuiltinTransports>
      </rtps>
    </participant>
  </profiles>
</dds>
"""


def parse(value: str) -> tuple[str, ...] | None:
    """The IPv4 addresses ``dds_interfaces:=value`` names; None for ``all``. ValueError names what is wrong."""
    value = value.strip()
    if value == "all":
        return None
    if value == DEFAULT:
        return ("127.0.0.1",)
    addresses = [part.strip() for part in value.split(",") if part.strip()]
    if not addresses:
        raise ValueError(f"dds_interfaces:={value!r} names no interface: use loopback, all, or IPv4 addresses of "
                         f"this host separated by commas (e.g. 10.0.0.5,127.0.0.1)")
    for address in addresses:
        try:
            ipaddress.IPv4Address(address)
        except ValueError:
            raise ValueError(f"dds_interfaces:={value}: {address!r} is not an IPv4 address (use loopback, all, or "
                             f"addresses of this host such as 10.0.0.5,127.0.0.1)") from None
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.bind((address, 0))
            except OSError as error:
                raise ValueError(f"dds_interfaces:={value}: {address} is not an address of this host "
                                 f"({error.strerror}); see `ip -4 addr`") from None
    return tuple(dict.fromkeys(addresses))


def profile_xml(addresses: tuple[str, ...]) -> str:
    listing = ", ".join(addresses)
    return _PROFILE.format(listing=listing, addresses="\n".join(f"          <address>{a}</address>"
                                                                   for a in addresses))


def node_environment(value: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment variables every node of a graph gets for ``dds_interfaces:=value`` (the profile is written under
    $ROS_HOME/adr/dds, default ~/.ros, once per set of addresses)."""
    environ = os.environ if environ is None else environ
    addresses = parse(value)
    own = [name for name in PROFILE_VARIABLES if environ.get(name)]
    if own:
        if value.strip() != DEFAULT:
            raise ValueError(f"dds_interfaces:={value} and {own[0]}={environ[own[0]]} both choose the DDS transport: "
                             f"unset {own[0]} or leave dds_interfaces at its default")
        return {}  # the user's own profile decides
    if addresses is None:
        return {}
    home = Path(environ.get("ROS_HOME") or Path(environ.get("HOME", "~")).expanduser() / ".ros")
    text = profile_xml(addresses)
    path = home / "adr" / "dds" / f"fastdds_{hashlib.sha256(text.encode()).hexdigest()[:12]}.xml"
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text)
        partial.replace(path)
    return {"FASTRTPS_DEFAULT_PROFILES_FILE": str(path)}
