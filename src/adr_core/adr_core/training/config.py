"""Typed configuration of a training run; defaults are the paper's. One YAML file per experiment overrides them.

YAML layout (every key optional)::

    env_id: adr/LunarLander-v0
    sampler: adr
    agent: {batch_size: 1000, ...}
    svpg: {num_particles: 10, ...}
    discriminator: {learning_rate: 0.0002, ...}

Unknown keys, wrong types and out-of-range values raise ``ConfigError`` naming the key.
"""
from __future__ import annotations

import contextvars
import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..agents.config import AgentConfig
from ..base.fields import option
from ..discriminator import DiscriminatorConfig
from ..samplers import (
    Sampler,
    SamplerBuild,
    SamplerError,
    SamplerRecord,
    import_sampler_modules,
    resolve_options,
    sampler_record,
    sampler_records,
)
from ..samplers.boundary import BoundaryConfig
from ..samplers.svpg import SVPGConfig
from ..yaml_files import read_yaml_mapping, write_yaml

if TYPE_CHECKING:
    from ..base.goal_layout import GoalLayout
    from ..randomization import RandomizationSpace


class ConfigError(ValueError):
    """A configuration value or key that cannot be used; the message names it."""


# Set while a config that a file holds is built (a checkpoint's, a run's config.yaml): names the file. Its env_modules
# and sampler_modules are then imported only when the user allowed them (``TrainConfig.from_saved``).
_SAVED_SOURCE: contextvars.ContextVar[str | None] = contextvars.ContextVar("saved_config_source", default=None)




