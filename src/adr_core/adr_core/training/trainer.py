"""The in-process runner of Algorithm 1 (Active Domain Randomization): builds the pieces, logs, checkpoints.

The loop is the engine every runner holds (``adr_core.engine.loop.Engine``) with the steps carried out in this
process (``adr_core.engine.local_steps.LocalSteps``); the policy of iteration k is the agent's actor at the end of
k-1. The run stops at the first iteration boundary at which the agent has taken ``total_agent_steps`` steps; the last
iteration stores only what the budget has left (``update_agent``), so it ends at the budget exactly.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .. import run_dir
from ..agents import ActorPolicy, OffPolicyAgent, make_agent
from ..base.checkpoint import (
    CheckpointError,
    CheckpointSchedule,
    global_rng_state,
    load_checkpoint,
    require_keys,
    save_checkpoint,
    set_global_rng_state,
)
from ..base.devices import DeviceError, configure_torch, resolve_device
from ..base.seeding import component_seed
from ..engine.hooks import CheckpointHook, Hook, ProgressHook
from ..engine.local_steps import LocalSteps
from ..engine.loop import Engine
from ..iteration import Components, IterationResult, RolloutSettings
from ..samplers import Sampler
from .components import build_run_parts
from .config import ConfigError, TrainConfig
from .run_hooks import standard_hooks

CONFIG_FILE, CHECKPOINT_DIR, LATEST = run_dir.CONFIG_FILE, run_dir.CHECKPOINTS, run_dir.IN_PROCESS_LATEST

class Trainer:
    """Builds the pieces from a ``TrainConfig`` and runs Algorithm 1 in this process: it holds the engine
    (``engine``) with ``LocalSteps``, and saves and loads the run's checkpoints. ``out_dir=None``: no files, no logs.
    ``stop_requested.set()`` (e.g. from a Ctrl-C handler) ends ``run`` at the next iteration boundary."""

    def __init__(self, config: TrainConfig, out_dir: str | Path | None = None, *, resume: bool = False,
                 bootstrap_from: str | Path | None = None) -> None:
        if resume and bootstrap_from is not None:
            raise ConfigError("--resume continues a run; --bootstrap starts a new one: choose one")
        if resume and out_dir is None:
            raise ConfigError("resuming needs the run's output directory")
        self.config = config
        self.out_dir = None if out_dir is None else Path(out_dir)
        try:
            self.device = resolve_device(config.device)
        except DeviceError as error:
            raise ConfigError(str(error)) from None
        configure_torch(config.torch_threads, config.flush_denormals)

        parts = build_run_parts(config, self.device)  # envs, sampler, discriminator (components.py)
        self.randomized_env, self.reference_env, self.space = parts.randomized_env, parts.reference_env, parts.space
        self.obs_dim, self.act_dim = parts.obs_dim, parts.act_dim
        self.sampler: Sampler = parts.sampler
        self.discriminator = parts.discriminator
        self.agent: OffPolicyAgent = make_agent(config.agent, self.obs_dim, self.act_dim,
                                                component_seed(config.seed, "agent"), self.device, config.goal_layout)
        self._learner_pool = (ThreadPoolExecutor(1, thread_name_prefix="adr-discriminator")
                              if config.concurrent_learning else None)
        self.engine = Engine(self.agent, config, LocalSteps(self.components(), self._current_policy))
        self.schedule = CheckpointSchedule(config.checkpoint_every, config.checkpoint_every_s)

        if resume:
            self.load_checkpoint(self.checkpoint_dir / LATEST)
        elif bootstrap_from is not None:
            self.bootstrap(bootstrap_from)

    # ------------------------------------------------------------------ one iteration
    def components(self) -> Components:
        return Components(space=self.space, sampler=self.sampler, discriminator=self.discriminator,
                          randomized_env=self.randomized_env, reference_env=self.reference_env,
                          rollouts=RolloutSettings(self.config.seed, self.config.agent.exploration_noise,
                                                   self.config.reference_noise, self.config.rollout_max_steps),
                          agent=self.agent, budget=self.config.total_agent_steps,
                          learn_from_reference=self.config.learn_from_reference, learner_pool=self._learner_pool)

    def run_iteration(self) -> IterationResult:
        """One iteration (``Engine.run_one``) outside ``run``: no files, no checkpoints; its result."""
        result = self.engine.run_one()
        assert result is not None  # in this process the feedback always comes
        return result

    def _current_policy(self) -> tuple[ActorPolicy, int]:
        """The rollouts' policy: the agent's actor now, and its version."""
        return ActorPolicy.from_state_dict(self.agent.actor_state_dict()), self.agent.policy_version

    # ------------------------------------------------------------------ the engine's state
    @property
    def iteration(self) -> int:
        """Iterations completed."""
        return self.engine.iteration

    @property
    def wall_time(self) -> float:
        """Training seconds so far."""
        return self.engine.wall_time

    @property
    def agent_steps(self) -> int:
        return self.engine.agent_steps

    @property
    def solved(self) -> bool:
        """The early-stop rule was met."""
        return self.engine.solved

    @property
    def done(self) -> bool:
        """The early stop was met, or the agent has taken its budget of steps."""
        return self.engine.done

    @property
    def stop_requested(self) -> threading.Event:
        """Set it (e.g. from a Ctrl-C handler) to end ``run`` at the next iteration boundary."""
        return self.engine.stop_requested

    # ------------------------------------------------------------------ the loop
    @property
    def checkpoint_dir(self) -> Path:
        if self.out_dir is None:
            raise ConfigError("this trainer has no output directory")
        return self.out_dir / CHECKPOINT_DIR

    def run_hooks(self) -> list[Hook]:
        """The bookkeeping of ``run`` (the engine's hooks): the standard hooks (early stop, files, learning curve)
        with this run's checkpoints after its files, then a progress bar."""
        cfg = self.config
        checkpoints = ([] if self.out_dir is None else
                       [CheckpointHook(lambda name: self._save_named(name), self.schedule, LATEST,
                                       cfg.keep_checkpoint_every, run_dir.snapshot_file)])
        standard = standard_hooks(cfg, self.out_dir, self.iteration, self.agent_steps, self.space.names,
                                  after_log=checkpoints, identity=self._identity())
        return [*standard.hooks,
                ProgressHook(cfg.total_agent_steps, f"{cfg.sampler} {cfg.env_id}", cfg.progress)]

    def run(self, max_iterations: int | None = None, hooks: Sequence[Hook] | None = None) -> list[dict[str, Any]]:
        """Iterate until the budget, the early stop, ``stop_requested`` or ``max_iterations`` more iterations;
        returns the metric rows. ``hooks``: the run's bookkeeping (default ``run_hooks()``: files, checkpoints,
        progress; e.g. a search passes its own early stop and curve, and writes no files)."""
        self.engine.start(self.run_hooks() if hooks is None else hooks)
        return self.engine.run(max_iterations)

    def _save_named(self, name: str) -> None:
        self.save_checkpoint(self.checkpoint_dir / name)

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "agent_steps": self.agent_steps, "wall_time": self.wall_time,
                "config": self.config.to_dict(), **self._identity(), "sampler_kind": self.config.sampler,
                "agent": self.agent.state_dict(), "sampler": self.sampler.state_dict(),
                "discriminator": self.discriminator.state_dict(), "rng": global_rng_state()}

    def save_checkpoint(self, path: str | Path) -> Path:
        return save_checkpoint(path, self.state_dict())

    def load_checkpoint(self, path: str | Path) -> None:
        """Continue the run saved at ``path``; the config must match except for runtime fields."""
        payload = self._read_compatible(path, ("iteration", "config", "agent", "sampler", "discriminator", "rng"))
        run_dir.check_config(payload["config"], self.config, path)
        try:
            self.agent.load_state_dict(payload["agent"])
            self.sampler.load_state_dict(payload["sampler"])
            self.discriminator.load_state_dict(payload["discriminator"])
        except (KeyError, ValueError, RuntimeError) as exc:
            raise CheckpointError(f"{path} does not fit this run: {exc}") from None
        set_global_rng_state(payload["rng"])
        self.engine.iteration, self.engine.wall_time = int(payload["iteration"]), float(payload["wall_time"])

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

    def _identity(self) -> dict[str, Any]:
        return run_dir.run_identity(self.config.env_id, self.space.to_dict(), self.obs_dim, self.act_dim)

    def _read_compatible(self, path: str | Path, keys: tuple[str, ...]) -> dict[str, Any]:
        payload = load_checkpoint(path, map_location="cpu")
        require_keys(payload, (*run_dir.IDENTITY_KEYS, "sampler_kind", *keys), path)
        run_dir.check_identity(payload, self._identity(), path)
        return payload
