"""Which start states of the pushing envs fail, and what any policy could reach: privileged controllers beside a
trained policy on the same start states (issue 42, results/pushers/diagnosis.md).

    python -m experiments.pusher_diagnosis planner --env adr/Pusher3DOF-v0 --seeds 10000 10100 --out d/pu_planner.csv
    python -m experiments.pusher_diagnosis scripted --env adr/ErgoPusher-v0 --seeds 10000 10200 --out d/ep_script.csv
    python -m experiments.pusher_diagnosis planner --env adr/ErgoPusher-v0 --space ErgoPusher-v0-standin \
        --seeds 10000 10030 --out d/ep_planner.csv
    python -m experiments.pusher_diagnosis scripted --space runs/identify/identified.yaml ... (an identified arm)
    python -m experiments.pusher_diagnosis demos --space ErgoPusher-v0-standin --episodes 200 --out d/demos.npz
    python -m experiments.pusher_diagnosis policy --run runs/x --seeds 10000 10200 --out d/pu_policy.csv
    python -m experiments.pusher_diagnosis figure d/pu_policy.csv d/pu_planner.csv --out d/pu_states.png
    python -m experiments.pusher_diagnosis paths --run runs/x --seeds 10002 10011 10004 --out d/pu_paths.png

Start state k is ``env.reset(seed=k)`` at the reference setting (seeds 10000+: no training or evaluation uses them).

- ``planner`` (Pusher3DOF): open-loop cross-entropy search over the episode's 100 torques with the true simulator
  (it restores the start state for every candidate): 11 knots per joint, linearly interpolated, 128 candidates x 16
  rounds, cost = final puck-goal distance + 0.1 x the closest tip-puck approach. A privileged upper bound: it knows
  the physics and the start state exactly.
- ``planner`` (ErgoPusher): the same cross-entropy search over the episode's joint targets (11 knots per joint,
  128 candidates x 16 rounds, same cost), started from the scripted controller's targets (the first round's mean,
  and one candidate, are its knots), PyBullet's state, the latency queue, the gear play and the puck tracker restored
  for every candidate. In an identified space at its reference point the episode is deterministic, so the best
  candidate's distance is what that target sequence does. A privileged bound of what one episode's targets can
  reach on that arm, to the search's strength (no proof of optimality).
- ``scripted`` (ErgoPusher): a hand-written controller with the full state: inverse kinematics (least squares on
  PyBullet's forward kinematics) puts the tip 1.2 cm behind the puck on the puck-goal line above the table, lowers it,
  then pushes along the line at up to 2 cm a step, stops pushing once the puck would slide to the goal (its friction
  and damping known), and lifts the tip away at the goal.
- ``demos`` (ErgoPusher): the scripted controller's episodes (with ``--planner C R``: the planner's best target
  sequence at that search budget, planned at the episode's point and then played) recorded for
  ``agent.demonstrations`` (observations as the policy sees them, actions clipped to [-1, 1], the env's rewards),
  each at a point drawn uniformly over the space's training range (``--points uniform``, the default) or at its
  reference point; start states 30000+ (no evaluation uses them).
- ``policy``: a trained run's deterministic policy on the same start states.
One CSV row per start state: seed, puck start, goal, final distance.
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from adr_core.cli_types import ArgumentParser
from adr_core.envs import env_record, make_env

FIELDS = ("seed", "puck_x", "puck_y", "goal_x", "goal_y", "final_distance")


def knot_actions(sample: np.ndarray, steps: int) -> np.ndarray:
    """``(steps, dims)`` actions linearly interpolated between a ``(knots, dims)`` sample's knots."""
    knots = sample.shape[0]
    grid, knot_grid = np.arange(steps) / (steps - 1) * (knots - 1), np.arange(knots)
    return np.stack([np.interp(grid, knot_grid, sample[:, j]) for j in range(sample.shape[1])], axis=1)


