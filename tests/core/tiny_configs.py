"""A tiny run configuration shared by the trainer and checkpoint tests."""
from __future__ import annotations

from adr_core.training.config import TrainConfig


def tiny_config(**overrides) -> TrainConfig:
    """Paper algorithm, small sizes: 3 particles, 64-64 agent, updates from step 200, short discriminator phase."""
    data = {"env_id": "adr/LunarLander-v0", "seed": 7, "total_agent_steps": 1200, "progress": False,
            "tensorboard": False, "checkpoint_every": 100, "keep_checkpoint_every": 0,
            "svpg": {"num_particles": 3},
            "agent": {"hidden_sizes": [64, 64], "batch_size": 32, "learning_starts": 200, "buffer_capacity": 5000},
            "discriminator": {"steps_per_transition": 0.05}}
    for key, value in overrides.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return TrainConfig.from_dict(data)
