"""ADR for any learner: the sampler's side of Algorithm 1 as one object, independent of how the agent learns.

    loop = ADRLoop.from_config(TrainConfig(env_id="adr/LunarLander-v0", sampler="adr", seed=0))
    env = ADRWrapper(make_env("adr/LunarLander-v0"), loop)    # adr_core.wrappers: sets and records every episode
    ... the learner steps ``env`` as it likes ...
    if loop.ready:                                            # every slot of the batch has a finished episode
        loop.update(policy)                                   # reference episodes with the learner's policy, then
                                                              # the discriminator's rewards and the particles' step

Each batch is one iteration of Algorithm 1: the sampler proposes ``n`` settings (ADR: one per particle); the
learner's episodes are handed out the settings slot by slot (``next_setting``), and the finished episodes come
back (``observe``); once every slot has one, ``update`` runs the iteration through the engine every runner uses
(``engine.loop.Engine``, with no agent: the learner learns outside it) with the learner-driven executor
(``LearnerDrivenSteps``): its rollouts are the learner's episodes plus one reference episode per slot with the policy
``update`` is given; the discriminator scores the randomized episodes before training on them, and the particles
take their step (``adr_core.iteration``'s steps). Episodes that start while a batch waits for its update (vectorized
envs) are given the batch's settings again, round robin; they train the learner but are not scored. Non-learning
samplers (UDR, baseline, fixed range) need no reference episodes and no policy.

``state_dict`` / ``load_state_dict`` save and restore the sampler, the discriminator, the iteration and the current
batch's settings; episodes of an unfinished batch are not saved: after a restore the batch is collected again from
its first slot, with the same settings.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .base.seeding import component_seed
from .discriminator import DiscriminatorRewarder
from .engine.loop import Engine
from .iteration import Feedback, Proposals, Rollouts, propose, sampler_rewards, score_then_train, update_sampler
from .randomization import RandomizationSpace
from .rollout import Policy, Trajectory, rollout
from .samplers import feedback_path
from .training.config import TrainConfig

LOOP_FORMAT = 1
NO_UPDATE_WARNING = 3  # batches' worth of episodes on a complete batch before warning that update() is never called


class ADRError(ValueError):
    """A learner, env or state that does not fit the loop; the message says what and why."""


@dataclass(frozen=True)
class Setting:
    """The simulator setting of one episode: the batch's ``slot``, in both coordinates."""

    iteration: int
    slot: int
    normalized: np.ndarray
    physical: np.ndarray
    scored: bool  # False: an extra episode while the batch waits for its update (not scored)


@dataclass(frozen=True)
class LoopState:
    """What the loop is doing now (``ADRLoop.state``): read-only numbers for logs and dashboards."""

    iteration: int  # batches completed (= ``update`` calls)
    slots: int  # settings per batch (ADR: one per particle)
    episodes_collected: int  # finished, scored episodes of the open batch
    episodes_handed_out: int  # settings handed out from the open batch (extra ones included)
    ready: bool  # the open batch is complete: call ``update``
    sampler: str  # adr, udr, baseline, fixed


