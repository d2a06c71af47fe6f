"""Thread settings of the learner: torch threads x OpenMP wait policy, on an idle machine and next to busy processes.

    python -m benchmarks.threads                               # batch 1000 and 64 (tiny ops), load 0 and 1
    python -m benchmarks.threads --batches 1000 --loads 0 --threads 1 2 --seconds 10 --json threads.json

Each cell is one ``benchmarks/learner.py --variants ddpg`` process (the DDPG gradient step of adr_core, 400-300
networks, or 32-32 with ``--tiny``) with ``torch.set_num_threads(T)`` and ``OMP_WAIT_POLICY`` unset (torch's
OpenMP default: threads spin while they wait for work) or ``PASSIVE`` (they sleep). ``--loads`` starts that many
busy-looping processes for the duration of a cell: stand-ins for the graph's other nodes (simulator instances,
discriminator) or for another job on the same cores. Why it matters: with more runnable threads than cores, the
spinning threads of one parallel region take the cores the others need; on this 2-core machine, under load, a
tiny-network SB3 run fell from ~940 to ~9 env steps/s with 2 threads unless OMP_WAIT_POLICY=PASSIVE.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from experiments.runner import module_command, root_env

POLICIES = ("default", "PASSIVE")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, nargs="+", default=[1000, 64])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--loads", type=int, nargs="+", default=[0, 1], help="busy processes next to the learner")
    parser.add_argument("--seconds", type=float, default=6.0, help="measuring time per cell (default 6)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    return parser.parse_args(argv)


@contextmanager
def busy_processes(count: int):
    processes = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for process in processes:
            process.kill()
            process.wait()


def cell(batch: int, threads: int, policy: str, seconds: float, work: Path) -> dict:
    out = work / f"b{batch}_t{threads}_{policy}.json"
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if policy != "default":
        env["OMP_WAIT_POLICY"] = policy
    command = module_command("benchmarks.learner", "--batches", str(batch), "--threads", str(threads),
                             "--variants", "ddpg", "--seconds", str(seconds), "--no-svpg", "--json", str(out))
    subprocess.run(command, env=root_env(env), check=True, stdout=subprocess.DEVNULL)
    row = json.loads(out.read_text())["learner"][0]
    return {"batch": batch, "threads": threads, "omp_wait_policy": policy, "seconds": row["seconds"],
            "updates_per_s": row["updates_per_s"]}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="adr_bench_threads_"))
    rows = []
    for load in args.loads:
        with busy_processes(load):
            for batch in args.batches:
                for threads in args.threads:
                    for policy in POLICIES:
                        rows.append({"load": load, **cell(batch, threads, policy, args.seconds, work)})
                        r = rows[-1]
                        print(f"load {load}, batch {batch}, {threads} thread(s), OMP_WAIT_POLICY {policy}: "
                              f"{r['updates_per_s']:.1f} updates/s", flush=True)
    print(f"\n{os.cpu_count()} CPUs; adr_core DDPG update; x base = vs 1 thread, default policy, same load and batch\n")
    print("| busy processes | batch | threads | OMP_WAIT_POLICY | ms / update | updates/s | x base |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        base = next((b["updates_per_s"] for b in rows if (b["load"], b["batch"], b["threads"], b["omp_wait_policy"])
                     == (r["load"], r["batch"], 1, "default")), None)
        ratio = f"{r['updates_per_s'] / base:.2f}" if base else ""
        print(f"| {r['load']} | {r['batch']} | {r['threads']} | {r['omp_wait_policy']} | {r['seconds'] * 1e3:.2f} "
              f"| {r['updates_per_s']:.1f} | {ratio} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