def cem(score: Callable[[np.ndarray], tuple[float, float]], mean: np.ndarray, std: np.ndarray,
        rng: np.random.Generator, candidates: int, rounds: int, elite: int,
        best: np.ndarray | None = None) -> tuple[float, np.ndarray | None]:
    """Both planners' cross-entropy search over knot sequences in [-1, 1]: ``score(sample) -> (cost, final
    distance)``; each round's first candidate is the best so far (from round 1 when ``best`` is given). Returns the
    best candidate's final distance and the candidate."""
    best_cost, best_final = math.inf, math.inf
    for _ in range(rounds):
        samples = np.clip(mean + std * rng.standard_normal((candidates, *mean.shape)), -1, 1)
        if best is not None:
            samples[0] = best
        costs, finals = np.empty(candidates), np.empty(candidates)
        for i, sample in enumerate(samples):
            costs[i], finals[i] = score(sample)
        order = np.argsort(costs)
        if costs[order[0]] < best_cost:
            best_cost, best, best_final = costs[order[0]], samples[order[0]].copy(), finals[order[0]]
        elites = samples[order[:elite]]
        mean = 0.7 * elites.mean(0) + 0.3 * mean
        std = 0.7 * elites.std(0) + 0.3 * std + 0.02
    return float(best_final), best


# ------------------------------------------------------------------------------------------------ Pusher3DOF planner
def plan_pusher3dof(env: Any, rng: np.random.Generator, candidates: int = 128, rounds: int = 16, knots: int = 11,
                    elite: int = 12) -> float:
    """The best final puck-goal distance CEM finds from the env's current start state (see the module doc)."""
    import mujoco

    u = env.unwrapped
    model, data = u.model, u.data
    qpos0, qvel0, steps = data.qpos.copy(), data.qvel.copy(), 100

    def score(sample: np.ndarray) -> tuple[float, float]:
        data.qpos[:], data.qvel[:], data.time = qpos0, qvel0, 0.0
        mujoco.mj_forward(model, data)
        nearest = math.inf
        for action in knot_actions(sample, steps):
            data.ctrl[:] = action
            mujoco.mj_step(model, data, nstep=5)
            nearest = min(nearest, math.dist(u._tip[:2].tolist(), u._puck.tolist()))
        final = math.dist(u._puck.tolist(), u._goal[:2].tolist())
        return final + 0.1 * nearest, final

    best_final, _ = cem(score, np.zeros((knots, 3)), np.full((knots, 3), 0.8), rng, candidates, rounds, elite)
    data.qpos[:], data.qvel[:] = qpos0, qvel0
    mujoco.mj_forward(model, data)
    return float(best_final)


# ------------------------------------------------------------------------------------------- ErgoPusher planner
def _ergo_snapshot(u: Any) -> Callable[[], None]:
    """A restore function for the env's whole episode state: physics, the servo effects' queue, the puck tracker."""
    import copy

    physics = u.sim.save()
    effects = copy.deepcopy((u._sim_to_real._pending, u._sim_to_real._effective))
    tracker = copy.deepcopy(u._tracker.__dict__)

    def restore() -> None:
        u.sim.restore(physics)
        u._sim_to_real._pending, u._sim_to_real._effective = copy.deepcopy(effects)
        u._tracker.__dict__.update(copy.deepcopy(tracker))
    return restore


def plan_ergo_pusher(env: Any, script: ErgoPusherScript, rng: np.random.Generator, steps: int,
                     candidates: int = 128, rounds: int = 16, knots: int = 11, elite: int = 12) -> float:
    """The best final puck-goal distance CEM finds from the env's current start state (see the module doc)."""
    return plan_ergo_pusher_actions(env, script, rng, steps, candidates, rounds, knots, elite)[0]


def plan_ergo_pusher_actions(env: Any, script: ErgoPusherScript, rng: np.random.Generator, steps: int,
                             candidates: int = 128, rounds: int = 16, knots: int = 11,
                             elite: int = 12) -> tuple[float, np.ndarray]:
    """``plan_ergo_pusher``'s distance and the ``(steps, 4)`` actions that reach it; the env is left at its start."""
    u = env.unwrapped
    restore = _ergo_snapshot(u)

    def rollout(actions: np.ndarray) -> tuple[float, float]:
        restore()
        nearest, info = math.inf, {}
        for action in actions:
            _, _, _, _, info = u.step(action)
            nearest = min(nearest, float(np.linalg.norm(u.tip_position[:2] - u.puck_position)))
        return float(info["final_distance"]), nearest

    script.env = u
    script.reset()
    scripted = []
    for _ in range(steps):  # the scripted controller's own episode: the search's starting point
        scripted.append(script.act())
        u.step(scripted[-1])
    scripted_actions = np.clip(np.array(scripted), -1, 1)
    mean = scripted_actions[np.round(np.arange(knots) / (knots - 1) * (steps - 1)).astype(int)]

    def score(sample: np.ndarray) -> tuple[float, float]:
        final, nearest = rollout(knot_actions(sample, steps))
        return final + 0.1 * nearest, final

    best_final, best = cem(score, mean, np.full_like(mean, 0.3), rng, candidates, rounds, elite, best=mean.copy())
    assert best is not None
    scripted_final, _ = rollout(scripted_actions)
    restore()
    if scripted_final <= best_final:
        return float(scripted_final), scripted_actions
    return float(best_final), knot_actions(best, steps)