class ADRLoop:
    """The sampler's side of ADR's Algorithm 1 around any learner (module docstring: the whole loop in 6 lines).

    Build it from a config (``ADRLoop(TrainConfig(env_id=..., sampler="adr", seed=0))``, or just an env id:
    ``ADRLoop("adr/ErgoReacher-v0")``); the randomization space and the observation/action sizes are read from the
    env unless given. Knobs users change: ``config.svpg.num_particles`` (settings per batch, the paper's 10/15 by
    default), ``config.sampler`` (``adr``, ``udr``, ``baseline``, ``fixed`` + ``fixed_range``),
    ``config.discriminator.*`` and ``config.seed``. Read-only views: ``proposals`` (the open batch's settings) and
    ``state`` (iteration, slots, episodes collected). ``save``/``load`` continue a run from a file."""

    def __init__(self, config: TrainConfig | str, space: RandomizationSpace | None = None,
                 obs_dim: int | None = None, act_dim: int | None = None) -> None:
        from .envs import make_env

        if isinstance(config, str):
            config = TrainConfig(env_id=config)
        if not isinstance(config, TrainConfig):
            raise ADRError(f"ADRLoop needs a TrainConfig or an env id such as 'adr/LunarLander-v0', got "
                           f"{type(config).__name__}")
        if space is None or obs_dim is None or act_dim is None:
            from .run_spec import RunSpec

            spec = RunSpec.resolve(config)
            space = spec.randomization_space() if space is None else space
            obs_dim = spec.obs_dim if obs_dim is None else obs_dim
            act_dim = spec.act_dim if act_dim is None else act_dim
        self.config, self.space = config, space
        self.obs_dim, self.act_dim = int(obs_dim), int(act_dim)
        seed = config.seed
        self.sampler = config.make_sampler(space, component_seed(seed, "sampler"))
        self.learns = feedback_path(self.sampler) == "discriminator"  # reference episodes, a discriminator
        self.discriminator = (DiscriminatorRewarder(obs_dim, act_dim, config.discriminator,
                                                    component_seed(seed, "discriminator")) if self.learns else None)
        env_kwargs = config.env_kwargs()
        self.reference_env = make_env(config.env_id, **env_kwargs) if self.learns else None
        self._steps = LearnerDrivenSteps(self)
        self._engine = Engine(None, config, self._steps)
        self._batch: Proposals | None = None
        self._handed_out = 0
        self._episodes: dict[int, Trajectory] = {}
        self._warned_no_update = False

    def __getstate__(self) -> dict[str, Any]:
        # A copy in another process (SubprocVecEnv pickles each env with its wrapper) would learn nothing: its particles
        # and discriminator never come back. Refused loudly rather than running uniform-but-silent ADR.
        raise ADRError("an ADRLoop cannot be copied into another process (SubprocVecEnv, multiprocessing): the copy's "
                       "particles and discriminator would never update the original. Use DummyVecEnv (the wrappers "
                       "share the loop in this process); the envs' simulation is rarely the bottleneck of ADR")

    @classmethod
    def from_config(cls, config: TrainConfig) -> ADRLoop:
        """A loop for ``config.env_id`` (an ``adr/*`` env): its space and shapes are read from the env (the same as
        ``ADRLoop(config)``)."""
        return cls(config)

    # ------------------------------------------------------------------ the batch
    @property
    def iteration(self) -> int:
        """Batches completed (``update`` calls): the engine's iteration counter."""
        return self._engine.iteration

    @iteration.setter
    def iteration(self, value: int) -> None:
        self._engine.iteration = value

    @property
    def slots(self) -> int:
        """Settings per batch (ADR: the number of SVPG particles)."""
        return self.sampler.num_proposals

    @property
    def proposals(self) -> np.ndarray | None:
        """The open batch's settings, physical values, shape (slots, dims) in ``space.names`` order (a copy); None
        before the first ``next_setting`` of a batch."""
        return None if self._batch is None else self._batch.physical.copy()

    @property
    def state(self) -> LoopState:
        """Where the loop stands (iteration, slots, episodes collected and handed out, ready)."""
        return LoopState(self.iteration, self.slots, len(self._episodes), self._handed_out, self.ready,
                         self.config.sampler)

    def next_setting(self) -> Setting:
        """The setting of the next episode (a new batch is proposed when none is open)."""
        if self._batch is None:
            self._batch = propose(self.sampler, self.space)
            self._handed_out = 0
        slot = self._handed_out % self.slots
        scored = self._handed_out < self.slots
        self._handed_out += 1
        if self._handed_out > NO_UPDATE_WARNING * self.slots and self.ready and not self._warned_no_update:
            self._warned_no_update = True
            warnings.warn(f"ADR: {self._handed_out} episodes since iteration {self.iteration}'s batch of {self.slots} "
                          f"settings was proposed, and it has been complete for a while: nothing calls "
                          f"loop.update(policy). With stable-baselines3 pass ADRCallback(loop) to model.learn(..., "
                          f"callback=...); otherwise call loop.update(policy) whenever loop.ready", stacklevel=2)
        return Setting(self.iteration, slot, self._batch.normalized[slot].copy(), self._batch.physical[slot].copy(),
                       scored)

    def observe(self, setting: Setting, trajectory: Trajectory) -> None:
        """A finished episode that ran with ``setting``; extra episodes and stale batches are not kept."""
        if not setting.scored or setting.iteration != self.iteration or self._batch is None:
            return
        if trajectory.obs.shape[1:] != (self.obs_dim,) or trajectory.actions.shape[1:] != (self.act_dim,):
            raise ADRError(f"an episode of observations {trajectory.obs.shape[1:]} and actions "
                           f"{trajectory.actions.shape[1:]}; the loop expects ({self.obs_dim},) and ({self.act_dim},)")
        if trajectory.length > 0:
            self._episodes.setdefault(setting.slot, trajectory)

    @property
    def ready(self) -> bool:
        """Every slot of the open batch has a finished episode: time for ``update``."""
        return self._batch is not None and len(self._episodes) == self.slots

    def update(self, policy: Policy | None = None, exploration_noise: float | None = None) -> dict[str, float]:
        """Reference episodes (ADR) with ``policy``, the discriminator's rewards, the particles' step; next batch.

        ``policy`` should act as the learner does in its own episodes (e.g. SB3's ``predict(obs,
        deterministic=False)``), so that the discriminator sees dynamics, not behaviour; ``exploration_noise``
        adds Gaussian noise to it (default: the config's ``reference_noise``; 0 for a policy that samples itself)."""
        if not self.ready:
            raise ADRError(f"update() needs a finished episode for each of the {self.slots} slots of the batch; "
                           f"have {sorted(self._episodes)}")
        if self.learns and policy is None:
            raise ADRError("ADR's update needs the learner's current policy (obs -> action) for the reference "
                           "episodes")
        noise = self.config.reference_noise if exploration_noise is None else float(exploration_noise)
        self._steps.policy, self._steps.noise = policy, noise
        result = self._engine.run_one()  # propose (the open batch), roll out (+ reference), feedback
        assert result is not None  # in this process the feedback always comes
        metrics = dict(result.discriminator_metrics)
        if result.reference:
            metrics["reference_return_mean"] = float(np.mean([t.episode_return for t in result.reference]))
        metrics.update(result.sampler_metrics)
        if result.rewards is not None:
            metrics["sampler_reward_mean"] = float(result.rewards.mean())
        metrics["return_mean"] = float(np.mean([t.episode_return for t in result.randomized]))
        metrics["iteration"] = float(result.iteration)
        self._batch, self._episodes = None, {}
        return metrics

    def _reference_episode(self, policy: Policy, slot: int, noise: float, iteration: int) -> Trajectory:
        assert self.reference_env is not None
        return rollout(self.reference_env, policy, params=self.space.reference(),
                       params_normalized=self.space.reference_normalized(), kind="reference", iteration=iteration,
                       slot=slot, run_seed=self.config.seed, exploration_noise=noise,
                       max_steps=self.config.rollout_max_steps)

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:
        import torch

        batch = None if self._batch is None else {"normalized": torch.from_numpy(self._batch.normalized.copy()),
                                                  "physical": torch.from_numpy(self._batch.physical.copy())}
        return {"loop_format": LOOP_FORMAT, "env_id": self.config.env_id, "space": self.space.to_dict(),
                "obs_dim": self.obs_dim, "act_dim": self.act_dim, "sampler_kind": self.config.sampler,
                "seed": self.config.seed,
                "iteration": self.iteration, "sampler": self.sampler.state_dict(),
                "discriminator": None if self.discriminator is None else self.discriminator.state_dict(),
                "batch": batch}

    def save(self, path: str | Path) -> Path:
        """The loop's state (particles, discriminator, iteration, the batch in progress) to a checkpoint file,
        written atomically; ``load`` continues from it with the same next proposals."""
        from .base.checkpoint import save_checkpoint

        return save_checkpoint(path, self.state_dict())

    def load(self, path: str | Path) -> None:
        """Continue from a file written by ``save`` (read with ``weights_only=True``)."""
        from .base.checkpoint import CheckpointError, load_checkpoint

        try:
            self.load_state_dict(load_checkpoint(path))
        except CheckpointError as error:
            raise ADRError(str(error)) from None

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("loop_format") != LOOP_FORMAT:
            raise ADRError(f"not an ADR loop state (loop_format {state.get('loop_format')!r}; this build reads "
                           f"{LOOP_FORMAT})")
        found = (state["env_id"], state["obs_dim"], state["act_dim"], state["sampler_kind"], state.get("seed"))
        wanted = (self.config.env_id, self.obs_dim, self.act_dim, self.config.sampler, self.config.seed)
        if found != wanted or state["space"] != self.space.to_dict():
            raise ADRError(f"an ADR loop state of (env, obs, act, sampler, seed) = {found} (or another space); this "
                           f"loop is {wanted} (the seed drives the reference episodes: build the loop from the same "
                           f"config)")
        self.sampler.load_state_dict(state["sampler"])
        if self.discriminator is not None:
            self.discriminator.load_state_dict(state["discriminator"])
        self.iteration = int(state["iteration"])
        batch = state["batch"]
        self._batch = None if batch is None else Proposals(batch["normalized"].numpy().copy(),
                                                           batch["physical"].numpy().copy())
        self._handed_out, self._episodes = 0, {}


