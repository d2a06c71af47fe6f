"""benchmarks/autograd_overhead.py compares like with like: its hand-written critic gradients are autograd's."""
from __future__ import annotations

import argparse

import pytest
import torch

from benchmarks.autograd_overhead import CriticStep, parse_cell


@pytest.mark.parametrize("cell", [(10, 64, 256), (14, 128, 128), (3, 5, 7)])
def test_the_hand_written_gradients_equal_autograds(cell: tuple[int, int, int]) -> None:
    critic = CriticStep(*cell, seed=3)
    for _ in range(3):  # after Adam steps too (the ReLU masks change)
        for auto, manual in zip(critic.autograd_grads(), critic.manual_grads()):
            assert auto.shape == manual.shape
            torch.testing.assert_close(manual, auto, rtol=1e-4, atol=1e-6)
        critic.manual_step()


def test_a_malformed_cell_is_refused_naming_it() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="10:64"):
        parse_cell("10:64")
    with pytest.raises(argparse.ArgumentTypeError, match="at least 1"):
        parse_cell("10:0:256")