# ------------------------------------------------------------------------------------------ ErgoPusher scripted push
class ErgoPusherScript:
    """The scripted privileged ErgoPusher controller (module doc); ``act()`` is the next action in [-1, 1]^4."""

    Z_PUSH, Z_HIGH = 0.011, 0.045  # tip height pushing / travelling (the puck is 2 cm tall)
    STEP = 0.02  # m: how far ahead of the tip a push target lies
    samples = 30000

    def __init__(self, env: Any, seed: int = 0) -> None:
        from scipy.spatial import cKDTree

        from adr_core.envs.ergo_pusher import ACTION_SCALE, ErgoPusherEnv

        self.env, self.scale = env.unwrapped, ACTION_SCALE
        self.kinematics = ErgoPusherEnv()  # a second world: forward kinematics without touching the episode's
        rng = np.random.default_rng(seed)
        self.bound = np.full(4, ACTION_SCALE)
        self.table_q = rng.uniform(-ACTION_SCALE, ACTION_SCALE, (self.samples, 4))
        self.tree = cKDTree(np.array([self._tip(q) for q in self.table_q]))
        self.reset()

    def reset(self) -> None:
        self.phase, self.q = "approach", None

    def _tip(self, q: np.ndarray) -> np.ndarray:
        sim = self.kinematics.sim
        sim.set_joint_angles(self.kinematics._actuated, q)
        return np.array(sim.end_effector_position())

    def _solve(self, target: np.ndarray) -> np.ndarray:
        from scipy.optimize import least_squares

        def fit(q0: np.ndarray) -> tuple[np.ndarray, float]:
            result = least_squares(lambda q: self._tip(q) - target, q0, bounds=(-self.bound, self.bound))
            return result.x, float(np.linalg.norm(result.fun))

        q, error = fit(self.q) if self.q is not None else (None, math.inf)
        if error > 0.003:
            for index in np.atleast_1d(self.tree.query(target, k=5)[1]):
                candidate, candidate_error = fit(self.table_q[index])
                if candidate_error < error:
                    q, error = candidate, candidate_error
        self.q = q
        assert q is not None
        return q

    def act(self) -> np.ndarray:
        from adr_core.envs.ergo_pusher import PUCK_RADIUS, puck_state

        env = self.env
        (px, py), (vx, vy) = puck_state(env.sim.client, env._puck)
        puck, goal, tip = np.array([px, py]), env.goal_position, env.tip_position
        gap = goal - puck
        distance = float(np.linalg.norm(gap))
        d = gap / max(distance, 1e-9)
        n = np.array([-d[1], d[0]])
        rel = tip[:2] - puck
        behind, lateral = float(rel @ d), float(rel @ n)
        approach = puck - d * (PUCK_RADIUS + 0.012)
        if distance < 0.005 or (self.phase == "done" and distance < 0.012):
            away = rel / max(float(np.linalg.norm(rel)), 1e-9)
            target, self.phase = np.array([*(puck + away * (PUCK_RADIUS + 0.03)), self.Z_HIGH]), "done"
        elif self.phase in ("approach", "done"):
            target, self.phase = np.array([*approach, self.Z_HIGH]), "approach"
            if np.linalg.norm(tip[:2] - approach) < 0.01:
                self.phase = "lower"
        elif self.phase == "lower":
            target = np.array([*approach, self.Z_PUSH])
            if tip[2] < self.Z_PUSH + 0.008:
                self.phase = "push"
        else:
            line = puck - d * (PUCK_RADIUS + 0.006)
            aim = line + d * max(0.0, float((tip[:2] - line) @ d))
            speed = max(0.0, vx * d[0] + vy * d[1])
            parameters = env.parameters  # friction (N) and damping (N*s/m) of the slide joints: privileged
            from adr_core.envs.ergo_pusher import PUCK_MASS

            a, k = parameters[0] / PUCK_MASS, parameters[1] / PUCK_MASS
            slide = speed / k - a / k ** 2 * math.log1p(k * speed / a) if a > 0 and k > 0 else math.inf
            ahead = -0.01 if slide >= distance - 0.002 else self.STEP  # let it slide to the goal: back off
            target = np.array([*(aim + d * ahead), self.Z_PUSH])
            if abs(lateral) > 0.6 * PUCK_RADIUS or behind > -0.6 * PUCK_RADIUS:
                self.phase = "approach"
        return self._solve(target) / self.scale

    def close(self) -> None:
        self.kinematics.close()


