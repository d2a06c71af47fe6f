"""How long the Poppy driver takes to exit after Ctrl-C (issue 18: "Ctrl-C always stops within 2 s").

    python -m benchmarks.driver_stop                 # 5 repetitions of each state
    python -m benchmarks.driver_stop --repeats 10 --json runs/bench/driver_stop.json

The driver node runs as a real process (the installed ``poppy_driver`` executable) in each of three states, then gets
SIGINT, as from Ctrl-C in its terminal; the time from the signal to the process's exit is measured:

- ``port missing``: the configured port does not exist; the driver retries every ``reconnect_period``;
- ``silent port``: a pty nobody answers on: every pypot read runs into its timeout (the slowest case to interrupt);
- ``connected``: the emulated XL-320 bus (poppy_standin.xl320, real pypot on a pty) answers; the control
  loop runs.

Reports per state the median and the largest time over the repetitions, and whether every one was within 2 s.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from poppy_standin.xl320 import Xl320Emulator

from graph_harness.ros_processes import executable, isolated_ros_env

LIMIT_S = 2.0


def stop_time(port: str, settle_s: float, env: dict[str, str], log: Path) -> float:
    command = [str(executable("poppy_driver", "poppy_driver")), "--ros-args", "-p", f"port:={port}",
               "-p", "reconnect_period:=0.2"]
    with open(log, "ab") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        time.sleep(settle_s)
        if process.poll() is not None:
            raise RuntimeError(f"the driver exited before the signal ({process.returncode}); see {log}")
        sent = time.perf_counter()
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return float("inf")
        return time.perf_counter() - sent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--settle", type=float, default=4.0, help="seconds in the state before the signal")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    env = isolated_ros_env(210 + os.getpid() % 20)  # DDS domain ids stop at 232
    results: dict[str, list[float]] = {"port missing": [], "silent port": [], "connected": []}
    with tempfile.TemporaryDirectory() as work:
        log = Path(work) / "driver.log"
        for _ in range(args.repeats):
            results["port missing"].append(stop_time(str(Path(work) / "no_such_port"), args.settle, env, log))
            master, slave = os.openpty()
            try:
                results["silent port"].append(stop_time(os.ttyname(slave), args.settle, env, log))
            finally:
                os.close(master)
                os.close(slave)
            with Xl320Emulator(link=Path(work) / "ttyPOPPY") as emulator:
                results["connected"].append(stop_time(emulator.port, args.settle, env, log))
    print("| state | median (s) | max (s) | within 2 s |")
    print("|---|---|---|---|")
    summary = {}
    for state, times in results.items():
        summary[state] = {"times_s": times, "median_s": statistics.median(times), "max_s": max(times),
                          "within_limit": max(times) <= LIMIT_S}
        print(f"| {state} | {summary[state]['median_s']:.2f} | {summary[state]['max_s']:.2f} | "
              f"{'yes' if summary[state]['within_limit'] else 'NO'} ({len(times)} runs) |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=1))
    return 0 if all(s["within_limit"] for s in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
