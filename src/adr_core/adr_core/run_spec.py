"""The resolved specification of a run, computed once and handed to every process of it.

    spec = RunSpec.resolve(config)          # builds the env once to read its shapes and space
    text = spec.to_json()                   # what the launcher passes to every node (parameter ``run_spec``)
    spec = RunSpec.from_json(text)          # a node: no env, no sampler built just to learn a shape

It holds the run's config (every key resolved, e.g. the paper's particle count), the env id, the randomization
space, observation and action sizes, the proposals per iteration, whether the sampler learns from rewards (ADR:
reference rollouts, a discriminator) and the run id. ``version`` changes whenever the fields do; a node refuses a spec
of another version, naming both.

The run id (``new_run_id``: chosen by the launcher at every start, resume included) is carried in every message and
service call of the run; a node refuses what carries another. Messages of an earlier launch, of a neighbour's run on
the same DDS domain or a replay of this run's own traffic under another id never get into it. A node started on its
own (no spec) has the empty run id and talks to others that have it.
"""
from __future__ import annotations

import dataclasses
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

import numpy as np

from .randomization import RandomizationSpace
from .training.config import ConfigError, TrainConfig

SPEC_VERSION = 3
RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def new_run_id() -> str:
    """12 random hex digits: distinct for every launch (2^48 values)."""
    return secrets.token_hex(6)


def check_run_id(run_id: str) -> str:
    """``run_id`` if it is 1-64 letters, digits, '_' or '-'; ConfigError otherwise."""
    if not RUN_ID.fullmatch(run_id):
        raise ConfigError(f"run id {run_id!r} must be 1-64 letters, digits, '_' or '-'")
    return run_id


@dataclass(frozen=True)
class RunSpec:
    config: dict[str, Any]  # TrainConfig.to_dict() with svpg.num_particles resolved
    env_id: str
    space: dict[str, Any]  # RandomizationSpace.to_dict()
    obs_dim: int
    act_dim: int
    slots: int  # proposals (rollout slots) per iteration
    learns_from_rewards: bool  # ADR: reference rollouts, discriminator rewards
    learns_from_outcomes: bool = False  # boundary ADR: the trainer sends each slot's task score to the sampler
    run_id: str = ""  # carried in every message of the run (new_run_id); empty: a node started on its own
    version: int = SPEC_VERSION

    @classmethod
    def resolve(cls, config: TrainConfig) -> RunSpec:
        from .envs import make_env

        resolved = dataclasses.replace(config, svpg=config.resolved_svpg())
        env = make_env(config.env_id, **config.env_kwargs())
        try:
            space = env.unwrapped.randomization_space  # type: ignore[attr-defined]
            obs_dim = int(np.prod(env.observation_space.shape or ()))
            act_dim = int(np.prod(env.action_space.shape or ()))
        finally:
            env.close()
        feedback = config.sampler_record.feedback  # what its update takes: no sampler is built to learn it
        return cls(config=resolved.to_dict(), env_id=config.env_id, space=space.to_dict(), obs_dim=obs_dim,
                   act_dim=act_dim, slots=config.proposals_per_iteration,
                   learns_from_rewards=feedback == "discriminator", learns_from_outcomes=feedback == "outcomes")

    def train_config(self) -> TrainConfig:
        return TrainConfig.from_dict(self.config)

    def randomization_space(self) -> RandomizationSpace:
        return RandomizationSpace.from_dict(self.space)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunSpec:
        try:
            data = json.loads(text)
        except ValueError as error:
            raise ConfigError(f"run_spec is not JSON: {error}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"run_spec must be a JSON object, got {type(data).__name__}")
        if data.get("version") != SPEC_VERSION:
            raise ConfigError(f"run_spec of version {data.get('version')!r}; this build reads version {SPEC_VERSION} "
                              f"(start every node of a run from the same checkout)")
        fields = {f.name for f in dataclasses.fields(cls)}
        if set(data) != fields:
            raise ConfigError(f"run_spec fields {sorted(data)}; expected {sorted(fields)}")
        spec = cls(**data)
        if spec.run_id:
            check_run_id(spec.run_id)
        spec.train_config()  # validates the config
        spec.randomization_space()
        return spec