class LearnerDrivenSteps:
    """The engine's steps (``engine.steps.Steps``) when the learner drives: the iteration's settings are the batch
    the loop handed out, its randomized rollouts the learner's own episodes of that batch, its reference rollouts one
    per slot with the learner's policy (ADR), its feedback the discriminator's rewards (boundary ADR: the episodes'
    task scores) and the sampler's step. Nothing to publish: the learner holds its own weights."""

    def __init__(self, loop: ADRLoop) -> None:
        self.loop = loop
        self.policy: Policy | None = None  # set by ADRLoop.update for the iteration it runs
        self.noise = 0.0

    @property
    def sampler_learns(self) -> bool:
        return feedback_path(self.loop.sampler) != "none"

    def propose(self, k: int) -> Proposals:
        assert self.loop._batch is not None
        return self.loop._batch

    def roll_out(self, k: int, proposals: Proposals, min_version: int) -> Rollouts:
        loop = self.loop
        randomized = [loop._episodes[slot] for slot in range(loop.slots)]
        reference = []
        if loop.learns:
            assert self.policy is not None
            reference = [loop._reference_episode(self.policy, slot, self.noise, k) for slot in range(loop.slots)]
        return Rollouts(randomized, reference)

    def publish_weights(self) -> None:
        """Nothing to send: the learner holds its weights."""

    def feedback(self, k: int, rollouts: Rollouts) -> Feedback:
        loop = self.loop
        rewards: np.ndarray | None = None
        discriminator_metrics: dict[str, float] = {}
        if loop.learns:
            assert loop.discriminator is not None
            rewards, discriminator_metrics = score_then_train(loop.discriminator, rollouts.randomized,
                                                              rollouts.reference)
        rewards = sampler_rewards(loop.sampler, rollouts.randomized, rewards)
        return Feedback(rewards, update_sampler(loop.sampler, rewards), discriminator_metrics)