def record_demos(space: str | None, episodes: int, points: str, out: Path, seed: int = 0,
                 planner: tuple[int, int] | None = None) -> Path:
    """The ``demos`` command (module doc): returns the file written. ``planner``: (candidates, rounds) of the
    planner, whose best target sequence is then played and recorded, instead of the scripted controller."""
    from adr_core.agents.demonstrations import DemoEpisode, save_demonstrations

    env = make_env("adr/ErgoPusher-v0") if space is None else make_env("adr/ErgoPusher-v0", space=space)
    u = env.unwrapped
    space_ = u.randomization_space
    draws = space_.from_normalized(space_.sample_uniform(np.random.default_rng(seed), episodes))
    script, recorded, solved = ErgoPusherScript(env), [], 0
    plan_rng = np.random.default_rng(seed + 1)
    worst_gap = 0.0
    for index in range(episodes):
        if points == "uniform":
            u.set_parameters(draws[index])
        obs, _ = env.reset(seed=30000 + index)
        planned = None
        if planner is not None:
            steps = env_record("adr/ErgoPusher-v0").max_episode_steps
            planned_final, planned = plan_ergo_pusher_actions(env, script, plan_rng, steps, *planner)
        script.env = u
        script.reset()
        rows: dict[str, list[Any]] = {k: [] for k in ("obs", "actions", "next_obs", "rewards", "terminated")}
        info: dict[str, Any] = {}
        while True:
            act = script.act() if planned is None else planned[len(rows["actions"])]
            action = np.clip(act, -1.0, 1.0).astype(np.float32)
            played = action if planned is None else np.clip(act, -1.0, 1.0)  # a plan plays as it was searched
            next_obs, reward, terminated, truncated, info = env.step(played)
            for key, value in zip(rows, (obs, action, next_obs, reward, terminated)):
                rows[key].append(value)
            obs = next_obs
            if terminated or truncated:
                break
        if planned is not None:  # PyBullet's restore is not bit-exact once the puck is in contact: a played plan
            # can end millimetres from the search's distance; the episode kept is the one played
            worst_gap = max(worst_gap, abs(info["final_distance"] - planned_final))
        solved += bool(info["final_distance"] < env_record("adr/ErgoPusher-v0").solved.threshold)
        recorded.append(DemoEpisode(**{k: np.array(v) for k, v in rows.items()}))
    script.close()
    env.close()
    path = save_demonstrations(out, "adr/ErgoPusher-v0", recorded)
    source = "scripted" if planner is None else (f"planner {planner[0]}x{planner[1]}, played within "
                                                  f"{worst_gap * 1000:.1f} mm of the search's distances")
    print(f"{path}: {episodes} episodes ({points} points, {source}), {solved} solved", flush=True)
    return path


# ---------------------------------------------------------------------------------------------------- the episodes
def start_state(env: Any) -> tuple[float, float, float, float]:
    puck, goal = env.unwrapped.puck_position, env.unwrapped.goal_position
    return float(puck[0]), float(puck[1]), float(goal[0]), float(goal[1])


Final = Callable[[Any, np.ndarray], float]  # (env just reset, its first observation) -> final distance


