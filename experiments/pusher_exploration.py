"""Why a learner fails to push on the identified arm (results/pushing_transfer/exploration/, bounded_actions/).

    python -m experiments.pusher_exploration contact                       # every row of exploration/README.md
    python -m experiments.pusher_exploration bounded command 0.06 --out scripted_command_0.06.csv

- ``contact``: how often an untrained SAC actor's exploration moves the puck. 100 episodes per row (start states
  20000-20099, 100 steps, each space at its reference point) of ``tanh(noise)`` with unit-variance noise: white (iid
  per step, what SAC samples), 1/f^beta coloured noise over the episode (``beta1`` = pink, Eberhard et al. 2023;
  ``beta2`` = red), or a random target held for k steps (``holdK``). Counts episodes whose puck moved more than 1 cm
  and episodes that ended more than 1 cm closer to the goal.
- ``bounded``: the scripted privileged pusher of ``experiments/pusher_diagnosis.py`` on the diagnosis's 30 start
  states (10000-10029) in the space identified at 4 rad/s, its joint targets passed through a bounded action:
  ``measured`` (measured angle + clip(wanted - measured, +-step), Isaac Lab's relative joint action), ``command``
  (last command + clip(wanted - last command, +-step), a rate limiter) or ``absolute`` (unchanged).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from adr_core.cli_types import ArgumentParser
from adr_core.envs import make_env

SPACES = (None, "ErgoPusher-v0-standin", "results/identify/reference_speed4/identified.yaml")
NOISES = ("white", "beta1", "beta1.5", "beta2", "hold10", "hold25", "hold50")
IDENTIFIED_4 = "results/identify/reference_speed4/identified.yaml"


def coloured(rng: np.random.Generator, steps: int, dims: int, beta: float) -> np.ndarray:
    """``(steps, dims)`` 1/f^beta noise, each column scaled to unit variance."""
    f = np.fft.rfftfreq(steps)
    f[0] = f[1]
    spectrum = (rng.standard_normal((dims, len(f))) + 1j * rng.standard_normal((dims, len(f)))) * f ** (-beta / 2)
    x = np.fft.irfft(spectrum, n=steps, axis=1).T
    scaled: np.ndarray = x / x.std(axis=0, keepdims=True)
    return scaled


def noise_of(kind: str, rng: np.random.Generator, steps: int = 100, dims: int = 4) -> np.ndarray:
    if kind == "white":
        return rng.standard_normal((steps, dims))
    if kind.startswith("beta"):
        return coloured(rng, steps, dims, float(kind[4:]))
    hold = int(kind[4:])  # "holdK": a random target held for K steps
    held: np.ndarray = np.repeat(rng.standard_normal((steps // hold + 1, dims)), hold, axis=0)[:steps]
    return held


def contact(space: str | None, kind: str, episodes: int = 100, seed: int = 0) -> tuple[int, int, float]:
    """(episodes whose puck moved > 1 cm, episodes that ended > 1 cm closer to the goal, mean displacement)."""
    env = make_env("adr/ErgoPusher-v0", **({} if space is None else {"space": space}))
    rng = np.random.default_rng(seed)
    moved, closer, displacements = 0, 0, []
    for episode in range(episodes):
        env.reset(seed=20000 + episode)
        u = env.unwrapped
        start = u.puck_position.copy()
        start_distance = np.linalg.norm(start - u.goal_position)
        info: dict[str, Any] = {}
        for action in np.tanh(noise_of(kind, rng)):
            _, _, _, _, info = env.step(action)
        displacement = float(np.linalg.norm(u.puck_position - start))
        displacements.append(displacement)
        moved += displacement > 0.01
        closer += info["final_distance"] < start_distance - 0.01
    env.close()
    return moved, closer, float(np.mean(displacements))


def bounded(mode: str, step: float, out: Path) -> np.ndarray:
    """The scripted pusher through a bounded action (module doc); returns the final distances."""
    from adr_core.envs.ergo_pusher import ACTION_SCALE
    from experiments.pusher_diagnosis import ErgoPusherScript, episode_rows, run_policy, write

    holder: dict[str, ErgoPusherScript] = {}

    def final(env: Any, obs: np.ndarray) -> float:
        script = holder.setdefault("script", ErgoPusherScript(env))
        script.env = env.unwrapped
        script.reset()
        last: list[np.ndarray] = []

        def policy(o: np.ndarray) -> np.ndarray:
            wanted = script.act() * ACTION_SCALE
            if mode == "absolute":
                q = wanted
            else:
                base = o[:4] * ACTION_SCALE if mode == "measured" or not last else last[-1]
                q = base + np.clip(wanted - base, -step, step)
            q = np.clip(q, -ACTION_SCALE, ACTION_SCALE)
            last.append(q)
            return q / ACTION_SCALE
        return run_policy(policy)(env, obs)

    rows = episode_rows("adr/ErgoPusher-v0", range(10000, 10030), final, IDENTIFIED_4)
    write(rows, out)
    return np.array([r["final_distance"] for r in rows])


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("contact")
    p = sub.add_parser("bounded")
    p.add_argument("mode", choices=("absolute", "measured", "command"))
    p.add_argument("step", type=float, help="rad per control step (ignored by absolute)")
    p.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "contact":
        for space in SPACES:
            for kind in NOISES:
                moved, closer, mean = contact(space, kind)
                print(f"{space or 'plain'} {kind}: puck moved >1cm in {moved}/100, closer to goal by >1cm in "
                      f"{closer}/100, mean displacement {mean:.3f} m", flush=True)
        return 0
    if args.mode != "absolute" and args.step <= 0:
        parser.error("bounded: step must be > 0 rad")
    d = bounded(args.mode, args.step, args.out)
    print(f"{args.mode} {args.step}: solved {(d < 0.025).sum()}/30 mean {d.mean():.3f} median {np.median(d):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