@dataclass
class TrainConfig:
    env_id: str = option("adr/LunarLander-v0", "Randomized environment: a registered id (the paper's "
                                               "adr/LunarLander-v0, adr/Pusher3DOF-v0, adr/ErgoReacher-v0, "
                                               "adr/ErgoPusher-v0, or one a module of env_modules registers).")
    env_modules: tuple[str, ...] = option((), "Modules to import before env_id is looked up, in every process of the "
                                              "run: they register envs of their own (adr_core.envs.register_env; "
                                              "docs/environments.md 'Adding an env').")
    space: str | None = option(None, "Randomization space: null = the env's packaged space; a packaged variant "
                                     "(e.g. 'ErgoReacher-v0-sim2real': + action latency, joint-sensor noise, "
                                     "backlash, servo speed cap) or a YAML file with the env's dimensions and any "
                                     "of its optional ones (docs/environments.md).")
    sampler: str = option("adr", "Where environment parameters come from: " + "; ".join(
        f"'{r.kind}'{'' if r.method is None else f' (method {r.method})'}: {r.description}" for r in sampler_records())
        + "; or one a module of sampler_modules registers (docs/algorithm.md, 'Samplers').")
    sampler_modules: tuple[str, ...] = option((), "Modules to import before `sampler` is looked up, in every process "
                                                  "of the run: they register samplers of their own "
                                                  "(adr_core.samplers.register_sampler).")
    sampler_options: dict[str, Any] = option({}, "Options of samplers that have their own keys (learnability, "
                                                  "alp_gmm, plug-ins), as a mapping: e.g. {uniform_share: 0.3}; "
                                                  "unknown keys and bad values are refused. The paper's ADR reads "
                                                  "svpg.*, boundary_adr boundary.*.")
    fixed_range: str = option("hard", "Named range of the space used by sampler 'fixed' (LunarLander 'hard' = "
                                      "main engine strength [8, 11], the paper's oracle).")
    seed: int = option(0, "Run seed; agent, sampler, discriminator and every rollout derive their randomness from it.")
    total_agent_steps: int = option(1_000_000, "Budget: stop once the agent has stored this many steps (paper: 1M "
                                               "randomized steps). Reference rollouts count only with "
                                               "learn_from_reference.")
    learn_from_reference: bool = option(False, "ADR: the agent also stores (and learns from) the reference rollouts "
                                               "Algorithm 1 collects for the discriminator; the paper stores the "
                                               "randomized ones only. No effect for samplers without reference "
                                               "rollouts (udr, baseline, fixed).")
    concurrent_learning: bool = option(False, "adr-train, ADR: train the discriminator in a second thread while "
                                              "the agent takes its gradient steps. Both draw from their own "
                                              "generators, so every result is the sequential order's, bit for bit; "
                                              "on >= 2 cores with torch_threads 1 it can hide the discriminator's "
                                              "time (the node graph runs them in separate processes anyway).")
    max_episode_steps: int | None = option(None, "Episode time limit; null = the environment's own (LunarLander 1000, "
                                                 "the others 100, as in the paper).")
    rollout_max_steps: int | None = option(None, "Cut training rollouts (randomized and reference) after this many "
                                                 "steps, as a time-limit truncation (bootstrapped, not terminal); "
                                                 "evaluation keeps max_episode_steps. null = no cut.")
    reference_exploration_noise: float | None = option(
        None, "Action noise std in reference rollouts; null = same as agent.exploration_noise (the paper rolls out "
              "'the same policy' in both; the published code used 0 for reference rollouts).")
    reward_bound_per_step: float | None = option(
        None, "Node graph: a trajectory received with a reward beyond +- this in one step is refused by the trainer "
              "and the discriminator (a forged or corrupted message); null = the env's bound "
              "(adr_core.plausibility: LunarLander 1000, the robot envs 100).")
    device: str = option("cpu", "Torch device of the agent and discriminator: 'cpu', 'cuda' or 'auto' (CUDA when "
                                "available). SVPG particles and rollouts always run on the CPU.")
    torch_threads: int = option(1, "torch.set_num_threads for the run; 0 = leave torch's default (all cores). "
                                   "1 by default: the node graph equals adr-train bit for bit only when every "
                                   "process computes with the same thread count, and its helper nodes run 1.")
    flush_denormals: bool = option(True, "Compute floats below 1.2e-38 as 0 (torch.set_flush_denormal) in every "
                                         "process of the run: x86 CPUs are ~100x slower on such numbers, which "
                                         "Adam's moments of dead units decay into (results/learner/README.md); "
                                         "false: the arithmetic of runs made before 2026-11-27.")
    checkpoint_every: int = option(10, "Checkpoint every this many iterations and at the end (adr-train: "
                                       "checkpoints/latest.pt; the node graph: checkpoints/latest.json and one "
                                       "file per node).")
    checkpoint_every_s: float = option(60.0, "Also checkpoint after the first completed iteration and whenever this "
                                             "many seconds have passed since the last checkpoint, so a killed "
                                             "trainer loses at most about this much work; 0 = only every "
                                             "checkpoint_every iterations.")
    keep_checkpoint_every: int = option(100, "Also keep checkpoints/iter_<n>.pt every this many iterations; 0 = never.")
    evaluate_every: int = option(10, "Every this many iterations evaluate the deterministic policy on the "
                                     "'reference' setting and the space's 'hard' range and append to "
                                     "<out>/evaluation.csv (learning curves for adr-report); 0 = never.")
    evaluate_every_steps: int = option(0, "Evaluate instead at the first iteration boundary at or past every "
                                          "multiple of this many agent steps; 0 = use evaluate_every.")
    evaluate_episodes: int = option(5, "Episodes per evaluated setting of the periodic evaluation.")
    evaluate_settings: tuple[str, ...] = option(("reference", "hard"), "Settings of the periodic evaluation: "
                                                "'reference' and named ranges of the env's space (e.g. 'hard').")
    early_stop_every_steps: int = option(0, "Early stop: at the first iteration boundary at or past every multiple "
                                            "of this many agent steps, play early_stop_episodes deterministic "
                                            "episodes at the reference setting and end the run once the policy "
                                            "meets the rule below (check time counts as training time; rows in "
                                            "<out>/early_stop.csv). 0 = never: the run uses its whole budget.")
    early_stop_episodes: int = option(30, "Early stop: episodes per check.")
    early_stop_solved_fraction: float = option(0.95, "Early stop: the solved fraction the check needs (the env's own "
                                                     "success rule: LunarLander return > 200).")
    early_stop_return_mean: float | None = option(None, "Early stop: also a mean return of at least this; null = "
                                                        "the solved fraction alone.")
    early_stop_confirm_episodes: int = option(0, "Early stop: a check that meets the rule is confirmed on this many "
                                                 "fresh reference episodes (initial states no check played before), "
                                                 "which must meet it too; 0 = no confirmation (docs/algorithm.md, "
                                                 "'Early stop').")
    early_stop_confirm_solved_fraction: float | None = option(
        None, "Early stop: the solved fraction the confirmation needs; null = early_stop_solved_fraction.")
    early_stop_range_episodes: int = option(
        0, "Early stop on the randomized range: a check that meets the reference rule also plays this many episodes "
           "at points drawn uniformly over the space's training range (one point each; the confirmation on fresh "
           "ones), which must meet early_stop_range_solved_fraction; 0 = the reference alone.")
    early_stop_range_solved_fraction: float = option(0.85, "Early stop: the solved fraction over the training range.")
    early_stop_hard_episodes: int = option(
        0, "Early stop on the hard end: as early_stop_range_episodes, at points drawn uniformly within the space's "
           "named range 'hard' (LunarLander: main engine 8-11); 0 = not checked.")
    early_stop_hard_solved_fraction: float = option(0.85, "Early stop: the solved fraction over the hard range.")
    tensorboard: bool = option(True, "Write TensorBoard scalars to <out>/tb.")
    progress: bool = option(True, "Show a progress bar (tqdm) with ETA and live metrics.")
    agent: AgentConfig = field(default_factory=AgentConfig, metadata={"help": "Agent (DDPG/TD3) hyperparameters."})
    svpg: SVPGConfig = field(default_factory=SVPGConfig, metadata={"help": "SVPG particle hyperparameters."})
    discriminator: DiscriminatorConfig = field(default_factory=DiscriminatorConfig,
                                               metadata={"help": "Discriminator rewarder hyperparameters."})
    boundary: BoundaryConfig = field(default_factory=BoundaryConfig,
                                     metadata={"help": "Boundary ADR (sampler boundary_adr) hyperparameters."})

    # fields that may differ when a run is resumed
    RUNTIME_FIELDS: typing.ClassVar[tuple[str, ...]] = (
        "total_agent_steps", "device", "torch_threads", "checkpoint_every", "checkpoint_every_s",
        "keep_checkpoint_every", "tensorboard", "progress", "evaluate_every", "evaluate_every_steps",
        "evaluate_episodes", "evaluate_settings",
        "early_stop_every_steps", "early_stop_episodes", "early_stop_solved_fraction", "early_stop_return_mean",
        "early_stop_confirm_episodes", "early_stop_confirm_solved_fraction", "early_stop_range_episodes",
        "early_stop_range_solved_fraction", "early_stop_hard_episodes", "early_stop_hard_solved_fraction")

    def __post_init__(self) -> None:
        from ..envs import env_record, import_env_modules
        from ..randomization import RandomizationError

        nested: tuple[tuple[str, type], ...] = (
            ("agent", AgentConfig), ("svpg", SVPGConfig), ("discriminator", DiscriminatorConfig),
            ("boundary", BoundaryConfig))
        for name, kind in nested:  # TrainConfig(svpg={"num_particles": 5}) is read like the YAML mapping
            value = getattr(self, name)
            if isinstance(value, Mapping):
                setattr(self, name, _build(kind, value, f"{name}."))
            elif not isinstance(value, kind):
                raise ConfigError(f"{name} must be a mapping of its keys or {kind.__name__}(...), got "
                                  f"{type(value).__name__}")
        self.env_modules = tuple(self.env_modules)
        saved = _SAVED_SOURCE.get()
        try:
            if saved is not None:  # a file's modules: only those the user named (a file never makes a tool import code)
                _check_saved_modules(self.env_modules, "env", saved)
            import_env_modules(self.env_modules)
        except RandomizationError as error:
            raise ConfigError(str(error)) from None
        try:
            env_record(self.env_id)
        except RandomizationError as error:
            raise ConfigError(f"env_id: {error}") from None
        if self.space is not None:
            self._check_space()
        if (self.agent.her_future or self.agent.shaping_weight) and self.goal_layout is None:
            raise ConfigError(f"agent.her_future and agent.shaping_weight need an env with a goal layout (its "
                              f"observation names goal, achieved goal and effector); {self.env_id} has none")
        if self.agent.shaping_weight and self.goal_layout is not None and self.goal_layout.effector is None:
            raise ConfigError(f"agent.shaping_weight needs an effector in {self.env_id}'s goal layout")
        self.sampler_modules = tuple(self.sampler_modules)
        if not isinstance(self.sampler_options, Mapping):
            raise ConfigError(f"sampler_options must be a mapping of the sampler's keys, got {self.sampler_options!r}")
        try:
            if saved is not None:
                _check_saved_modules(self.sampler_modules, "sampler", saved)
            import_sampler_modules(self.sampler_modules)
            # the sampler's record, resolved and its options checked once: make_sampler builds from these
            record = self.sampler_record
            self.__dict__["_sampler_options"] = resolve_options(record, self.sampler_options)
        except SamplerError as error:
            raise ConfigError(f"sampler: {error}" if "unknown sampler" in str(error) else str(error)) from None
        if self.device not in ("cpu", "cuda", "auto") and not self.device.startswith("cuda:"):
            raise ConfigError(f"device must be 'cpu', 'cuda', 'cuda:<i>' or 'auto', got {self.device!r}")
        if not 0 <= self.seed < 2**31:
            raise ConfigError(f"seed must be in [0, 2**31 - 1], got {self.seed}")
        for name in ("total_agent_steps", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.evaluate_episodes < 1:
            raise ConfigError(f"evaluate_episodes must be >= 1, got {self.evaluate_episodes}")
        if not self.checkpoint_every_s >= 0:
            raise ConfigError(f"checkpoint_every_s must be >= 0, got {self.checkpoint_every_s}")
        for name in ("torch_threads", "keep_checkpoint_every", "evaluate_every", "evaluate_every_steps"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.early_stop_every_steps < 0 or self.early_stop_episodes < 1:
            raise ConfigError(f"early_stop_every_steps must be >= 0 and early_stop_episodes >= 1, got "
                              f"{self.early_stop_every_steps} and {self.early_stop_episodes}")
        for name in ("early_stop_range_episodes", "early_stop_hard_episodes"):
            if not 0 <= getattr(self, name) <= 1000:
                raise ConfigError(f"{name} must be in [0, 1000], got {getattr(self, name)}")
        for name in ("early_stop_solved_fraction", "early_stop_confirm_solved_fraction",
                     "early_stop_range_solved_fraction", "early_stop_hard_solved_fraction"):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], got {value}")
        if not 0 <= self.early_stop_confirm_episodes <= 1000:
            raise ConfigError(f"early_stop_confirm_episodes must be in [0, 1000], got "
                              f"{self.early_stop_confirm_episodes}")
        if self.max_episode_steps is not None and self.max_episode_steps < 1:
            raise ConfigError(f"max_episode_steps must be >= 1 or null, got {self.max_episode_steps}")
        if self.rollout_max_steps is not None and self.rollout_max_steps < 1:
            raise ConfigError(f"rollout_max_steps must be >= 1 or null, got {self.rollout_max_steps}")
        if self.reference_exploration_noise is not None and self.reference_exploration_noise < 0:
            raise ConfigError(f"reference_exploration_noise must be >= 0, got {self.reference_exploration_noise}")
        if record.check_space is not None:
            from ..randomization import space_of

            try:
                record.check_space(self._options_of(record), lambda: space_of(self.env_id, self.space))
            except SamplerError as error:
                raise ConfigError(str(error)) from None

    def _check_space(self) -> None:
        from ..randomization import RandomizationError, load_space

        try:
            space = load_space(str(self.space))
        except RandomizationError as error:
            raise ConfigError(f"space: {error}") from None
        if space.env_id != self.env_id:
            raise ConfigError(f"space {self.space!r} is a space of {space.env_id}, not of env_id {self.env_id}")

    # ---------------------------------------------------------------- derived values
    @property
    def goal_layout(self) -> GoalLayout | None:
        """The env's goal layout (its record's), for the agent's goal relabelling and shaping; None: not a goal env."""
        from ..envs import env_record

        return env_record(self.env_id).goal_layout

    def env_kwargs(self) -> dict[str, Any]:
        """``make_env`` keyword arguments of this run's envs (episode limit, randomization space)."""
        kwargs: dict[str, Any] = {}
        if self.max_episode_steps is not None:
            kwargs["max_episode_steps"] = self.max_episode_steps
        if self.space is not None:
            kwargs["space"] = self.space
        return kwargs

    @property
    def num_particles(self) -> int:
        """The paper's N when ``svpg.num_particles`` is null (the env record's ``paper_particles``: 10 for
        LunarLander, 15 for the other environments)."""
        if self.svpg.num_particles is not None:
            return self.svpg.num_particles
        from ..envs import env_record

        return env_record(self.env_id).paper_particles

    @property
    def reference_noise(self) -> float:
        noise = self.reference_exploration_noise
        return self.agent.exploration_noise if noise is None else noise

    def resolved_svpg(self) -> SVPGConfig:
        return dataclasses.replace(self.svpg, num_particles=self.num_particles)

    @property
    def sampler_record(self) -> SamplerRecord:
        """The record of this run's sampler (``sampler``): every fact about it (samplers/registry.py)."""
        return sampler_record(self.sampler)

    @property
    def proposals_per_iteration(self) -> int:
        """Settings every sampler proposes per iteration: the paper's particles x rollout length (the same agent
        data rate for every method)."""
        return self.num_particles * self.svpg.rollout_length

    def _options_of(self, record: SamplerRecord) -> Any:
        """What the sampler's ``build`` gets as its options: the ``sampler_options`` checked when this config was
        made, or the config section its record names (``svpg`` with the particle count resolved)."""
        section = record.config_section
        if section is None:
            return self.__dict__["_sampler_options"]
        return self.resolved_svpg() if section == "svpg" else getattr(self, section)

    def make_sampler(self, space: RandomizationSpace, seed: int) -> Sampler:
        """This run's sampler over ``space`` (the one place a config becomes a sampler; ``seed``: the component's
        seed, ``component_seed(run seed, "sampler")`` in every runner): its record's ``build``."""
        n, record = self.proposals_per_iteration, self.sampler_record
        sampler = record.build(SamplerBuild(space, n, int(seed), self._options_of(record), self.fixed_range))
        if sampler.num_proposals != n:  # RunSpec tells every node n without building a sampler
            raise SamplerError(f"sampler {self.sampler!r} proposes {sampler.num_proposals} settings per iteration; "
                               f"its build must honour num_proposals ({n})")
        return sampler

    # ---------------------------------------------------------------- (de)serialization
    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = _plain(dataclasses.asdict(self))
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> TrainConfig:
        config: TrainConfig = _build(cls, data or {}, "")
        return config

    @classmethod
    def from_yaml(cls, path: str | Path) -> TrainConfig:
        return cls.from_dict(read_yaml_mapping(path, "config", ConfigError))

    @classmethod
    def from_saved(cls, data: Mapping[str, Any] | None, source: str) -> TrainConfig:
        """The config a file holds that the user did not name as the run's config: a checkpoint's, a run's
        config.yaml read on resume. Each module of its ``env_modules`` and ``sampler_modules`` must be imported already
        (by the user's own config or command line) or allowed by the user (``--env-modules``, ``$ADR_ENV_MODULES``, or
        named on the command line); any other is one line naming it and how to allow it, before anything of it runs.
        ``with_overrides`` of such a config keeps the rule."""
        token = _SAVED_SOURCE.set(source)
        try:
            config = cls.from_dict(data)
        finally:
            _SAVED_SOURCE.reset(token)
        setattr(config, "_saved_source", source)  # noqa: B010 - not a field: what with_overrides keeps
        return config

    @classmethod
    def from_saved_yaml(cls, path: str | Path) -> TrainConfig:
        return cls.from_saved(read_yaml_mapping(path, "config", ConfigError), str(path))

    def to_yaml(self, path: str | Path) -> None:
        write_yaml(path, self.to_dict())

    def differences(self, other: TrainConfig, ignore: tuple[str, ...] = ()) -> list[str]:
        """Dotted keys whose values differ (``ignore``: top-level keys to skip)."""
        a, b = _flatten(self.to_dict()), _flatten(other.to_dict())
        return [k for k in sorted(set(a) | set(b)) if k.split(".")[0] not in ignore and a.get(k) != b.get(k)]

    def with_overrides(self, overrides: Mapping[str, Any]) -> TrainConfig:
        """A copy with dotted keys replaced, e.g. ``{"agent.batch_size": 256}``; validated like YAML."""
        data = self.to_dict()
        for dotted, value in overrides.items():
            node = data
            keys = dotted.split(".")
            for key in keys[:-1]:
                if not isinstance(node.get(key), dict):
                    raise ConfigError(f"unknown config key {dotted!r}")
                node = node[key]
            if keys[-1] not in node and keys[:-1] != ["sampler_options"]:  # a sampler's own keys: its options
                raise ConfigError(f"unknown config key {dotted!r}")
            node[keys[-1]] = value
        saved = getattr(self, "_saved_source", None)
        if saved is None:
            return TrainConfig.from_dict(data)
        from ..envs import allow_env_modules

        # modules named in the overrides come from the command line; the file's own stay refused unless allowed
        for key in ("env_modules", "sampler_modules"):
            if isinstance(overrides.get(key), (list, tuple)):
                allow_env_modules(str(m) for m in overrides[key])
        return TrainConfig.from_saved(data, saved)


def _check_saved_modules(modules: tuple[str, ...], what: str, source: str) -> None:
    """The env or sampler modules a saved config names (``TrainConfig.from_saved``): each must be imported already
    (the user's own config or command line named it) or allowed by the user (``--env-modules``, ``$ADR_ENV_MODULES``,
    ``adr_core.envs.allow_env_modules``); otherwise one line names the refused ones, before anything of them runs."""
    import sys

    from ..envs.registry import ALLOW_VARIABLE, allowed_env_modules

    refused = [m for m in modules if m not in sys.modules and m not in allowed_env_modules()]
    if refused:
        raise ConfigError(
            f"{source} names {what} module(s) {refused} to import; a file does not make this tool import code: if you "
            f"trust it, name them yourself with --env-modules {' '.join(refused)} (or "
            f"{ALLOW_VARIABLE}={','.join(refused)})")


def field_docs(cls: type = TrainConfig, prefix: str = "") -> list[tuple[str, Any, str, Any]]:
    """(dotted name, type, help, default) of every leaf field, in declaration order."""
    out = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        kind = hints[f.name]
        if dataclasses.is_dataclass(kind):
            out.extend(field_docs(cast(type, kind), f"{prefix}{f.name}."))
        else:
            default = (f.default if f.default is not dataclasses.MISSING
                       else f.default_factory())  # type: ignore[operator]
            out.append((prefix + f.name, kind, f.metadata.get("help", ""), default))
    return out


# ------------------------------------------------------------------------------------------ helpers
def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def _build(cls: type, data: Mapping[str, Any], prefix: str) -> Any:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{prefix.rstrip('.') or 'config'} must be a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(
            f"unknown config key(s) {[prefix + k for k in unknown]}; known: {sorted(prefix + n for n in names)}"
        )
    kwargs = {}
    for name, value in data.items():
        kind = hints[name]
        kwargs[name] = (_build(cast(type, kind), value, f"{prefix}{name}.") if dataclasses.is_dataclass(kind)
                        else _coerce(value, kind, prefix + name))
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except ValueError as exc:  # the dataclass's own range checks name the key already
        raise ConfigError(str(exc)) from None


def _coerce(value: Any, kind: Any, key: str) -> Any:
    """Check a YAML scalar against the field's annotation (int, float, bool, str, Literal, Optional, tuple[int])."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(value, inner[0], key)
    if origin is typing.Literal:
        if value not in args:
            raise ConfigError(f"{key} must be one of {list(args)}, got {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{key} must be a list, got {value!r}")
        return tuple(_coerce(v, args[0], f"{key}[{i}]") for i, v in enumerate(value))
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, got {value!r}")
        return value
    if kind is int:
        if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, float) and value.is_integer())):
            raise ConfigError(f"{key} must be an integer, got {value!r}")
        return int(value)
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key} must be a number, got {value!r}")
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key} must be a string, got {value!r}")
        return value
    return value