def episode_rows(env_id: str, seeds: Sequence[int], final: Final, space: str | None = None) -> list[dict[str, float]]:
    env = make_env(env_id) if space is None else make_env(env_id, space=space)  # at the space's reference point
    rows = []
    for seed in seeds:
        obs, _ = env.reset(seed=int(seed))
        start = start_state(env)
        rows.append(dict(zip(FIELDS, (int(seed), *start, final(env, obs)))))
        print(" ".join(f"{k}={v:.4g}" for k, v in rows[-1].items()), flush=True)
    env.close()
    return rows


def run_policy(policy: Callable[[np.ndarray], np.ndarray]) -> Final:
    def final(env: Any, obs: np.ndarray) -> float:
        info: dict[str, float] = {}
        for _ in range(env_record(env.spec.id).max_episode_steps):
            obs, _, terminated, truncated, info = env.step(policy(obs))
            if terminated or truncated:
                break
        return float(info["final_distance"])
    return final


def write(rows: list[dict[str, float]], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    finals = np.array([r["final_distance"] for r in rows])
    print(f"{out}: {len(rows)} start states, final distance mean {finals.mean():.4f} m, median "
          f"{np.median(finals):.4f} m", flush=True)


def read(path: Path) -> list[dict[str, float]]:
    with path.open(newline="") as handle:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(handle)]


def figure(paths: Sequence[Path], out: Path, threshold: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(paths), figsize=(5.2 * len(paths), 5), squeeze=False)
    for ax, path in zip(axes[0], paths):
        rows = read(path)
        solved = sum(r["final_distance"] < threshold for r in rows)
        for r in rows:
            ok = r["final_distance"] < threshold
            ax.annotate("", xy=(r["goal_x"], r["goal_y"]), xytext=(r["puck_x"], r["puck_y"]),
                        arrowprops={"arrowstyle": "->", "color": "tab:green" if ok else "tab:red",
                                    "alpha": 0.35 if ok else 0.9, "lw": 0.8 if ok else 1.4})
        xs = [r[k] for r in rows for k in ("puck_x", "goal_x")]
        ys = [r[k] for r in rows for k in ("puck_y", "goal_y")]
        pad = 0.05 * (max(xs) - min(xs))
        ax.set_xlim(min(xs) - pad, max(xs) + pad)
        ax.set_ylim(min(ys) - pad, max(ys) + pad)
        ax.set_aspect("equal")
        ax.set_title(f"{path.stem}: {solved}/{len(rows)} solved (< {threshold:g} m)", fontsize=9)
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
    fig.suptitle("start states: puck start -> goal (green: solved, red: failed)", fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"figure: {out}")


