"""What a discriminator checkpoint file holds, and the checks before a run continues from one."""
from __future__ import annotations

from typing import Any

from adr_core.base.checkpoint import CheckpointError, require_keys
from adr_core.discriminator import DiscriminatorRewarder
from adr_core.training.config import ConfigError, TrainConfig

KEYS = ("iteration", "state", "env_id", "obs_dim", "act_dim", "config")


def make_payload(iteration: int, discriminator: DiscriminatorRewarder, config: TrainConfig) -> dict[str, Any]:
    """The discriminator as of the end of ``iteration`` (its state_dict is a deep copy)."""
    return {"iteration": iteration, "state": discriminator.state_dict(), "env_id": config.env_id,
            "obs_dim": discriminator.obs_dim, "act_dim": discriminator.act_dim, "config": config.to_dict()}


def restore(discriminator: DiscriminatorRewarder, payload: dict[str, Any], config: TrainConfig, source: str) -> int:
    """Load ``payload`` into ``discriminator``; returns its iteration. Raises CheckpointError naming the mismatch."""
    require_keys(payload, KEYS, source)
    found = (payload["env_id"], payload["obs_dim"], payload["act_dim"])
    expected = (config.env_id, discriminator.obs_dim, discriminator.act_dim)
    if found != expected:
        raise CheckpointError(f"{source} is for (env, obs_dim, act_dim) = {found}, this run is {expected}")
    try:  # a file's config: the modules it names are not imported
        saved = TrainConfig.from_saved(payload["config"], source)
    except ConfigError as error:
        raise CheckpointError(str(error)) from None
    differences = config.differences(saved, ignore=TrainConfig.RUNTIME_FIELDS)
    if differences:
        raise CheckpointError(f"{source} was written with a different config; differing keys: {differences}")
    try:
        discriminator.load_state_dict(payload["state"])
    except (KeyError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{source} does not fit this discriminator: {error}") from None
    return int(payload["iteration"])
