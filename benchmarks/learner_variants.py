"""Candidate speed-ups of the adr_core agent update, applied from outside (adr_core is not changed):

- ``presampled``: batched replay sampling: one ``randint`` and one ``index_select`` for ``chunk`` gradient steps
  instead of one per step. For DDPG the replay indices are bit-identical to ``ReplayBuffer.sample`` (the generator
  yields the same sequence whether drawn at once or in pieces); TD3 interleaves its target noise with the sampling,
  so its draws would change order.
- ``compile``: ``torch.compile`` of the actor, critic(s) and their targets (forward and, through AOTAutograd,
  backward); the optimizer steps and the soft update stay eager.
"""
from __future__ import annotations

from collections.abc import Callable

import torch

from adr_core.agents import OffPolicyAgent
from adr_core.agents.replay_buffer import Batch

NETWORK_ATTRIBUTES = ("actor", "actor_target", "critic", "critic_target", "critic1", "critic2", "critic1_target",
                      "critic2_target")


def presampled_update(agent: OffPolicyAgent, chunk: int = 64) -> Callable[[int], None]:
    """``update(n)`` with the replay rows of ``chunk`` steps gathered at once (losses not accumulated)."""
    replay, batch_size = agent.replay, agent.config.batch_size
    slices = replay._slices

    def update(n_updates: int) -> None:
        done = 0
        while done < n_updates:
            k = min(chunk, n_updates - done)
            index = torch.randint(replay.size, (k * batch_size,), generator=replay.generator).to(replay.device)
            rows = replay.storage.index_select(0, index).view(k, batch_size, replay.row_width)
            for j in range(k):
                agent._gradient_step(Batch(**{name: rows[j][:, cols] for name, cols in slices.items()}))
                agent.updates_done += 1
            done += k
    return update


def compile_networks(agent: OffPolicyAgent) -> list[str]:
    """Replace the agent's networks by ``torch.compile`` wrappers (parameters shared); returns the names compiled."""
    compiled = []
    for name in NETWORK_ATTRIBUTES:
        module = getattr(agent, name, None)
        if isinstance(module, torch.nn.Module):
            setattr(agent, name, torch.compile(module, dynamic=False))
            compiled.append(name)
    return compiled