def paths_figure(run: Path, seeds: Sequence[int], out: Path) -> None:
    """The tip's and the puck's paths of a policy's episodes from the given start states, one panel each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from adr_core.evaluation import load_policy

    trained = load_policy(run)
    policy, env = trained.policy(), make_env(trained.env_id)
    fig, axes = plt.subplots(1, len(seeds), figsize=(4.2 * len(seeds), 4.2), squeeze=False)
    for ax, seed in zip(axes[0], seeds):
        obs, _ = env.reset(seed=int(seed))
        u = env.unwrapped
        tips, pucks, info = [u.tip_position[:2].copy()], [u.puck_position.copy()], {}
        for _ in range(env_record(trained.env_id).max_episode_steps):
            obs, _, terminated, truncated, info = env.step(policy(obs))
            tips.append(u.tip_position[:2].copy())
            pucks.append(u.puck_position.copy())
            if terminated or truncated:
                break
        tip, puck, goal = np.array(tips), np.array(pucks), u.goal_position
        ax.plot(tip[:, 0], tip[:, 1], "-", color="tab:blue", lw=1, label="tip")
        ax.plot(puck[:, 0], puck[:, 1], "-", color="tab:red", lw=2, label="puck")
        ax.plot(*puck[0], "o", color="tab:red", mfc="none")
        ax.plot(*goal, "*", color="tab:green", ms=12, label="goal")
        ax.plot(*tip[0], "s", color="tab:blue", mfc="none")
        threshold = env_record(trained.env_id).solved.threshold
        ax.add_patch(plt.Circle(tuple(goal), threshold, color="tab:green", alpha=0.15))
        ax.set_aspect("equal")
        ax.set_title(f"start state {seed}: final {info['final_distance']:.3f} m", fontsize=9)
        ax.legend(fontsize=7, loc="lower left")
    env.close()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"figure: {out}")


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("planner", "scripted", "policy"):
        p = sub.add_parser(name)
        p.add_argument("--seeds", type=int, nargs=2, metavar=("FIRST", "END"), required=True,
                       help="start states FIRST .. END-1")
        p.add_argument("--out", type=Path, required=True)
        if name == "policy":
            p.add_argument("--run", type=Path, required=True, help="run directory (or checkpoint) of the policy")
        else:
            p.add_argument("--env", default="adr/Pusher3DOF-v0" if name == "planner" else "adr/ErgoPusher-v0")
        if name == "planner":
            p.add_argument("--steps", type=int, default=None, help="ErgoPusher: episode length (default: the env's)")
        if name in ("scripted", "planner"):
            p.add_argument("--space", default=None, help="a space YAML (e.g. adr-identify's identified.yaml): the "
                                                         "episodes run at its reference point (the arm's servos)")
    p = sub.add_parser("demos")
    p.add_argument("--space", default=None, help="a space YAML or name (default: the env's own)")
    p.add_argument("--episodes", type=int, required=True)
    p.add_argument("--points", choices=("uniform", "reference"), default="uniform")
    p.add_argument("--seed", type=int, default=0, help="of the uniform draws")
    p.add_argument("--planner", type=int, nargs=2, metavar=("CANDIDATES", "ROUNDS"), default=None,
                   help="record the planner's best target sequences (this search budget) instead of the scripted "
                        "controller's actions")
    p.add_argument("--out", type=Path, required=True, help="the .npz to write")
    p = sub.add_parser("paths")
    p.add_argument("--run", type=Path, required=True)
    p.add_argument("--seeds", type=int, nargs="+", required=True)
    p.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("figure")
    p.add_argument("csv", type=Path, nargs="+")
    p.add_argument("--threshold", type=float, required=True)
    p.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "figure":
        figure(args.csv, args.out, args.threshold)
        return 0
    if args.command == "demos":
        if args.episodes < 1:
            parser.error("demos: --episodes must be >= 1")
        if args.planner is not None and min(args.planner) < 1:
            parser.error("demos: --planner CANDIDATES ROUNDS must be >= 1")
        record_demos(args.space, args.episodes, args.points, args.out, args.seed,
                     None if args.planner is None else (args.planner[0], args.planner[1]))
        return 0
    if args.command == "paths":
        paths_figure(args.run, args.seeds, args.out)
        return 0
    seeds = range(*args.seeds)
    if args.command == "planner" and args.env == "adr/ErgoPusher-v0":
        rng = np.random.default_rng(123)
        steps = args.steps or env_record(args.env).max_episode_steps
        planners: dict[str, ErgoPusherScript] = {}

        def planned_final(env: Any, obs: np.ndarray) -> float:
            return plan_ergo_pusher(env, planners.setdefault("script", ErgoPusherScript(env)), rng, steps)

        rows = episode_rows(args.env, seeds, planned_final, args.space)
    elif args.command == "planner":
        if args.env != "adr/Pusher3DOF-v0" or args.space is not None or args.steps is not None:
            parser.error("planner: adr/Pusher3DOF-v0 (no --space, --steps) or adr/ErgoPusher-v0")
        rng = np.random.default_rng(123)
        rows = episode_rows(args.env, seeds, lambda env, _: plan_pusher3dof(env, rng))
    elif args.command == "scripted":
        if args.env != "adr/ErgoPusher-v0":
            parser.error("scripted: only adr/ErgoPusher-v0")
        holder: dict[str, ErgoPusherScript] = {}

        def scripted_final(env: Any, obs: np.ndarray) -> float:
            script = holder.setdefault("script", ErgoPusherScript(env))
            script.env = env.unwrapped
            script.reset()
            return run_policy(lambda _obs: script.act())(env, obs)

        rows = episode_rows(args.env, seeds, scripted_final, args.space)
    else:
        from adr_core.evaluation import load_policy

        trained = load_policy(args.run)
        rows = episode_rows(trained.env_id, seeds, run_policy(trained.policy()))
    write(rows, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
