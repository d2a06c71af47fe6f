"""Learner throughput: our DDPG/TD3 update vs a minimal plain-torch DDPG loop, candidate speed-ups, SVPG timings.

    python -m benchmarks.learner                                   # batch 1000 and 256, torch's thread count
    python -m benchmarks.learner --threads 1 2 --json learner.json # thread settings side by side
    python -m benchmarks.learner --device cuda --batches 1000      # on a GPU (says 'skipped' without one)
    python -m benchmarks.learner --batches 256 --threads 1 --seconds 2 --variants plain ddpg --no-svpg  # quick

The plain loop is the textbook version (CleanRL / OurDDPG style): separate preallocated tensors per field,
default Adam, full ``backward()`` for the actor loss, a Python loop for the soft update. Every variant runs the
paper's networks (400-300 ReLU) on the same data in the same process, alternating in ~1 s chunks, so the ratios
are fair on a busy machine. Variants (see learner_variants.py):

  plain             the textbook loop (the baseline of the "x plain" column)
  ddpg, td3         adr_core's agents as they are
  ddpg+presampled   batched replay sampling: one randint + index_select for 64 steps
  ddpg+compile      torch.compile of the four networks (the first steps compile: see "first 3 steps s")

Thread settings: ``--threads 1 2`` measures each count (``torch.set_num_threads``) in turn.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from adr_core.agents import AgentConfig, make_agent
from adr_core.rollout import Trajectory
from adr_core.samplers.svpg import SVPGConfig, SVPGSampler
from benchmarks.learner_variants import compile_networks, presampled_update

OBS_DIM, ACT_DIM, BUFFER = 8, 2, 100_000  # LunarLander sizes
VARIANTS = ("plain", "ddpg", "td3", "ddpg+presampled", "ddpg+compile")
DEFAULT_VARIANTS = VARIANTS


def mlp(sizes: list[int], out_act: nn.Module | None = None) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    if out_act is not None:
        layers.append(out_act)
    return nn.Sequential(*layers)


class PlainDDPG:
    """The minimal plain-torch DDPG update (the baseline)."""

    def __init__(self, data: dict[str, np.ndarray], device: torch.device = torch.device("cpu")) -> None:
        self.device = device
        self.actor = mlp([OBS_DIM, 400, 300, ACT_DIM], nn.Tanh()).to(device)
        self.critic = mlp([OBS_DIM + ACT_DIM, 400, 300, 1]).to(device)
        self.actor_t = mlp([OBS_DIM, 400, 300, ACT_DIM], nn.Tanh()).to(device)
        self.critic_t = mlp([OBS_DIM + ACT_DIM, 400, 300, 1]).to(device)
        self.actor_t.load_state_dict(self.actor.state_dict())
        self.critic_t.load_state_dict(self.critic.state_dict())
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.data = {k: torch.from_numpy(v).to(device) for k, v in data.items()}

    def update(self, batch_size: int) -> None:
        idx = torch.randint(0, BUFFER, (batch_size,), device=self.device)
        s, a, r, d, s2 = (self.data[k][idx] for k in ("obs", "act", "rew", "done", "next"))
        with torch.no_grad():
            q_next = self.critic_t(torch.cat([s2, self.actor_t(s2)], 1))
            y = r + 0.99 * (1 - d) * q_next
        critic_loss = F.mse_loss(self.critic(torch.cat([s, a], 1)), y)
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        actor_loss = -self.critic(torch.cat([s, self.actor(s)], 1)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        for net, tgt in ((self.actor, self.actor_t), (self.critic, self.critic_t)):
            for p, tp in zip(net.parameters(), tgt.parameters()):
                tp.data.copy_(0.005 * p.data + 0.995 * tp.data)


def synthetic_data(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"obs": rng.normal(size=(BUFFER, OBS_DIM)).astype(np.float32),
            "act": rng.uniform(-1, 1, size=(BUFFER, ACT_DIM)).astype(np.float32),
            "rew": rng.normal(size=(BUFFER, 1)).astype(np.float32),
            "done": (rng.random((BUFFER, 1)) < 0.01).astype(np.float32),
            "next": rng.normal(size=(BUFFER, OBS_DIM)).astype(np.float32)}


def as_trajectory(data: dict[str, np.ndarray]) -> Trajectory:
    return Trajectory(obs=data["obs"], actions=data["act"], next_obs=data["next"], rewards=data["rew"][:, 0],
                      terminated=data["done"][:, 0] > 0, params=np.zeros(1), params_normalized=np.zeros(1),
                      kind="randomized", iteration=0, slot=0, policy_version=0, episode_return=0.0, length=BUFFER)


def timed(fn: Callable[[], None], device: torch.device) -> float:
    """Seconds of one call of ``fn`` (CUDA: synchronized before and after)."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - start


def plain_steps(plain: PlainDDPG, batch_size: int) -> Callable[[int], None]:
    def run(n_updates: int) -> None:
        for _ in range(n_updates):
            plain.update(batch_size)
    return run


