"""Learner throughput: our DDPG/TD3 update vs a minimal plain-torch DDPG loop, and SVPG propose+update time.

    python benchmarks/learner.py [--threads N] [--seconds S]

The plain loop is the textbook version (CleanRL / OurDDPG style): separate preallocated tensors per field,
default Adam, full ``backward()`` for the actor loss, a Python loop for the soft update. Both run the paper's
networks (400-300 ReLU) on the same data in the same process, alternating, so the ratio is fair on a busy machine.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src" / "adr_core"))

from adr_core.agents import AgentConfig, make_agent  # noqa: E402
from adr_core.rollout import Trajectory  # noqa: E402
from adr_core.samplers.svpg import SVPGConfig, SVPGSampler  # noqa: E402

OBS_DIM, ACT_DIM, BUFFER = 8, 2, 100_000  # LunarLander sizes


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

    def __init__(self, data: dict[str, np.ndarray]) -> None:
        self.actor = mlp([OBS_DIM, 400, 300, ACT_DIM], nn.Tanh())
        self.critic = mlp([OBS_DIM + ACT_DIM, 400, 300, 1])
        self.actor_t = mlp([OBS_DIM, 400, 300, ACT_DIM], nn.Tanh())
        self.critic_t = mlp([OBS_DIM + ACT_DIM, 400, 300, 1])
        self.actor_t.load_state_dict(self.actor.state_dict())
        self.critic_t.load_state_dict(self.critic.state_dict())
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.data = {k: torch.from_numpy(v) for k, v in data.items()}

    def update(self, batch_size: int) -> None:
        idx = torch.randint(0, BUFFER, (batch_size,))
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


def timed(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def learner_rows(batch_size: int, seconds: float, data: dict[str, np.ndarray]) -> list[tuple[str, float, float]]:
    plain = PlainDDPG(data)
    agents = {}
    for algorithm in ("ddpg", "td3"):
        agent = make_agent(AgentConfig(algorithm=algorithm, batch_size=batch_size, buffer_capacity=BUFFER,
                                       learning_starts=0), OBS_DIM, ACT_DIM, seed=0)
        agent.store(as_trajectory(data))
        agents[algorithm] = agent
    probe = timed(lambda: plain.update(batch_size), 5)
    chunk = max(5, int(1.0 / probe))  # ~1 s per measurement, alternating to share machine noise
    times: dict[str, list[float]] = {"plain": [], "ddpg": [], "td3": []}
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or not times["plain"]:
        times["plain"].append(timed(lambda: plain.update(batch_size), chunk))
        for name, agent in agents.items():
            times[name].append(timed(lambda: agent.update(1), chunk))
    base = float(np.median(times["plain"]))
    rows = [("plain-torch DDPG", base, 1.0)]
    for name in ("ddpg", "td3"):
        t = float(np.median(times[name]))
        rows.append((f"adr_core {name.upper()}", t, base / t))
    return rows


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch intra-op threads")
    parser.add_argument("--seconds", type=float, default=12.0, help="measuring time per batch size")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    data = synthetic_data(np.random.default_rng(0))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, obs {OBS_DIM}, act {ACT_DIM}")
    for batch_size in (1000, 256):
        print(f"\nbatch {batch_size}: one gradient step (critic + actor + targets)")
        for name, t, ratio in learner_rows(batch_size, args.seconds, data):
            print(f"  {name:18s} {t * 1e3:7.2f} ms  {1 / t:7.1f} updates/s  {ratio:5.2f}x plain")
    print("\nSVPG sampler (rollout_length 1, median of 200): propose / update")
    for n, d in ((10, 1), (15, 2), (15, 8)):
        p, u = svpg_row(n, d, 200)
        print(f"  {n:2d} particles, d={d}: propose {p * 1e3:6.2f} ms  update {u * 1e3:6.2f} ms")


if __name__ == "__main__":
    main()
