"""Env step rate of each adr/* env next to its raw engine step rate (same frame skip), measured in the same run.

    python -m benchmarks.envs [--episodes N] [--rounds R] [--envs adr/LunarLander-v0 ...]

What "raw" means, per env (the same engine calls the env must make, with no env code around them):
  LunarLander   gymnasium's own LunarLanderContinuous (unwrapped) ``step``: our env runs that very code with a
                per-instance engine power, so the ratio is the whole cost of our env over the stock one.
  Pusher3DOF    ``data.ctrl[:] = a; mujoco.mj_step(model, data, nstep=5)`` on a bare model from the same MJCF.
  ErgoReacher   ``setJointMotorControlArray`` + 4 x ``stepSimulation`` + ``getJointStates`` + ``getLinkState``
                of the tip (the reads any env needs for its observation and reward).
  ErgoPusher    the same plus ``getJointStates`` of the puck.
The raw loops run in a second instance of the env (reset like the env, so the worlds are identical).
Env steps go through ``make_env`` (gymnasium.make: TimeLimit + OrderEnforcing). Both loops replay the same
seeded episodes (reset with seed k, then the same 100 random actions; lander episodes are cut where the stock
env's episode ends) in identical worlds; ``reset()`` is not timed. Raw and env loops alternate episode by
episode, ``--rounds`` times, and each episode keeps its fastest timing: other load on the machine only ever
slows a timing down, so the minimum is the fair estimate for both loops.
Overhead = raw rate / env rate - 1 (target: <= 15 %).
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import gymnasium as gym
import mujoco
import numpy as np
import pybullet as pb
from gymnasium.envs.box2d.lunar_lander import LunarLander

from adr_core.envs import ENV_IDS, ergo_pusher, ergo_reacher, make_env, pusher3dof

CHUNK = 100  # steps per timed episode (the 100-step envs' episode length)
RawLoop = Callable[[np.ndarray], None]  # engine calls for len(actions) steps


def raw_lunar(stock: LunarLander) -> RawLoop:
    def run(actions: np.ndarray) -> None:
        for a in actions:
            if stock.step(a)[2]:
                return
    return run


def raw_pusher(sim: pusher3dof.Pusher3DOFEnv) -> RawLoop:
    model, data, step, skip = sim.model, sim.data, mujoco.mj_step, pusher3dof.FRAME_SKIP
    ctrl = data.ctrl

    def run(actions: np.ndarray) -> None:
        for a in actions:
            ctrl[:] = a
            step(model, data, nstep=skip)
    return run


def raw_ergo(sim) -> RawLoop:
    """PyBullet calls only: command, physics substeps, and the reads any env needs for its observation."""
    client, robot, ee, joints = sim.sim.client, sim.sim.robot, sim.sim.end_effector, list(sim._actuated)
    puck = getattr(sim, "_puck", None)
    module = ergo_pusher if puck is not None else ergo_reacher
    gains, torques = list(sim._gains), list(sim._max_torques)
    zeros, ones, scale, skip = [0.0] * len(joints), [1.0] * len(joints), module.ACTION_SCALE, module.FRAME_SKIP

    def run(actions: np.ndarray) -> None:
        for a in actions:
            pb.setJointMotorControlArray(robot, joints, pb.POSITION_CONTROL, targetPositions=(a * scale).tolist(),
                                         targetVelocities=zeros, positionGains=gains, velocityGains=ones,
                                         forces=torques, physicsClientId=client)
            for _ in range(skip):
                pb.stepSimulation(physicsClientId=client)
            pb.getJointStates(robot, joints, physicsClientId=client)
            if puck is not None:
                pb.getJointStates(puck, [0, 1], physicsClientId=client)
            pb.getLinkState(robot, ee, computeForwardKinematics=True, physicsClientId=client)
    return run


def env_steps(env: gym.Env) -> Callable[[np.ndarray], None]:
    def run(actions: np.ndarray) -> None:
        for a in actions:
            _, _, terminated, truncated, _ = env.step(a)
            if terminated or truncated:
                return
    return run


def measure(env_id: str, n_episodes: int, rounds: int) -> tuple[float, float]:
    """(env rate, raw rate). Both loops replay the same seeded episodes in identical worlds, alternating episode by
    episode; each episode keeps its fastest of ``rounds`` timings (robust to other load on the machine)."""
    env, twin = make_env(env_id), make_env(env_id)
    rng = np.random.default_rng(0)
    episodes = list(rng.uniform(-1.0, 1.0, (n_episodes, CHUNK, env.action_space.shape[0])).astype(np.float32))
    if env_id == "adr/LunarLander-v0":
        # random actions end lander episodes early: cut each action sequence where the stock env's episode ends
        stock = LunarLander(continuous=True)
        raw, raw_reset = raw_lunar(stock), (lambda k: stock.reset(seed=k))
        episodes = [cut_at_episode_end(stock, k, actions) for k, actions in enumerate(episodes)]
    else:
        raw, raw_reset = RAW[env_id](twin.unwrapped), (lambda k: twin.reset(seed=k))
    run_env, env_reset = env_steps(env), (lambda k: env.reset(seed=k))
    best_raw = np.full(len(episodes), np.inf)
    best_env = np.full(len(episodes), np.inf)
    for _ in range(rounds):
        for k, actions in enumerate(episodes):
            best_raw[k] = min(best_raw[k], timed(raw, raw_reset, k, actions))
            best_env[k] = min(best_env[k], timed(run_env, env_reset, k, actions))
    env.close()
    twin.close()
    steps = sum(len(a) for a in episodes)
    return steps / best_env.sum(), steps / best_raw.sum()


def timed(run: Callable[[np.ndarray], None], reset: Callable[[int], None], k: int, actions: np.ndarray) -> float:
    reset(k)  # not timed
    t0 = time.perf_counter()
    run(actions)
    return time.perf_counter() - t0


def cut_at_episode_end(stock: LunarLander, seed: int, actions: np.ndarray) -> np.ndarray:
    stock.reset(seed=seed)
    for n, a in enumerate(actions, 1):
        if stock.step(a)[2]:
            return actions[:n]
    return actions


RAW: dict[str, Callable] = {
    "adr/Pusher3DOF-v0": raw_pusher,
    "adr/ErgoReacher-v0": raw_ergo,
    "adr/ErgoPusher-v0": raw_ergo,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=20, help="seeded episodes of up to 100 steps (default 20)")
    parser.add_argument("--rounds", type=int, default=5, help="timings per episode; the fastest is kept (default 5)")
    parser.add_argument("--envs", nargs="+", default=list(ENV_IDS), choices=list(ENV_IDS), help="envs to measure")
    args = parser.parse_args(argv)

    print(f"{'env':<22}{'frame skip':>11}{'env steps/s':>13}{'raw steps/s':>13}{'overhead':>10}")
    skips = {"adr/LunarLander-v0": 1, "adr/Pusher3DOF-v0": pusher3dof.FRAME_SKIP,
             "adr/ErgoReacher-v0": ergo_reacher.FRAME_SKIP, "adr/ErgoPusher-v0": ergo_pusher.FRAME_SKIP}
    for env_id in args.envs:
        env_rate, raw_rate = measure(env_id, args.episodes, args.rounds)
        print(f"{env_id:<22}{skips[env_id]:>11}{env_rate:>13,.0f}{raw_rate:>13,.0f}{raw_rate / env_rate - 1:>10.1%}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