def make_updaters(variants: list[str], batch_size: int, data: dict[str, np.ndarray],
                  device: torch.device) -> dict[str, Callable[[int], None]]:
    """variant -> ``run(n)``: n gradient steps of that variant, each on its own copy of the same data."""
    updaters: dict[str, Callable[[int], None]] = {}
    for variant in variants:
        if variant == "plain":
            updaters[variant] = plain_steps(PlainDDPG(data, device), batch_size)
            continue
        algorithm, _, option = variant.partition("+")
        agent = make_agent(AgentConfig(algorithm=algorithm, batch_size=batch_size, buffer_capacity=BUFFER,
                                       learning_starts=0), OBS_DIM, ACT_DIM, seed=0, device=device)
        agent.store(as_trajectory(data))
        if option == "presampled":
            updaters[variant] = presampled_update(agent)
        else:
            if option == "compile":
                compile_networks(agent)
            updaters[variant] = agent.update
    return updaters


def learner_rows(variants: list[str], batch_size: int, threads: int, seconds: float, data: dict[str, np.ndarray],
                 device: torch.device) -> list[dict]:
    """Median seconds per gradient step of each variant, measured in alternating ~1 s chunks (fair on a busy
    machine: every variant sees the same load), with the ratio to the plain-torch loop when it was measured."""
    torch.set_num_threads(threads)
    updaters = make_updaters(variants, batch_size, data, device)
    warm_up_s = {name: timed(lambda run=run: run(3), device) for name, run in updaters.items()}  # compiles here
    probe = max(timed(lambda run=run: run(3), device) / 3 for run in updaters.values())
    chunk = max(3, int(1.0 / probe))
    times: dict[str, list[float]] = {name: [] for name in updaters}
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or not times[variants[0]]:
        for name, run in updaters.items():
            times[name].append(timed(lambda run=run: run(chunk), device) / chunk)
    medians = {name: float(np.median(values)) for name, values in times.items()}
    base = medians.get("plain")
    return [{"device": device.type, "batch": batch_size, "threads": threads, "variant": name, "seconds": t,
             "updates_per_s": 1.0 / t, "vs_plain": base / t if base else None, "warm_up_s": warm_up_s[name],
             "chunks": len(times[name])} for name, t in medians.items()]


def svpg_row(num_particles: int, dims: int, repeats: int) -> tuple[float, float]:
    sampler = SVPGSampler(dims, SVPGConfig(num_particles=num_particles), seed=0)
    rng = np.random.default_rng(0)
    propose_t, update_t = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        proposals = sampler.propose()
        t1 = time.perf_counter()
        sampler.update(rng.normal(size=len(proposals)))
        t2 = time.perf_counter()
        propose_t.append(t1 - t0)
        update_t.append(t2 - t1)
    return float(np.median(propose_t)), float(np.median(update_t))


def print_learner_table(rows: list[dict]) -> None:
    print("| device | batch | threads | variant | ms / update | updates/s | x plain | first 3 steps s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = "" if r["vs_plain"] is None else f"{r['vs_plain']:.2f}"
        print(f"| {r['device']} | {r['batch']} | {r['threads']} | {r['variant']} | {r['seconds'] * 1e3:.2f} "
              f"| {r['updates_per_s']:.1f} | {ratio} | {r['warm_up_s']:.2f} |", flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, nargs="+", default=[torch.get_num_threads()],
                        help="torch intra-op thread counts to measure, e.g. --threads 1 2 (default: torch's)")
    parser.add_argument("--batches", type=int, nargs="+", default=[1000, 256], help="batch sizes (default 1000 256)")
    parser.add_argument("--variants", nargs="+", default=list(DEFAULT_VARIANTS), choices=VARIANTS,
                        help=f"what to time (default: {' '.join(DEFAULT_VARIANTS)}); 'ddpg+compile' compiles first "
                             "(tens of seconds of CPU)")
    parser.add_argument("--seconds", type=float, default=12.0,
                        help="measuring time per (batch, threads) after the warm-up (default 12)")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                        help="cuda: the same rows on the GPU; without one the command says so and exits 0")
    parser.add_argument("--no-svpg", action="store_true", help="skip the SVPG propose/update timings")
    parser.add_argument("--json", type=Path, help="also write every row as JSON here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        reason = f"torch {torch.__version__} sees no CUDA device (torch.cuda.is_available() is False)"
        print(f"learner on CUDA: skipped: {reason}")
        if args.json:
            args.json.write_text(json.dumps({"device": "cuda", "skipped": reason}, indent=1))
        return 0
    device = torch.device(args.device)
    torch.manual_seed(0)
    data = synthetic_data(np.random.default_rng(0))
    name = torch.cuda.get_device_name() if device.type == "cuda" else f"{os.cpu_count()} CPUs"
    print(f"torch {torch.__version__}, {name}, obs {OBS_DIM}, act {ACT_DIM}, paper networks 400-300; "
          f"plain = textbook DDPG loop (per-field tensors, default Adam, full backward, Python soft update)\n")
    rows = []
    for batch_size in args.batches:
        for threads in args.threads:
            rows += learner_rows(args.variants, batch_size, threads, args.seconds, data, device)
    print_learner_table(rows)
    svpg = []
    if not args.no_svpg:
        print("\nSVPG sampler (rollout_length 1, median of 200): propose / update")
        for n, d in ((10, 1), (15, 2), (15, 8)):
            p, u = svpg_row(n, d, 200)
            svpg.append({"particles": n, "dims": d, "propose_s": p, "update_s": u})
            print(f"  {n:2d} particles, d={d}: propose {p * 1e3:6.2f} ms  update {u * 1e3:6.2f} ms")
    if args.json:
        args.json.write_text(json.dumps({"learner": rows, "svpg": svpg}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
