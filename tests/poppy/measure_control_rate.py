"""How fast can PoppyArm cycle (sync read of 6 motors + goal write + reconciliation) through pypot?

Runs the emulator as a separate process (its own GIL, like real servos) and steps a stiff, streamed-to arm as fast
as it goes for a few seconds:  python tests/poppy/measure_control_rate.py [--seconds 3] [--settle 0.0005]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from poppy_driver.arm import PoppyArm
from poppy_driver.config import load_config
from poppy_driver.pypot_bus import Xl320Bus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--settle", type=float, default=None, help="override bus.write_settle_s [s]")
    args = parser.parse_args()
    link = Path(tempfile.mkdtemp()) / "ttyPOPPY"
    command = [sys.executable, "-m", "poppy_standin.cli", "--motion", "constant", "--link", str(link)]
    emulator = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        emulator.stdout.readline()  # "XL-320 bus ... on ..." once it serves
        config = load_config().with_bus(port=str(link))
        if args.settle is not None:
            config = replace(config, bus=replace(config.bus, write_settle_s=args.settle))
        arm = PoppyArm(config, Xl320Bus(config.bus, config.motor_ids))
        arm.step(time.monotonic())
        assert arm.set_compliant(False).ok
        durations, end = [], time.monotonic() + args.seconds
        while time.monotonic() < end:
            start = time.monotonic()
            arm.command_positions([0.1 * (int(start * 2) % 2)] * 6, start)  # a new target every 0.5 s
            if arm.step(start) is None:
                raise SystemExit(f"bus lost: {arm.status().last_error}")
            durations.append(time.monotonic() - start)
        status = arm.status()
        arm.close()
    finally:
        emulator.terminate()
        emulator.wait()
    durations.sort()
    median = statistics.median(durations)
    print(f"{len(durations) / args.seconds:.0f} cycles/s; cycle time median {median * 1e3:.2f} ms, "
          f"p99 {durations[int(0.99 * len(durations))] * 1e3:.2f} ms, max {durations[-1] * 1e3:.2f} ms; "
          f"bus errors {status.bus_errors}; write settle {config.bus.write_settle_s * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
