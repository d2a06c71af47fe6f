"""Algorithm 1 (Active Domain Randomization) in one process, as a loop over reusable steps.

One iteration k (policy weights fixed during the rollouts: those at the end of iteration k-1)::

    proposals  = sampler.propose()                                   (n, d) normalized
    parameters = space.from_normalized(proposals)                    (n, d) physical
    policy     = ActorPolicy.from_state_dict(agent.actor_state_dict())
    for slot:  randomized[slot] = rollout(randomized env, policy, parameters[slot], kind="randomized", ...)
               reference[slot]  = rollout(reference env, policy, reference params, kind="reference", ...)  (ADR only)
    rewards    = discriminator.score(randomized)                     before the discriminator sees them
    agent.store(randomized[slot]) for slot in order; agent.update(agent.updates_due())
    sampler.update(rewards)                                          SVPG, eq. (2)
    discriminator.train(randomized, reference)

The run stops at the first iteration boundary at which the agent has taken ``total_agent_steps`` steps.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..agents import ActorPolicy, OffPolicyAgent, make_agent
from ..discriminator import DiscriminatorRewarder
from ..envs import make_env
from ..rollout import Trajectory, rollout
from ..samplers import Sampler, make_sampler
from .checkpoint import (CheckpointError, global_rng_state, load_checkpoint, require_keys, save_checkpoint,
                         set_global_rng_state)
from .config import ConfigError, TrainConfig
from .run_log import RunLog
from .seeding import component_seed

CONFIG_FILE = "config.yaml"
CHECKPOINT_DIR = "checkpoints"
LATEST = "latest.pt"

METRIC_COLUMNS = (
    "iteration", "agent_steps", "agent_updates", "wall_time_s", "episodes",
    "return_mean", "return_min", "return_max", "length_mean", "solved_fraction", "final_distance_mean",
    "reference_return_mean", "reference_solved_fraction", "reference_final_distance_mean",
    "sampler_reward_mean", "sampler_reward_std", "d_randomized", "d_reference",
    "critic_loss", "actor_loss", "n_updates", "discriminator_loss", "discriminator_steps",
    "svpg_value_loss", "svpg_objective", "svpg_bandwidth", "svpg_kernel_mean", "svpg_log_std",
    "time_rollouts_s", "time_score_s", "time_agent_s", "time_sampler_s", "time_discriminator_s", "time_iteration_s",
    "time_transport_s",  # graph runs: summed publish -> receive time of the iteration's randomized trajectories
)


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device {name!r} asked for, but torch sees no CUDA device (use 'cpu' or 'auto')")
    return torch.device(name)


def periodic_evaluation(config: TrainConfig, out_dir: Path, start_iteration: int):
    """The learning-curve hook (reference and 'hard' settings) both trainers call after each iteration, or None."""
    if not config.evaluate_every and not config.evaluate_every_steps:
        return None
    from ..evaluation.periodic import PeriodicEvaluation

    return PeriodicEvaluation(out_dir, config.env_id, every=config.evaluate_every,
                              every_steps=config.evaluate_every_steps, settings=list(config.evaluate_settings),
                              episodes=config.evaluate_episodes, max_episode_steps=config.max_episode_steps,
                              start_iteration=start_iteration)


def _mean(values: list[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return float(np.mean(finite)) if finite else float("nan")


@dataclass
class IterationResult:
    iteration: int
    proposals: np.ndarray  # (n, d) normalized
    parameters: np.ndarray  # (n, d) physical
    policy_version: int
    randomized: list[Trajectory]
    reference: list[Trajectory]
    rewards: np.ndarray | None  # discriminator rewards (scored before training); None for non-learning samplers
    n_updates: int
    agent_losses: dict[str, float]
    sampler_metrics: dict[str, float]
    discriminator_metrics: dict[str, float]
    timings: dict[str, float] = field(default_factory=dict)

    def metrics(self) -> dict[str, Any]:
        rand, ref = self.randomized, self.reference
        rewards = self.rewards if self.rewards is not None else np.array([])
        nan = float("nan")
        return {
            "iteration": self.iteration, "episodes": len(rand),
            "return_mean": _mean([t.episode_return for t in rand]),
            "return_min": min((t.episode_return for t in rand), default=nan),
            "return_max": max((t.episode_return for t in rand), default=nan),
            "length_mean": _mean([float(t.length) for t in rand]),
            "solved_fraction": _mean([float(t.solved) for t in rand]),
            "final_distance_mean": _mean([t.final_distance for t in rand]),
            "reference_return_mean": _mean([t.episode_return for t in ref]),
            "reference_solved_fraction": _mean([float(t.solved) for t in ref]),
            "reference_final_distance_mean": _mean([t.final_distance for t in ref]),
            "sampler_reward_mean": float(rewards.mean()) if rewards.size else nan,
            "sampler_reward_std": float(rewards.std()) if rewards.size else nan,
            "n_updates": self.n_updates, **self.agent_losses, **self.sampler_metrics, **self.discriminator_metrics,
            **self.timings,
        }


class Trainer:
    """Builds the pieces from a ``TrainConfig`` and runs Algorithm 1. ``out_dir=None``: no files, no logs."""

    def __init__(self, config: TrainConfig, out_dir: str | Path | None = None, *, resume: bool = False,
                 bootstrap_from: str | Path | None = None) -> None:
        if resume and bootstrap_from is not None:
            raise ConfigError("--resume continues a run; --bootstrap starts a new one: choose one")
        if resume and out_dir is None:
            raise ConfigError("resuming needs the run's output directory")
        self.config = config
        self.out_dir = None if out_dir is None else Path(out_dir)
        self.device = resolve_device(config.device)
        if config.torch_threads:
            torch.set_num_threads(config.torch_threads)

        env_kwargs = {} if config.max_episode_steps is None else {"max_episode_steps": config.max_episode_steps}
        self.randomized_env = make_env(config.env_id, **env_kwargs)
        self.reference_env = make_env(config.env_id, **env_kwargs)
        self.space = self.randomized_env.unwrapped.randomization_space
        self.obs_dim = int(np.prod(self.randomized_env.observation_space.shape))
        self.act_dim = int(np.prod(self.randomized_env.action_space.shape))

        seed = config.seed
        self.agent: OffPolicyAgent = make_agent(config.agent, self.obs_dim, self.act_dim,
                                                component_seed(seed, "agent"), self.device)
        self.sampler: Sampler = make_sampler(config.sampler, self.space, config.resolved_svpg(),
                                             component_seed(seed, "sampler"), config.fixed_range)
        self.discriminator = DiscriminatorRewarder(self.obs_dim, self.act_dim, config.discriminator,
                                                   component_seed(seed, "discriminator"), self.device)
        self.iteration = 0
        self.wall_time = 0.0
        self.stop_requested = False  # set (e.g. by a Ctrl-C handler) to end ``run`` at the next iteration boundary

        if resume:
            self.load_checkpoint(self.checkpoint_dir / LATEST)
        elif bootstrap_from is not None:
            self.bootstrap(bootstrap_from)
        self.log: RunLog | None = None

    # ------------------------------------------------------------------ the steps of one iteration
    def propose(self) -> tuple[np.ndarray, np.ndarray]:
        proposals = self.sampler.propose()
        return proposals, self.space.from_normalized(proposals)

    def collect(self, proposals: np.ndarray, parameters: np.ndarray, weights: dict[str, torch.Tensor],
                policy_version: int) -> tuple[list[Trajectory], list[Trajectory]]:
        """Randomized rollouts (and, for ADR, paired reference rollouts) of the policy given by ``weights``."""
        policy = ActorPolicy.from_state_dict(weights)
        common = dict(iteration=self.iteration, run_seed=self.config.seed, policy_version=policy_version)
        randomized, reference = [], []
        for slot in range(len(proposals)):
            randomized.append(rollout(self.randomized_env, policy, params=parameters[slot],
                                      params_normalized=proposals[slot], kind="randomized", slot=slot,
                                      exploration_noise=self.config.agent.exploration_noise, **common))
            if self.sampler.learns_from_rewards:
                reference.append(rollout(self.reference_env, policy, params=self.space.reference(),
                                         params_normalized=self.space.reference_normalized(), kind="reference",
                                         slot=slot, exploration_noise=self.config.reference_noise, **common))
        return randomized, reference

    def train_agent(self, randomized: list[Trajectory]) -> tuple[int, dict[str, float]]:
        for trajectory in randomized:  # slot order
            self.agent.store(trajectory)
        n_updates = self.agent.updates_due()
        return n_updates, self.agent.update(n_updates, progress=self.agent_steps / self.config.total_agent_steps)

    def run_iteration(self) -> IterationResult:
        clock = time.perf_counter
        t0 = clock()
        proposals, parameters = self.propose()
        version = self.agent.policy_version
        randomized, reference = self.collect(proposals, parameters, self.agent.actor_state_dict(), version)
        t1 = clock()
        learns = self.sampler.learns_from_rewards
        rewards = self.discriminator.score(randomized) if learns else None
        d_scores = ({"d_randomized": self.discriminator.mean_probability(randomized),
                     "d_reference": self.discriminator.mean_probability(reference)} if learns else {})
        t2 = clock()
        n_updates, agent_losses = self.train_agent(randomized)
        t3 = clock()
        sampler_metrics = self.sampler.update(rewards) if learns else {}
        t4 = clock()
        discriminator_metrics = {}
        if learns:
            steps = self.discriminator.steps_for(randomized)
            discriminator_metrics = {**self.discriminator.train(randomized, reference, steps),
                                     "discriminator_steps": steps, **d_scores}
        t5 = clock()
        result = IterationResult(
            iteration=self.iteration, proposals=proposals, parameters=parameters, policy_version=version,
            randomized=randomized, reference=reference, rewards=rewards, n_updates=n_updates,
            agent_losses=agent_losses, sampler_metrics=sampler_metrics, discriminator_metrics=discriminator_metrics,
            timings={"time_rollouts_s": t1 - t0, "time_score_s": t2 - t1, "time_agent_s": t3 - t2,
                     "time_sampler_s": t4 - t3, "time_discriminator_s": t5 - t4, "time_iteration_s": t5 - t0})
        self.iteration += 1
        self.wall_time += t5 - t0
        return result

    # ------------------------------------------------------------------ the loop
    @property
    def agent_steps(self) -> int:
        return self.agent.transitions_seen

    @property
    def done(self) -> bool:
        return self.agent_steps >= self.config.total_agent_steps

    @property
    def checkpoint_dir(self) -> Path:
        if self.out_dir is None:
            raise ConfigError("this trainer has no output directory")
        return self.out_dir / CHECKPOINT_DIR

    def run(self, max_iterations: int | None = None) -> list[dict[str, Any]]:
        """Iterate until the budget (or ``max_iterations`` more iterations); returns the metric rows."""
        from tqdm.auto import tqdm

        cfg = self.config
        evaluation = None
        if self.out_dir is not None:
            self._open_log()
            evaluation = periodic_evaluation(cfg, self.out_dir, self.iteration)
        rows = []
        bar = tqdm(total=cfg.total_agent_steps, initial=min(self.agent_steps, cfg.total_agent_steps), unit="step",
                   desc=f"{cfg.sampler} {cfg.env_id}", disable=not cfg.progress, dynamic_ncols=True)
        try:
            while not self.done and not self.stop_requested and (max_iterations is None or len(rows) < max_iterations):
                before = self.agent_steps
                result = self.run_iteration()
                row = {**result.metrics(), "agent_steps": self.agent_steps, "agent_updates": self.agent.updates_done,
                       "wall_time_s": self.wall_time}
                rows.append(row)
                if self.log is not None:
                    self.log.log_iteration(row)
                    self.log.log_samples(result.iteration, result.proposals, result.parameters)
                    self._periodic_checkpoints()
                if evaluation is not None:
                    evaluation.maybe_run(self.iteration, self.agent_steps, self.agent.actor_state_dict(),
                                         self.wall_time)
                bar.update(min(self.agent_steps, cfg.total_agent_steps) - min(before, cfg.total_agent_steps))
                bar.set_postfix_str(self._postfix(row), refresh=False)
            if self.out_dir is not None and rows and self.iteration % cfg.checkpoint_every != 0:
                self.save_checkpoint(self.checkpoint_dir / LATEST)
        finally:
            bar.close()
            if self.log is not None:
                self.log.close()
                self.log = None
        return rows

    def _open_log(self) -> None:
        assert self.out_dir is not None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.config.to_yaml(self.out_dir / CONFIG_FILE)
        self.log = RunLog(self.out_dir, METRIC_COLUMNS, self.space.names, tensorboard=self.config.tensorboard,
                          start_iteration=self.iteration)

    def _periodic_checkpoints(self) -> None:
        cfg = self.config
        if self.iteration % cfg.checkpoint_every == 0:
            self.save_checkpoint(self.checkpoint_dir / LATEST)
        if cfg.keep_checkpoint_every and self.iteration % cfg.keep_checkpoint_every == 0:
            self.save_checkpoint(self.checkpoint_dir / f"iter_{self.iteration:06d}.pt")

    @staticmethod
    def _postfix(row: dict[str, Any]) -> str:
        parts = [f"it {row['iteration']}", f"ret {row['return_mean']:.1f}"]
        for key, label in (("reference_return_mean", "ref"), ("sampler_reward_mean", "rD"),
                           ("discriminator_loss", "LD"), ("critic_loss", "LQ")):
            value = row.get(key, float("nan"))
            if not math.isnan(value):
                parts.append(f"{label} {value:.3g}")
        return " ".join(parts)

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "agent_steps": self.agent_steps, "wall_time": self.wall_time,
                "config": self.config.to_dict(), "env_id": self.config.env_id, "space": self.space.to_dict(),
                "obs_dim": self.obs_dim, "act_dim": self.act_dim, "sampler_kind": self.config.sampler,
                "agent": self.agent.state_dict(), "sampler": self.sampler.state_dict(),
                "discriminator": self.discriminator.state_dict(), "rng": global_rng_state()}

    def save_checkpoint(self, path: str | Path) -> Path:
        return save_checkpoint(path, self.state_dict())

    def load_checkpoint(self, path: str | Path) -> None:
        """Continue the run saved at ``path``; the config must match except for runtime fields."""
        payload = self._read_compatible(path, ("iteration", "config", "agent", "sampler", "discriminator", "rng"))
        saved = TrainConfig.from_dict(payload["config"])
        differences = self.config.differences(saved, ignore=TrainConfig.RUNTIME_FIELDS)
        if differences:
            raise CheckpointError(f"{path} was written with a different config; differing keys: {differences}")
        try:
            self.agent.load_state_dict(payload["agent"])
            self.sampler.load_state_dict(payload["sampler"])
            self.discriminator.load_state_dict(payload["discriminator"])
        except (KeyError, ValueError, RuntimeError) as exc:
            raise CheckpointError(f"{path} does not fit this run: {exc}") from None
        set_global_rng_state(payload["rng"])
        self.iteration, self.wall_time = int(payload["iteration"]), float(payload["wall_time"])

    def bootstrap(self, path: str | Path) -> None:
        """Paper appendix 'Bootstrapping Training of New Agents': reuse a run's sampler and discriminator."""
        payload = self._read_compatible(path, ("sampler", "discriminator"))
        if payload["sampler_kind"] != self.config.sampler:
            raise CheckpointError(f"{path} holds a {payload['sampler_kind']!r} sampler, this run uses "
                                  f"{self.config.sampler!r}")
        try:
            self.sampler.load_state_dict(payload["sampler"])
            self.discriminator.load_state_dict(payload["discriminator"])
        except (KeyError, ValueError, RuntimeError) as exc:
            raise CheckpointError(f"{path} does not fit this run: {exc}") from None

    def _read_compatible(self, path: str | Path, keys: tuple[str, ...]) -> dict[str, Any]:
        payload = load_checkpoint(path, map_location="cpu")
        require_keys(payload, ("env_id", "space", "obs_dim", "act_dim", "sampler_kind", *keys), path)
        found = (payload["env_id"], payload["obs_dim"], payload["act_dim"])
        if found != (self.config.env_id, self.obs_dim, self.act_dim):
            raise CheckpointError(f"{path} is for (env, obs_dim, act_dim) = {found}, this run is "
                                  f"{(self.config.env_id, self.obs_dim, self.act_dim)}")
        if payload["space"] != self.space.to_dict():
            raise CheckpointError(f"{path} was trained on a different randomization space of {payload['env_id']}")
        return payload
