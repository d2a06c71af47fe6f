"""Deploy path: policy step latency (batch 1) and the deploy process's memory, checkpoint (torch) vs exports.

    python -m benchmarks.deploy_policy                      # an ErgoReacher policy of the fast preset's size
    python -m benchmarks.deploy_policy --hidden 256 256 --steps 20000 --json runs/bench/deploy.json

A policy with random weights and the given hidden sizes is written as an in-process checkpoint, exported with
adr-export to ONNX and TorchScript, and each of the three is loaded the way the policy runner loads it
(``adr_deploy.policy_runner.loading.load_deployable``) in a fresh process that then times ``policy(obs)`` on one
float32 observation ``--steps`` times (after 200 warm-up calls; one torch thread, one onnxruntime thread, like the
runner's defaults). The process reports the median and 99th percentile step time and its peak RSS (``VmHWM``)
after loading + stepping; for ONNX the process blocks torch (``sys.modules['torch'] = None``), so its memory is
what the arm's computer needs. The three are timed in turn, ``--rounds`` times, and the medians over rounds are
printed. The control period is 16.7 ms (60 Hz): the policy step is a small part of it either way.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import sys, time, json
if sys.argv[2] == "onnx":
    sys.modules["torch"] = None
else:
    import torch
    torch.set_num_threads(1)
import numpy as np
from adr_deploy.policy_runner.loading import load_deployable
d = load_deployable(sys.argv[1])
if d.kind == "onnx":  # one intra-op thread, like the runner's torch_threads 1
    import onnxruntime
    options = onnxruntime.SessionOptions(); options.intra_op_num_threads = 1; options.inter_op_num_threads = 1
    d.policy.session = onnxruntime.InferenceSession(str(d.path), options, providers=["CPUExecutionProvider"])
obs = np.random.default_rng(0).standard_normal(d.task.obs_dim).astype(np.float32)
for _ in range(200):
    d.policy(obs)
times = []
for _ in range(int(sys.argv[3])):
    start = time.perf_counter(); d.policy(obs); times.append(time.perf_counter() - start)
times.sort()
rss = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"median_us": 1e6 * times[len(times) // 2], "p99_us": 1e6 * times[int(0.99 * len(times))],
                  "peak_rss_mib": rss / 1024, "torch_loaded": bool(sys.modules.get("torch"))}))
"""


def make_policies(folder: Path, hidden: list[int]) -> dict[str, Path]:
    """An ErgoReacher actor (random weights) as the trainer checkpoints it, and its two exports."""
    import torch

    from adr_core.agents.networks import Actor
    from adr_core.base.checkpoint import save_checkpoint
    from adr_core.export import export_policy
    from adr_core.randomization import load_space

    env_id = "adr/ErgoReacher-v0"
    torch.manual_seed(0)
    actor = Actor(10, 4, tuple(hidden))
    run = folder / "run"
    save_checkpoint(run / "checkpoints" / "latest.pt", {
        "env_id": env_id, "space": load_space(env_id).to_dict(), "obs_dim": 10, "act_dim": 4, "iteration": 1,
        "agent_steps": 0, "config": {"max_episode_steps": None}, "agent": {"actor": actor.state_dict()}})
    return {"checkpoint": run, "torchscript": export_policy(run, "torchscript", folder / "ts").parent,
            "onnx": export_policy(run, "onnx", folder / "onnx").parent}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 64], help="actor hidden sizes [64 64]")
    parser.add_argument("--steps", type=int, default=5000, help="timed policy steps per process [5000]")
    parser.add_argument("--rounds", type=int, default=3, help="processes per kind, interleaved [3]")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    results: dict[str, list[dict[str, float]]] = {"checkpoint": [], "torchscript": [], "onnx": []}
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_policies(Path(tmp), args.hidden)
        for _ in range(args.rounds):
            for kind, path in paths.items():
                out = subprocess.run([sys.executable, "-c", CHILD, str(path), kind, str(args.steps)],
                                     capture_output=True, text=True, check=True)
                results[kind].append(json.loads(out.stdout.strip().splitlines()[-1]))
    rows = {kind: {key: statistics.median(r[key] for r in runs) for key in ("median_us", "p99_us", "peak_rss_mib")}
            | {"torch_loaded": runs[0]["torch_loaded"]} for kind, runs in results.items()}
    base = rows["checkpoint"]
    print(f"Policy step, batch 1, actor {args.hidden}, {args.steps} steps x {args.rounds} processes per kind "
          f"(medians over processes)\n")
    print("| policy file | step median [µs] | step p99 [µs] | vs checkpoint | peak RSS [MiB] | torch loaded |")
    print("|---|---|---|---|---|---|")
    for kind, row in rows.items():
        print(f"| {kind} | {row['median_us']:.1f} | {row['p99_us']:.1f} | "
              f"{base['median_us'] / row['median_us']:.2f}x | {row['peak_rss_mib']:.0f} | {row['torch_loaded']} |")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"hidden": args.hidden, "steps": args.steps, "rows": rows,
                                               "runs": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
