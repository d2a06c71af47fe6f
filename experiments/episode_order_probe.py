"""Does an episode depend on the episodes rolled out before it in the same env? (the ErgoPusher graph drift)

Rolls out ``--iterations`` x ``--slots`` seeded episodes (``--policy``: the scripted pushing controller of
experiments/pusher_diagnosis.py, which moves the puck, or a fixed random linear policy; ``--noise`` exploration noise;
the settings drawn uniformly from the env's space) three times, each time in a fresh env: twice in slot order, as the
in-process trainer does, and once with each pair of slots swapped (0<->1, 2<->3, ...), as a simulator instance
holding two goals could execute them before its goal order was fixed. Every rollout is seeded by (run seed,
iteration, slot, kind), so in an env without history the orders give the same episodes. Prints how many differ.

    python -m experiments.episode_order_probe adr/ErgoPusher-v0 --iterations 10
"""
from __future__ import annotations

import argparse

import numpy as np

from adr_core.cli_types import ArgumentParser
from adr_core.envs import make_env
from adr_core.iteration import RolloutSettings, roll_out_episode


def episodes(env_id: str, iterations: int, slots: int, swap_pairs: bool, seed: int, noise: float,
             policy_kind: str) -> dict[tuple[int, int], np.ndarray]:
    env = make_env(env_id)
    space = env.unwrapped.randomization_space
    rng = np.random.default_rng(seed)
    obs_dim = env.observation_space.shape[0]
    act_dim = env.action_space.shape[0]
    weights = rng.normal(0.0, 1.0 / np.sqrt(obs_dim), (act_dim, obs_dim))
    settings = RolloutSettings(run_seed=seed, exploration_noise=noise, reference_noise=0.0)
    draws = np.random.default_rng(seed + 1).uniform(0.0, 1.0, (iterations, slots, space.ndim))
    script = None
    if policy_kind == "scripted":
        from experiments.pusher_diagnosis import ErgoPusherScript

        script = ErgoPusherScript(env)
    out = {}
    for iteration in range(iterations):
        order = list(range(slots))
        if swap_pairs:
            for i in range(0, slots - 1, 2):
                order[i], order[i + 1] = order[i + 1], order[i]
        for slot in order:
            normalized = draws[iteration, slot]
            physical = space.from_normalized(normalized)
            if script is not None:
                script.reset()
                script.q = None  # its inverse kinematics starts afresh: no memory of the episode before
            policy = (lambda obs: script.act()) if script is not None else (lambda obs: np.tanh(weights @ obs))
            trajectory = roll_out_episode(env, policy, physical, normalized, "randomized", slot, iteration, settings)
            out[(iteration, slot)] = np.concatenate([np.ravel(trajectory.obs), np.ravel(trajectory.actions)])
    if script is not None:
        script.close()
    env.close()
    return out


def main() -> None:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("env_id")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--slots", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=0.1, help="exploration noise (std of the action noise)")
    parser.add_argument("--policy", choices=("scripted", "random"), default="scripted")
    args = parser.parse_args()
    in_order = episodes(args.env_id, args.iterations, args.slots, False, args.seed, args.noise, args.policy)
    again = episodes(args.env_id, args.iterations, args.slots, False, args.seed, args.noise, args.policy)
    swapped = episodes(args.env_id, args.iterations, args.slots, True, args.seed, args.noise, args.policy)

    def differ(other: dict[tuple[int, int], np.ndarray]) -> int:
        return sum(not (a.shape == other[k].shape and np.array_equal(a, other[k])) for k, a in in_order.items())

    print(f"{args.env_id}: {len(in_order)} episodes; differ when rolled out again in the same order: "
          f"{differ(again)}; differ with pairs of slots swapped: {differ(swapped)}")


if __name__ == "__main__":
    main()
