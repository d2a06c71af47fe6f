"""EnsembleCritic: its members are independent critics, and its cached parameter tuple follows the module's
parameters through load_state_dict and dtype/device conversions (also when torch swaps the Parameter objects)."""
from __future__ import annotations

import torch
from torch.nn import functional as F

from adr_core.agents.networks import EnsembleCritic


def member_q(critic: EnsembleCritic, member: int, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    """The member's Q computed layer by layer from the module's registered parameters."""
    x = torch.cat([obs, action], dim=-1)
    layers = list(zip(critic.weights, critic.biases))
    for i, (weight, bias) in enumerate(layers):
        x = x @ weight[member] + bias[member]
        if i < len(layers) - 1:
            x = F.relu(x)
    return x


def test_each_member_is_its_own_mlp() -> None:
    torch.manual_seed(0)
    critic = EnsembleCritic(5, 2, (16, 8), members=3)
    obs, action = torch.randn(7, 5), torch.randn(7, 2)
    q = critic(obs, action)
    assert q.shape == (3, 7, 1)
    for member in range(3):
        torch.testing.assert_close(q[member], member_q(critic, member, obs, action))


def test_forward_uses_loaded_weights() -> None:
    torch.manual_seed(1)
    critic, other = EnsembleCritic(4, 1, (8, 8)), EnsembleCritic(4, 1, (8, 8))
    obs, action = torch.randn(6, 4), torch.randn(6, 1)
    critic.load_state_dict(other.state_dict())
    torch.testing.assert_close(critic(obs, action), other(obs, action))


def test_forward_follows_a_conversion_that_swaps_parameters() -> None:
    torch.manual_seed(2)
    critic = EnsembleCritic(4, 1, (8, 8))
    before = [id(p) for p in critic.parameters()]
    previous = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(False)
    try:
        torch.__future__.set_overwrite_module_params_on_conversion(True)  # .to() makes new Parameter objects
        critic = critic.to(torch.float64)
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(False)
        torch.__future__.set_swap_module_params_on_conversion(previous)
    assert [id(p) for p in critic.parameters()] != before
    obs, action = torch.randn(3, 4, dtype=torch.float64), torch.randn(3, 1, dtype=torch.float64)
    q = critic(obs, action)
    assert q.dtype == torch.float64
    torch.testing.assert_close(q[1], member_q(critic, 1, obs, action))
