"""A point-to-point link with a fixed one-way latency, for kernels without ``sch_netem``: two TUN devices and this
process between them, holding every packet ``--delay-ms`` before writing it to the other side.

    python graph_harness/delayed_link.py --names tunA tunB --delay-ms 10   # root; prints "ready", runs till killed

It creates the two devices in the namespace it runs in and prints ``ready``; the caller then moves each into its
host's namespace and gives it an address (``netns_hosts.hosts(link_delay_ms=...)``); the open file descriptors keep
working across the move. Packets keep their order; nothing is dropped (an unbounded queue: this is a test rig).
"""
from __future__ import annotations

import argparse
import fcntl
import heapq
import os
import select
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
MAX_PACKET = 65_536


def open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    os.set_blocking(fd, False)
    return fd


def forward(a: int, b: int, delay_s: float) -> None:
    other = {a: b, b: a}
    queue: list[tuple[float, int, int, bytes]] = []  # (due, sequence, destination fd, packet)
    sequence = 0
    while True:
        timeout = max(0.0, queue[0][0] - time.monotonic()) if queue else None
        readable, _, _ = select.select([a, b], [], [], timeout)
        now = time.monotonic()
        for fd in readable:
            while True:
                try:
                    packet = os.read(fd, MAX_PACKET)
                except BlockingIOError:
                    break
                heapq.heappush(queue, (now + delay_s, sequence, other[fd], packet))
                sequence += 1
        while queue and queue[0][0] <= time.monotonic():
            _, _, destination, packet = heapq.heappop(queue)
            try:
                os.write(destination, packet)
            except OSError:  # the device is down (a link being set up or torn down): the packet is lost, as on a wire
                pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--names", nargs=2, required=True, metavar=("A", "B"), help="names of the two TUN devices")
    parser.add_argument("--delay-ms", type=float, required=True, help="one-way latency in milliseconds")
    args = parser.parse_args(argv)
    a, b = open_tun(args.names[0]), open_tun(args.names[1])
    print("ready", flush=True)
    forward(a, b, args.delay_ms / 1000.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
